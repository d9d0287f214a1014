// The explorer's figures for BENCHMARKS.md: the bundle sizes (raw and gzipped) and, on a
// 2,000-node graph in headless Chromium against a real `tributary serve` (embedded store), the
// time to first draw (request, layout in the worker, first frame) and how long a pan and a zoom
// take to complete; and the first draw of a 1 -> 30 -> 900 fan-out, whose 900 fold into 30 group
// nodes. Measures only; the tests assert nothing about time.
//
//   cargo build --release && TRIBUTARY_BIN=$CARGO_TARGET_DIR/release/tributary node web/tests/bench.mjs [RUNS]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { bin, context, drawn, launch, repo, startServe, tag } from './harness.mjs';
import { seedFanout, seedLarge } from './seed.mjs';

const runs = Number(process.argv[2] ?? 5);
const dist = join(repo, 'web', 'dist');
const size = (names) => {
  const raw = names.reduce((n, f) => n + readFileSync(join(dist, f)).length, 0);
  const gz = names.reduce((n, f) => n + gzipSync(readFileSync(join(dist, f)), { level: 9 }).length, 0);
  return { raw, gz };
};
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const bundles = [
  ['explorer: JS + CSS + layout worker', ['explorer.js', 'explorer.css', 'layout-worker.js']],
  ['explorer.js (cytoscape + the page)', ['explorer.js']],
  ['layout-worker.js (dagre)', ['layout-worker.js']],
  ['explorer.css', ['explorer.css']],
  ['GraphiQL: JS + CSS (React, GraphiQL 4, fonts)', ['graphiql.js', 'graphiql.css']],
];

const serve = await startServe();
try {
  const admin = serve.token(tag('bench'), 'ADMIN');
  const big = await seedLarge(serve.url, admin, 2000);
  const browser = await launch();
  const draws = [];
  const pans = [];
  const zooms = [];
  const frameTimes = [];
  for (let i = 0; i < runs; i++) {
    const { ctx } = await context(browser, { token: admin });
    const page = await ctx.newPage();
    // flat=1: all 2,000 drawn one by one (no folding of wide layers).
    await page.goto(`${serve.url}/ui?container=${big.centre}&depth=3&flat=1`);
    await drawn(page, 240000);
    draws.push(await page.evaluate(() => window.__tributary.lastDraw));
    // Frames while the view pans 40 frames in a row (cytoscape redraws each).
    const frames = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const times = [];
          let last = performance.now();
          const step = () => {
            const now = performance.now();
            times.push(now - last);
            last = now;
            if (times.length > 40) return resolve(times.slice(1));
            window.__tributary.panBy({ x: 5, y: 3 });
            requestAnimationFrame(step);
          };
          requestAnimationFrame(step);
        }),
    );
    frameTimes.push(frames.reduce((a, b) => a + b, 0) / frames.length);
    const box = await page.locator('#cy').boundingBox();
    const x = box.x + box.width / 2;
    const y = box.y + box.height / 2;
    // A pan: from the press to the frame after the last move.
    let t = Date.now();
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x + 200, y + 100, { steps: 20 });
    await page.mouse.up();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    pans.push(Date.now() - t);
    // A zoom: five wheel steps in, then the frame after.
    t = Date.now();
    for (let k = 0; k < 5; k++) await page.mouse.wheel(0, -200);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    zooms.push(Date.now() - t);
    await ctx.close();
  }
  const fan = await seedFanout(serve.url, admin, 30);
  const fanDraws = [];
  for (let i = 0; i < runs; i++) {
    const { ctx } = await context(browser, { token: admin });
    const page = await ctx.newPage();
    await page.goto(`${serve.url}/ui?container=${fan.root}&depth=2`);
    await drawn(page, 240000);
    fanDraws.push(await page.evaluate(() => window.__tributary.lastDraw));
    await ctx.close();
  }
  await browser.close();
  const m = (k) => median(draws.map((d) => d[k]));
  const f = (k) => median(fanDraws.map((d) => d[k]));
  const lines = [];
  lines.push(`binary: ${bin}`, `graph: ${draws[0].nodes} nodes, ${draws[0].edges} edges (depth 3), ${runs} runs, medians`, '');
  lines.push('| figure | value |', '| --- | --- |');
  lines.push(`| time to first draw (request sent to first frame) | ${m('totalMs')} ms |`);
  lines.push(`| of which the lineageGraph request | ${m('requestMs')} ms |`);
  lines.push(`| of which the layout (dagre in the worker) | ${m('layoutMs')} ms |`);
  lines.push(`| of which the first frame (cytoscape) | ${m('renderMs')} ms |`);
  lines.push(`| frame time while panning (40 frames) | ${median(frameTimes).toFixed(1)} ms (${(1000 / median(frameTimes)).toFixed(0)} frames/s) |`);
  lines.push(`| a pan by mouse (press, 20 moves, release) until the next frame | ${median(pans)} ms |`);
  lines.push(`| a zoom (5 wheel steps) until the next frame | ${median(zooms)} ms |`);
  lines.push('', `fan-out: ${fanDraws[0].nodes} nodes, ${fanDraws[0].edges} edges (depth 2), drawn as ${fanDraws[0].drawnNodes} (${fanDraws[0].groups} groups)`, '');
  lines.push('| figure | value |', '| --- | --- |');
  lines.push(`| time to first draw of the folded fan-out | ${f('totalMs')} ms |`);
  lines.push(`| of which the lineageGraph request | ${f('requestMs')} ms |`);
  lines.push(`| of which the layout | ${f('layoutMs')} ms |`);
  lines.push(`| of which the first frame | ${f('renderMs')} ms |`);
  lines.push('', '| bundle | size | gzipped |', '| --- | --- | --- |');
  for (const [name, files] of bundles) {
    const s = size(files);
    lines.push(`| ${name} | ${kb(s.raw)} | ${kb(s.gz)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await serve.stop();
}
