// The README's screenshots of the explorer (docs/explorer*.png), regenerated: a real `tributary
// serve` on a fresh embedded store, seeded through the public API (the tests' shop, a dbt-style
// project whose nightly run failed, column lineage, a replaced source, a fan-out, a long chain),
// and Debian's Chromium at 1440x900 opening each view. Run by scripts/screenshots.
//
//   TRIBUTARY_BIN=... node web/tests/screenshots.mjs [OUT_DIR]   (default: docs/)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { context, drawn, launch, repo, startServe, tag } from './harness.mjs';
import { seedFailedRun, seedFanout, seedShop } from './seed.mjs';
import { seedChain, seedColumns, seedProject, seedReplaced } from './seed-glance.mjs';

const out = process.argv[2] ?? join(repo, 'docs');
mkdirSync(out, { recursive: true });
const serve = await startServe();
const browser = await launch();
const written = [];
try {
  const admin = serve.token(tag('screenshots'), 'ADMIN');
  // The bulk first, so that the home page's latest changes are the project's, not 930 edges.
  const fan = await seedFanout(serve.url, admin, 30);
  const chain = await seedChain(serve.url, admin, 15);
  const shop = await seedShop(serve.url, admin);
  const ns = `postgres://${tag('warehouse')}.example.com:5432`;
  await seedFailedRun(serve.url, admin, { ns, input: `shop.staging.${shop.names.orders_clean}`, output: `shop.mart.${shop.names.revenue_daily}` });
  const project = await seedProject(serve.url, admin);
  const cols = await seedColumns(serve.url, admin);
  const replaced = await seedReplaced(serve.url, admin);

  const { ctx } = await context(browser, { token: admin });
  const page = await ctx.newPage();
  await page.setViewportSize({ width: 1440, height: 900 });
  const snap = async (name) => {
    const path = join(out, `${name}.png`);
    await page.screenshot({ path });
    written.push(path);
  };
  const view = async (path, ready = null) => {
    await page.goto(`${serve.url}${path}`);
    await drawn(page, 120000);
    if (ready) await page.waitForSelector(ready, { timeout: 60000 });
    await page.waitForFunction(() => !document.querySelector('#panel .loading'), null, { timeout: 60000 });
  };
  const p = project.tables;

  // The shop, orders_clean selected, its email field's column lineage highlighted.
  const oc = shop.containers.orders_clean;
  await view(`/ui?container=${oc}&depth=2&sel=c${oc}&field=${shop.fields.orders_clean.email}`, `#panel[data-node="c${oc}"][data-loaded=true]`);
  await page.waitForSelector('#panel .field-path');
  await snap('explorer');

  // Health on the drawing: the failed dbt model and what it left stale, highlighted.
  await view(`/ui?container=${p.fct_revenue.id}&depth=2&hl=stale&sel=c${p.fct_revenue.id}`, `#panel[data-node="c${p.fct_revenue.id}"][data-loaded=true]`);
  await snap('explorer-health');

  // Jobs between the tables, coloured by their latest run.
  await view(`/ui?container=${p.fct_revenue.id}&depth=2&jobs=1`);
  await snap('explorer-jobs');

  // A job's panel: its run history with the error.
  await view(`/ui?job=${project.job.id}&depth=2&sel=j${project.job.id}`, `#panel[data-node="j${project.job.id}"][data-loaded=true]`);
  await snap('explorer-job');

  // The home page: the failed runs with the failed and stale tables apart, the changes.
  await page.goto(`${serve.url}/ui`);
  await page.waitForSelector('#home[data-loaded=true]');
  await snap('explorer-home');

  // Changed since: the retired edge and the appeared one, in view beside the panel.
  await view(`/ui?container=${replaced.tables.target.id}&depth=1&since=${encodeURIComponent(replaced.instant)}`, '#panel[data-node=diff]');
  await snap('explorer-diff');

  // As of an instant: the lineage, jobs and health as they were then.
  await view(`/ui?container=${p.fct_revenue.id}&depth=2&jobs=1&asOf=${encodeURIComponent(new Date().toISOString())}`);
  await snap('explorer-as-of');

  // The column view, the path of one column highlighted both ways.
  await view(`/ui?container=${cols.b.id}&depth=1&view=columns`, '#columns-view[data-edges]');
  await page.locator(`#columns-view .column-row[data-row-field="${cols.b.fields.x}"]`).click();
  await snap('explorer-columns');

  // The list view of the project.
  await view(`/ui?container=${p.fct_revenue.id}&depth=2&view=list`);
  await snap('explorer-list');

  // A 15-table chain: laid out for the screen, legible at Fit around its centre.
  await view(`/ui?container=${chain[7]}&depth=8`);
  await snap('explorer-chain');

  // A 1 -> 30 -> 900 fan-out, the 900 folded into a group per table of the middle layer.
  await view(`/ui?container=${fan.root}&depth=2`);
  await snap('explorer-fanout');
  await ctx.close();
} finally {
  await browser.close();
  await serve.stop();
}
process.stderr.write(`screenshots: wrote ${written.length} files\n${written.map((w) => `  ${w}`).join('\n')}\n`);
