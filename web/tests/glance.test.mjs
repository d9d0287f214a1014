// Browser tests of what a person sees at a glance, in a real headless Chromium at 1440x900 against
// a real `tributary serve` on the store UI_STORE names: node labels legible at Fit (on screen, the
// canvas zoom times the label's font size), health on the drawing after a real failed run, panels
// and bars beside the drawing (the diff's retired edge stays in view), the column view's field
// edges between column rows and a column's path, the home page's plain words, the job panel, the
// depth offer, the as-of note, and the contrast of text. Run by scripts/ui-test.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { context, drawn, gql, launch, listed, shot, startServe, tag } from './harness.mjs';
import { seedChain, seedColumns, seedFanout30, seedProject, seedReplaced } from './seed-glance.mjs';

const VIEWPORT = { width: 1440, height: 900 };
let serve;
let browser;
let admin;
let project;
const contexts = [];
const api = (query, variables) => gql(serve.url, admin, query, variables);
let columnTables;
const columnsSeed = async () => (columnTables ??= await seedColumns(serve.url, admin));

before(async () => {
  serve = await startServe();
  admin = serve.token(tag('glance-admin'), 'ADMIN');
  project = await seedProject(serve.url, admin);
  browser = await launch();
});

after(async () => {
  for (const c of contexts) await c.ctx.close().catch(() => {});
  await browser?.close();
  await serve?.stop();
});

async function open(t, path, options = {}) {
  const c = await context(browser, { token: admin, ...options });
  contexts.push(c);
  t.after(() => c.ctx.close().catch(() => {}));
  const page = await c.ctx.newPage();
  await page.setViewportSize(VIEWPORT);
  if (path) {
    await page.goto(`${serve.url}${path}`);
    await drawn(page);
  }
  return { page, record: c.record };
}

function noErrors(record, what) {
  assert.deepEqual(record.outside, [], `${what}: no request may leave loopback`);
  assert.deepEqual(record.pageErrors, [], `${what}: page errors`);
  assert.deepEqual(record.consoleErrors, [], `${what}: console errors`);
}

/** Every node label's on-screen font size at Fit, and which nodes lie inside the canvas. */
async function atFit(page) {
  await page.click('#fit');
  return page.evaluate(() => {
    const t = window.__tributary;
    const fit = t.fit();
    const labels = t.labelSizes();
    const inside = labels.filter((l) => {
      const p = t.nodePosition(l.key);
      return p.x >= 0 && p.y >= 0 && p.x <= fit.width && p.y <= fit.height;
    });
    return { fit, labels, inside: inside.map((l) => l.key) };
  });
}

test('a 15-table chain at Fit: node labels 12 px or more on screen, the centre and its neighbours in view', async (t) => {
  const ids = await seedChain(serve.url, admin, 15);
  const centre = ids[7];
  const { page, record } = await open(t, `/ui?container=${centre}&depth=8`);
  assert.equal((await listed(page)).nodes.length, 15);
  const { fit, labels, inside } = await atFit(page);
  assert.equal(labels.length, 15);
  for (const l of labels) {
    assert.ok(l.px >= 12, `${l.key}: ${l.px} px on screen`);
    assert.ok(l.shown, `${l.key}: its label is drawn`);
  }
  for (const k of [ids[6], ids[7], ids[8]].map((id) => `c${id}`)) assert.ok(inside.includes(k), `${k} in view (${JSON.stringify(fit)})`);
  // The rest is a pan away: the overview map shows when the graph is bigger than the view.
  if (inside.length < 15) assert.equal(await page.locator('#minimap').isVisible(), true, 'the overview map');
  // Names are shortened from their start, never in the middle; the full name on hover.
  for (const l of labels) {
    const first = l.label.split('\n')[0].replace(/^◂ /, '');
    assert.ok(!/.…./.test(first), `no ellipsis inside a name: ${first}`);
  }
  const pos = await page.evaluate((k) => window.__tributary.nodePosition(k), `c${centre}`);
  const box = await page.locator('#cy').boundingBox();
  await page.mouse.move(box.x + pos.x, box.y + pos.y);
  await page.waitForSelector('.node-tip:not([hidden])');
  assert.match(await page.locator('.node-tip').textContent(), new RegExp(`^pipeline\\.steps\\.${tag('step_07_of_the_nightly_chain')}$`));
  await shot(page, 'glance-chain');
  noErrors(record, 'chain');
});

test('a 30-table fan-out at Fit: node labels 12 px or more on screen, every table in view', async (t) => {
  const fan = await seedFanout30(serve.url, admin, 30);
  const { page, record } = await open(t, `/ui?container=${fan.root}&depth=1`);
  assert.equal((await listed(page)).nodes.length, 30);
  const { fit, labels, inside } = await atFit(page);
  assert.equal(labels.length, 30);
  for (const l of labels) assert.ok(l.px >= 12 && l.shown, `${l.key}: ${l.px} px on screen`);
  // The wide layer wraps, so that the whole fan-out fits legibly.
  assert.equal(inside.length, 30, `every node inside the canvas (${JSON.stringify(fit)})`);
  await shot(page, 'glance-fanout');
  noErrors(record, 'fan-out');
});

test('after a failed run (OpenLineage START, FAIL): the failed table and the stale ones are marked on the drawing, with the job', async (t) => {
  const p = project.tables;
  const { page, record } = await open(t, `/ui?container=${p.fct_revenue.id}&depth=2`);
  const want = Object.fromEntries(
    await Promise.all(
      Object.entries(p).map(async ([k, v]) => [k, (await api('query($id: Int!) { container(id: $id) { health { state } } }', { id: v.id })).container.health.state]),
    ),
  );
  assert.equal(want.fct_revenue, 'FAILED');
  assert.deepEqual(['rpt_board', 'rpt_marketing', 'rpt_finance'].map((k) => want[k]), ['STALE', 'STALE', 'STALE']);
  const drawnKeys = (await listed(page)).nodes.map((n) => n.key);
  for (const [k, v] of Object.entries(p)) {
    if (!drawnKeys.includes(`c${v.id}`)) continue;
    const classes = await page.evaluate((key) => window.__tributary.classes(key), `c${v.id}`);
    const mark = classes.find((c) => c.startsWith('health-')) ?? null;
    const expected = want[k] === 'FAILED' || want[k] === 'STALE' ? `health-${want[k]}` : null;
    assert.equal(mark, expected, `${k} (${want[k]})`);
    const label = (await page.evaluate(() => window.__tributary.labelSizes())).find((l) => l.key === `c${v.id}`).label;
    if (expected) assert.match(label, new RegExp(want[k]), `${k}: the badge in its label`);
    else assert.doesNotMatch(label, /FAILED|STALE/, k);
  }
  // The border says it too: one colour for failed, another for stale, neither for the rest.
  const border = (x) => page.evaluate((k) => window.__tributary.nodeColours(k).border, `c${x.id}`);
  const [bf, bs, bn] = [await border(p.fct_revenue), await border(p.rpt_board), await border(p.int_orders)];
  assert.ok(bf !== bs && bf !== bn && bs !== bn, JSON.stringify([bf, bs, bn]));
  // The health bar names them apart and links the failed run's job.
  const bar = page.locator('#healthbar');
  assert.equal(await bar.isVisible(), true);
  assert.match(await bar.locator('[data-health=FAILED]').innerText(), new RegExp(tag('fct_revenue_by_region_and_channel_daily')));
  assert.equal(await bar.locator(`[data-health=FAILED] a[href*="job=${project.job.id}&"]`).count(), 1, 'the failed run’s job');
  const staleNames = await bar.locator('[data-health=STALE] button').allTextContents();
  assert.deepEqual(staleNames.sort(), [p.rpt_board.name, p.rpt_finance.name, p.rpt_marketing.name].sort());
  // The legend explains both marks.
  assert.equal(await page.locator('.legend .key-failed').isVisible(), true);
  assert.equal(await page.locator('.legend .key-stale').isVisible(), true);
  // "What is stale": the failed and stale tables highlighted, the rest dimmed.
  await bar.locator('#stale-toggle').click();
  await page.waitForURL(/hl=stale/);
  const hl = await page.evaluate((keys) => keys.map((k) => window.__tributary.classes(k).includes('hl')), [p.fct_revenue, p.rpt_board, p.rpt_finance, p.rpt_marketing, p.int_orders].map((x) => `c${x.id}`));
  assert.deepEqual(hl, [true, true, true, true, false]);
  await shot(page, 'glance-health');
  // The list view says the same in words.
  const listedHealth = await page.locator(`#node-list li[data-node="c${p.fct_revenue.id}"]`).getAttribute('data-health');
  assert.equal(listedHealth, 'FAILED');
  noErrors(record, 'health');
});

test('the home page: the incident lists the failed table and the stale ones apart, linked; column changes grouped under their tables', async (t) => {
  const cols = await columnsSeed();
  const { page, record } = await open(t, null);
  await page.goto(`${serve.url}/ui`);
  await page.waitForSelector('#home[data-loaded=true]');
  const incident = page.locator(`#home li[data-incident="${project.runId}"]`);
  const failed = await incident.locator('[data-tables=FAILED] a').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
  assert.deepEqual(failed.map(([n]) => n), [project.tables.fct_revenue.name]);
  assert.match(failed[0][1], new RegExp(`container=${project.tables.fct_revenue.id}&.*hl=stale`));
  const stale = await incident.locator('[data-tables=STALE] a').allTextContents();
  assert.deepEqual(stale.sort(), [project.tables.rpt_board.name, project.tables.rpt_finance.name, project.tables.rpt_marketing.name].sort());
  // Column changes: one entry under the table pair, naming the columns; never a "?".
  const text = await page.locator('#home [data-home=changes]').innerText();
  assert.doesNotMatch(text, /\?/, text);
  // Tables by name, never by id; a table's new fields as one entry.
  assert.doesNotMatch(text, /\btable \d+\b/, text);
  assert.match(text, new RegExp(`3 fields created in ${cols.c.name}`), text);
  const group = page.locator('#home [data-home=changes] li[data-group=columns]', { hasText: `${cols.b.name} → ${cols.c.name}` });
  assert.equal(await group.count(), 1, text);
  assert.deepEqual((await group.locator('ul.columns-changed li').allTextContents()).sort(), ['x → x', 'y → y_total']);
  await shot(page, 'glance-home');
  // The failed table's link opens its graph with what is stale highlighted.
  await incident.locator('[data-tables=FAILED] a').click();
  await drawn(page);
  assert.equal(await page.locator('#stale-toggle').getAttribute('aria-pressed'), 'true');
  assert.ok((await page.evaluate((k) => window.__tributary.classes(k), `c${project.tables.rpt_board.id}`)).includes('hl'));
  noErrors(record, 'home');
});

test('the diff: with the panel open the retired and the appeared edge lie inside the visible drawing', async (t) => {
  const d = await seedReplaced(serve.url, admin);
  const { page, record } = await open(t, `/ui?container=${d.tables.target.id}&depth=1&since=${encodeURIComponent(d.instant)}`);
  await page.waitForSelector('#panel[data-node=diff]');
  const panel = await page.locator('#panel').boundingBox();
  const canvas = await page.locator('#cy').boundingBox();
  assert.ok(canvas.x + canvas.width <= panel.x + 1, `the canvas ends where the panel begins (${JSON.stringify({ canvas, panel })})`);
  for (const key of [d.retired, d.appeared]) {
    const b = await page.evaluate((k) => window.__tributary.renderedBox(k), key);
    assert.ok(b, `${key} is drawn`);
    assert.ok(b.x1 >= 0 && b.y1 >= 0 && b.x2 <= canvas.width && b.y2 <= canvas.height, `${key} inside the canvas: ${JSON.stringify({ b, canvas })}`);
  }
  assert.deepEqual(await page.evaluate((k) => window.__tributary.classes(k), d.retired), ['retired', 'change-retired']);
  await shot(page, 'glance-diff');
  // Closing the panel gives the room back: the drawing re-fits into the wider canvas.
  const before = await page.evaluate(() => window.__tributary.fit().width);
  await page.locator('#panel button.close').click();
  await page.waitForFunction((w) => window.__tributary.fit().width > w && window.__tributary.fit().fitted, before);
  noErrors(record, 'diff');
});

test('the column view: field edges run between column rows; selecting a column highlights its path both ways', async (t) => {
  const c = await columnsSeed();
  const { page, record } = await open(t, `/ui?container=${c.b.id}&depth=1&view=columns`);
  await page.waitForSelector('#columns-view[data-edges]');
  // The edge b.x → c.x starts at b.x's row and ends at c.x's row.
  const ends = await page.evaluate(
    ([s, t]) => {
      const path = document.querySelector(`#columns-view path[data-source-field="${s}"][data-target-field="${t}"]`);
      if (!path) return null;
      const a = path.getPointAtLength(0);
      const b = path.getPointAtLength(path.getTotalLength());
      const box = (id) => document.querySelector(`#columns-view rect[data-row-box="${id}"]`).getBBox();
      const rs = box(s);
      const rt = box(t);
      return { a: { x: a.x, y: a.y }, b: { x: b.x, y: b.y }, rs: { x: rs.x, y: rs.y, w: rs.width, h: rs.height }, rt: { x: rt.x, y: rt.y, w: rt.width, h: rt.height } };
    },
    [c.b.fields.x, c.c.fields.x],
  );
  assert.ok(ends, 'the field edge is drawn');
  // A point on the row's left or right side (an edge leaves a row on one side, enters on one).
  const within = (p, r) => p.y >= r.y && p.y <= r.y + r.h && (Math.abs(p.x - r.x) <= 2 || Math.abs(p.x - (r.x + r.w)) <= 2);
  assert.ok(within(ends.a, ends.rs), `starts at the source row: ${JSON.stringify(ends)}`);
  assert.ok(within(ends.b, ends.rt), `ends at the target row: ${JSON.stringify(ends)}`);
  // Selecting b.x: a.x upstream, c.x downstream; y's edges are not on the path.
  await page.locator(`#columns-view .column-row[data-row-field="${c.b.fields.x}"]`).click();
  const path = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#columns-view .column-row')].map((r) => [r.dataset.rowField, r.dataset.path])));
  assert.equal(path[c.b.fields.x], 'selected');
  assert.equal(path[c.a.fields.x], 'upstream');
  assert.equal(path[c.c.fields.x], 'downstream');
  assert.equal(path[c.a.fields.y], 'none');
  const edgePath = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#columns-view path[data-edge-id]')].map((p) => [`${p.dataset.sourceField}>${p.dataset.targetField}`, p.dataset.path])));
  assert.equal(edgePath[`${c.a.fields.x}>${c.b.fields.x}`], 'upstream');
  assert.equal(edgePath[`${c.b.fields.x}>${c.c.fields.x}`], 'downstream');
  assert.equal(edgePath[`${c.b.fields.y}>${c.c.fields.y_total}`], 'none');
  // A table's header folds its rows; its edges then end at the header.
  await page.locator(`#columns-view .table-head[data-toggle="c${c.c.id}"]`).click();
  assert.equal(await page.locator(`#columns-view g[data-table="c${c.c.id}"] .column-row`).count(), 0);
  assert.equal(await page.locator('#columns-view path[data-folded]').count(), 2);
  await shot(page, 'glance-columns');
  noErrors(record, 'columns');
});

test('the depth offer says how many tables the next depth adds, and only when it adds some; it covers no view', async (t) => {
  const ids = await seedChain(serve.url, admin, 6, 'short');
  const { page, record } = await open(t, `/ui?container=${ids[2]}&depth=1&view=list`);
  // Depth 1 around the third of six: three drawn, depth 2 adds two more.
  const alert = page.locator('#alert[data-kind=cut]');
  await alert.waitFor();
  assert.equal(await alert.getAttribute('data-more'), '2');
  assert.match(await alert.innerText(), /depth 2 adds 2 tables \(5 in all\)/);
  // A bar above the view, not over it: the list starts below it.
  const bar = await alert.boundingBox();
  const listBox = await page.locator('#graph-text').boundingBox();
  assert.ok(listBox.y >= bar.y + bar.height - 1, JSON.stringify({ bar, listBox }));
  // Depth 3 draws all six: nothing is offered.
  await page.goto(`${serve.url}/ui?container=${ids[2]}&depth=3`);
  await drawn(page);
  assert.equal(await page.locator('#alert').isHidden(), true);
  noErrors(record, 'depth offer');
});

test('as of an instant, jobs and health are the instant’s: no note says they are today’s', async (t) => {
  const p = project.tables;
  const { page, record } = await open(t, `/ui?container=${p.fct_revenue.id}&depth=1&asOf=${encodeURIComponent(new Date().toISOString())}`);
  const note = page.locator('#drawing-note');
  assert.equal(await note.isHidden(), true);
  // As of now the failed run is its job's latest, so the as-of drawing marks the table it left FAILED.
  assert.ok((await page.evaluate((k) => window.__tributary.classes(k), `c${p.fct_revenue.id}`)).includes('health-FAILED'));
  await page.goto(`${serve.url}/ui?container=${p.fct_revenue.id}&depth=1`);
  await drawn(page);
  assert.equal(await note.isHidden(), true);
  noErrors(record, 'as of');
});

test('the job panel: no “null”, no word broken across lines', async (t) => {
  const { page, record } = await open(t, `/ui?job=${project.job.id}&sel=j${project.job.id}`);
  await page.waitForSelector(`#panel[data-node="j${project.job.id}"][data-loaded=true]`);
  // Centred on the job, the table it failed to write is marked too.
  assert.ok((await page.evaluate((k) => window.__tributary.classes(k), `c${project.tables.fct_revenue.id}`)).includes('health-FAILED'));
  const text = await page.locator('#panel').innerText();
  assert.doesNotMatch(text, /\bnull\b|\bundefined\b/, text);
  // Each word of the title, the job's facts and the run table sits on one line (a long name
  // may wrap after a / . _, which ends a word here).
  const broken = await page.evaluate(() => {
    const out = [];
    for (const cell of document.querySelectorAll('#panel table.runs th, #panel table.runs td, #panel h2, #panel dd, #panel .qualified')) {
      for (const node of [cell, ...cell.querySelectorAll('*')]) {
        for (const t of node.childNodes) {
          if (t.nodeType !== 3 || !t.textContent.trim()) continue;
          for (const word of t.textContent.split(/[\s/._]+/).filter(Boolean)) {
            const i = t.textContent.indexOf(word);
            const r = document.createRange();
            r.setStart(t, i);
            r.setEnd(t, i + word.length);
            const lines = new Set([...r.getClientRects()].map((b) => Math.round(b.top)));
            if (lines.size > 1 && word.length < 40) out.push(word);
          }
        }
      }
    }
    return out;
  });
  assert.deepEqual(broken, []);
  await shot(page, 'glance-job-panel');
  noErrors(record, 'job panel');
});

/** The WCAG contrast ratio of two CSS colours (rgb(), rgba() or color(srgb ...)). */
function contrast(a, b) {
  const parse = (c) => {
    let m = c.match(/rgba?\(([\d.]+)[, ]+([\d.]+)[, ]+([\d.]+)/);
    if (m) return [m[1], m[2], m[3]].map((x) => Number(x) / 255);
    m = c.match(/color\(srgb ([\d.]+) ([\d.]+) ([\d.]+)/);
    if (m) return [m[1], m[2], m[3]].map(Number);
    m = c.match(/^#([0-9a-f]{6})$/i);
    if (m) return [0, 2, 4].map((i) => parseInt(m[1].slice(i, i + 2), 16) / 255);
    throw new Error(`colour ${c}`);
  };
  const lum = (c) => {
    const [r, g, b] = parse(c).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

for (const scheme of ['light', 'dark']) {
  test(`contrast of text passes WCAG AA (4.5:1) in the ${scheme} scheme: node labels (selected job, failed, stale), pills, muted text, bars`, async (t) => {
    const p = project.tables;
    const { page, record } = await open(t, `/ui?container=${p.fct_revenue.id}&depth=1&jobs=1`, { colorScheme: scheme });
    const jobs = (await listed(page)).nodes.filter((n) => n.kind === 'job').map((n) => n.key);
    assert.ok(jobs.length >= 2, jobs.join());
    const pairs = [];
    const node = async (key, what) => {
      const c = await page.evaluate((k) => window.__tributary.nodeColours(k), key);
      pairs.push([what, c.fg, c.bg]);
    };
    for (const j of jobs) await node(j, `job ${j}`);
    await node(`c${p.fct_revenue.id}`, 'failed table');
    await node(`c${p.rpt_board.id}`, 'stale table');
    await node(`c${p.int_orders.id}`, 'table');
    // The selected job: its label on the selection colour.
    await page.evaluate((k) => window.__tributary.centre(k), jobs[0]);
    const pos = await page.evaluate((k) => window.__tributary.nodePosition(k), jobs[0]);
    const box = await page.locator('#cy').boundingBox();
    await page.mouse.click(box.x + pos.x, box.y + pos.y);
    await page.waitForSelector(`#panel[data-node="${jobs[0]}"][data-loaded=true]`);
    await node(jobs[0], 'selected job');
    // Text on the page: each element's colour on the first opaque background behind it.
    const dom = await page.evaluate(() => {
      const bgOf = (el) => {
        for (let e = el; e; e = e.parentElement) {
          const bg = getComputedStyle(e).backgroundColor;
          if (bg && !/rgba\(.*, 0\)$/.test(bg) && bg !== 'transparent') return bg;
        }
        return getComputedStyle(document.body).backgroundColor;
      };
      const out = [];
      for (const sel of ['#panel .state', '#panel .sub', '#panel h2', '#panel a', '#healthbar', '#healthbar .state', '#healthbar button.link', '.legend .key', '#status', '.toolbar button']) {
        for (const el of [...document.querySelectorAll(sel)].slice(0, 6)) {
          if (!el.textContent.trim() || !el.getClientRects().length) continue;
          out.push([`${sel} “${el.textContent.trim().slice(0, 24)}”`, getComputedStyle(el).color, bgOf(el)]);
        }
      }
      return out;
    });
    pairs.push(...dom);
    assert.ok(dom.some(([w]) => w.startsWith('#panel .state')), 'a run state pill was checked');
    assert.ok(dom.some(([w]) => w.startsWith('#healthbar .state')), 'the health bar was checked');
    const failing = pairs.map(([what, fg, bg]) => ({ what, fg, bg, ratio: Number(contrast(fg, bg).toFixed(2)) })).filter((x) => x.ratio < 4.5);
    assert.deepEqual(failing, []);
    await shot(page, `glance-contrast-${scheme}`);
    noErrors(record, `contrast ${scheme}`);
  });
}
