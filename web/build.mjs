// Builds the lineage explorer (/ui) and the GraphiQL page (/graphql) into one folder of static
// files that the tributary binary embeds (src/api/ui.rs).
//
//   node build.mjs            writes web/dist/
//   node build.mjs OUT_DIR    writes OUT_DIR/ (scripts/web-check builds into a temp dir and
//                             compares it with the committed web/dist/)
//
// The output is deterministic: the same sources and the same locked packages give the same bytes
// (esbuild is pinned in package-lock.json; no timestamps, absolute paths or random names). HTML
// pages reference each asset as `/ui/assets/<name>?v=<hash>`, the first 16 hex digits of the
// asset's SHA-256; the server computes the same hash, so it can let browsers cache a versioned
// URL for a year and still never serve a stale asset. Third-party licence texts are collected
// from the packages the bundles actually contain into THIRD_PARTY_NOTICES.txt.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, 'dist'));
const src = join(here, 'src');

const hash = (bytes) => createHash('sha256').update(bytes).digest('hex').slice(0, 16);

const common = {
  bundle: true,
  minify: true,
  write: false,
  metafile: true,
  format: 'iife',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  legalComments: 'none',
  absWorkingDir: here,
  logLevel: 'warning',
  charset: 'utf8',
  define: { 'process.env.NODE_ENV': '"production"' },
  banner: { js: '/*! Tributary. Third-party notices: /ui/assets/THIRD_PARTY_NOTICES.txt */' },
};

async function bundle(options) {
  const result = await esbuild.build({ ...common, ...options });
  return result;
}

// Files written, by name, and every input the bundles read (for the notices).
const files = new Map();
const inputs = new Set();
function keep(result) {
  for (const f of result.outputFiles) files.set(f.path.split('/').pop(), Buffer.from(f.contents));
  for (const i of Object.keys(result.metafile.inputs)) inputs.add(i);
}

// 1. The layout worker first: the explorer is told its versioned URL.
keep(await bundle({ entryPoints: { 'layout-worker': join(src, 'layout-worker.js') }, outdir: out }));
const workerUrl = `/ui/assets/layout-worker.js?v=${hash(files.get('layout-worker.js'))}`;

// 2. The explorer and its stylesheet.
keep(
  await bundle({
    entryPoints: { explorer: join(src, 'main.js') },
    outdir: out,
    define: { ...common.define, __LAYOUT_WORKER_URL__: JSON.stringify(workerUrl) },
  }),
);
keep(await bundle({ entryPoints: { explorer: join(src, 'style.css') }, outdir: out }));

// 3. GraphiQL with its React, and its stylesheet (fonts are inlined by the package).
keep(
  await bundle({
    entryPoints: { graphiql: join(src, 'graphiql.jsx') },
    outdir: out,
    jsx: 'automatic',
    loader: { '.css': 'css' },
  }),
);

// 4. Static files copied as they are.
for (const name of ['favicon.svg']) files.set(name, readFileSync(join(src, name)));

// 5. Notices: each package whose files went into a bundle, with its licence text.
function notices() {
  const packages = new Map();
  for (const input of inputs) {
    const m = input.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//);
    if (m) packages.set(m[1], true);
  }
  const entries = [];
  for (const dir of packages.keys()) {
    const pkg = JSON.parse(readFileSync(join(here, dir, 'package.json'), 'utf8'));
    const licenceFile = readdirSync(join(here, dir)).filter((f) => /^(licen[cs]e|copying|notice)/i.test(f)).sort();
    const texts = licenceFile.map((f) => readFileSync(join(here, dir, f), 'utf8').trim());
    const licence = typeof pkg.license === 'string' ? pkg.license : JSON.stringify(pkg.license ?? pkg.licenses);
    entries.push({ name: pkg.name, version: pkg.version, licence, texts });
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines = [
    'Third-party software bundled into the Tributary web pages (/ui and /graphql).',
    'Each package is listed with its version, its licence and the licence text it ships.',
    '',
  ];
  for (const e of entries) {
    lines.push('='.repeat(78), `${e.name} ${e.version} (${e.licence})`, '='.repeat(78));
    lines.push(e.texts.length ? e.texts.join('\n\n') : `(the package ships no licence file; its package.json says ${e.licence})`);
    lines.push('');
  }
  return Buffer.from(lines.join('\n'));
}
files.set('THIRD_PARTY_NOTICES.txt', notices());

// 6. The HTML pages, with versioned asset URLs.
function page(template) {
  let html = readFileSync(join(src, template), 'utf8');
  html = html.replace(/\{\{asset:([A-Za-z0-9_.-]+)\}\}/g, (_, name) => {
    const bytes = files.get(name);
    if (!bytes) throw new Error(`${template} references ${name}, which the build did not produce`);
    return `/ui/assets/${name}?v=${hash(bytes)}`;
  });
  return Buffer.from(html);
}
files.set('index.html', page('index.html'));
files.set('graphiql.html', page('graphiql.html'));

// Write the folder afresh, so nothing stale stays in it.
if (existsSync(out)) rmSync(out, { recursive: true });
mkdirSync(out, { recursive: true });
const names = [...files.keys()].sort();
for (const name of names) writeFileSync(join(out, name), files.get(name));

const { gzipSync } = await import('node:zlib');
const rows = names.map((n) => `${n.padEnd(26)} ${String(files.get(n).length).padStart(9)} B  ${String(gzipSync(files.get(n), { level: 9 }).length).padStart(8)} B gzipped`);
process.stderr.write(`web build: ${out}\n${rows.join('\n')}\n`);
