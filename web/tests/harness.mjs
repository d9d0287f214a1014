// The browser tests' harness: a real `tributary serve` on the store under test, tokens made with
// `tributary token create`, GraphQL requests for seeding and for the answers the page is checked
// against, and Debian's Chromium driven by playwright-core.
//
// Environment: TRIBUTARY_BIN (the binary; default $CARGO_TARGET_DIR/debug/tributary), UI_STORE
// (`embedded` or `neo4j`; Neo4j from NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD), CHROMIUM (default
// /usr/bin/chromium), UI_ARTIFACTS (where screenshots go; default tests/browser/artifacts).
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, homedir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '..', '..');
const targetDir = process.env.CARGO_TARGET_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tributary', 'target');
export const bin = process.env.TRIBUTARY_BIN || join(targetDir, 'debug', 'tributary');
export const storeKind = process.env.UI_STORE || 'embedded';
export const artifacts = resolve(process.env.UI_ARTIFACTS || join(repo, 'tests', 'browser', 'artifacts'), storeKind);
/** A suffix that keeps this run's names apart from anything else in a shared Neo4j (the embedded
 * store is a fresh one each run, and its names stay plain, as in the README's screenshot). */
export const run = storeKind === 'neo4j' ? `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}` : '';
/** `base`, with this run's suffix when there is one. */
export const tag = (base) => (run ? `${base}_${run}` : base);

function storeArgs(dataDir) {
  if (storeKind === 'neo4j') {
    if (!process.env.NEO4J_URI) throw new Error('UI_STORE=neo4j needs NEO4J_URI');
    return ['--data-dir', dataDir, '--neo4j-uri', process.env.NEO4J_URI];
  }
  return ['--data-dir', dataDir, '--neo4j-uri', ''];
}

async function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });
}

/** A `tributary serve` on a fresh data dir (embedded) or the given Neo4j, auth as asked. */
export async function startServe({ auth = 'on', dataDir = null } = {}) {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'tributary-ui-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  mkdirSync(artifacts, { recursive: true });
  const logPath = join(artifacts, `serve-${auth}-${port}.log`);
  const log = openSync(logPath, 'w');
  const child = spawn(bin, ['serve', '--listen', `127.0.0.1:${port}`, ...storeArgs(join(dir, 'data'))], {
    env: { ...process.env, TRIBUTARY_AUTH: auth, RUST_LOG: process.env.RUST_LOG || 'warn' },
    stdio: ['ignore', log, log],
  });
  let exited = null;
  child.on('exit', (code) => {
    exited = code;
  });
  for (let i = 0; i < 300; i++) {
    if (exited !== null) throw new Error(`serve exited with ${exited}: ${readFileSync(logPath, 'utf8').slice(-2000)}`);
    try {
      const r = await fetch(`${url}/readyz`);
      if (r.ok) break;
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    dir,
    logPath,
    token: (user, role) => token(dir, user, role),
    stop: async () => {
      if (exited === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `tributary token create`: a new token (its last line of output). */
export function token(dir, user, role) {
  const out = execFileSync(bin, ['token', 'create', '--user', user, '--role', role, ...storeArgs(join(dir, 'data'))], {
    env: { ...process.env, RUST_LOG: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return out.toString().trim().split('\n').pop().trim();
}

/** One GraphQL request; throws on any error in the answer unless `allowErrors`. */
export async function gql(url, tokenValue, query, variables = {}, { allowErrors = false } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (tokenValue) headers.authorization = `Bearer ${tokenValue}`;
  const r = await fetch(`${url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const body = await r.json();
  if (body.errors?.length && !allowErrors) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)} for ${query.slice(0, 200)}`);
  return allowErrors ? body : body.data;
}

/** Headless Chromium (Debian's), started the way this machine's closed network needs. */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/**
 * A browser context that records every request and console error, and refuses any request that
 * would leave the loopback interface. `token` is put in session storage first when given.
 */
export async function context(browser, { token: tokenValue = null, colorScheme = 'light', viewport = { width: 1400, height: 900 } } = {}) {
  const ctx = await browser.newContext({ viewport, colorScheme, acceptDownloads: true });
  const record = { requests: [], outside: [], consoleErrors: [], pageErrors: [] };
  await ctx.route('**/*', (route) => {
    const u = new URL(route.request().url());
    // UI_DIST (development only): the page's files from that folder instead of the binary's, so
    // that a bundle change needs no rebuild of the binary.
    if (process.env.UI_DIST && u.hostname === '127.0.0.1' && (u.pathname === '/ui' || u.pathname.startsWith('/ui/'))) {
      const name = u.pathname.startsWith('/ui/assets/') ? u.pathname.slice('/ui/assets/'.length) : 'index.html';
      const type = name.endsWith('.js') ? 'text/javascript' : name.endsWith('.css') ? 'text/css' : name.endsWith('.svg') ? 'image/svg+xml' : 'text/html; charset=utf-8';
      return route.fulfill({ status: 200, contentType: type, body: readFileSync(join(process.env.UI_DIST, name)) });
    }
    if (u.protocol === 'data:' || u.protocol === 'blob:' || u.hostname === '127.0.0.1' || u.hostname === 'localhost') return route.fallback();
    record.outside.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  if (tokenValue) {
    await ctx.addInitScript((t) => {
      try {
        if (!sessionStorage.getItem('tributary.token')) sessionStorage.setItem('tributary.token', t);
      } catch {
        // about:blank and workers have no session storage.
      }
    }, tokenValue);
  }
  ctx.on('request', (req) => record.requests.push({ url: req.url(), method: req.method(), body: req.postData() }));
  ctx.on('page', (page) => {
    page.on('console', (m) => {
      if (m.type() === 'error') record.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => record.pageErrors.push(String(e)));
  });
  return { ctx, record };
}

/** The GraphQL requests recorded since index `from`, with their operation names. */
export function graphqlRequests(record, from = 0) {
  return record.requests
    .slice(from)
    .filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/graphql')
    .map((r) => {
      const q = JSON.parse(r.body).query;
      return { query: q, name: (q.match(/^\s*(?:query|mutation)\s+(\w+)/) || [])[1] || '(anonymous)' };
    });
}

export async function shot(page, name) {
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, `${name}.png`) });
}

/** Waits until the page has drawn (body[data-state=drawn]) and nothing is loading. */
export async function drawn(page, timeout = 60000) {
  await page.waitForFunction(() => document.body.dataset.state === 'drawn', null, { timeout });
}

/** The nodes and edges the page's text list holds. */
export async function listed(page) {
  return page.evaluate(() => ({
    nodes: [...document.querySelectorAll('#node-list li')].map((li) => ({
      key: li.dataset.node,
      name: li.dataset.name,
      kind: li.dataset.kind,
      up: li.dataset.hasUpstream === 'true',
      down: li.dataset.hasDownstream === 'true',
      highlighted: li.dataset.highlighted === 'true',
    })),
    edges: [...document.querySelectorAll('#edge-list li')].map((li) => ({ key: li.dataset.edge, source: li.dataset.source, target: li.dataset.target, label: li.dataset.label, retired: li.dataset.retired === 'true' })),
  }));
}

export const sorted = (xs) => [...xs].sort();
