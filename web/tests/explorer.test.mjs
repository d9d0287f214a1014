// Browser tests of the lineage explorer (/ui) and GraphiQL (/graphql) in a real headless Chromium,
// against a real `tributary serve` on the store UI_STORE names (auth on, as users run it). Every
// answer the page shows is checked against the public API's own answer to the same question.
// Screenshots go to tests/browser/artifacts/<store>/. Run by scripts/ui-test.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  artifacts,
  context,
  drawn,
  gql,
  graphqlRequests,
  launch,
  listed,
  repo,
  shot,
  sorted,
  startServe,
  run,
  storeKind,
  tag,
} from './harness.mjs';
import { seedLarge, seedShop } from './seed.mjs';

let serve;
let browser;
let admin;
let shop;
const contexts = [];

const api = (query, variables, token = admin) => gql(serve.url, token, query, variables);
const GRAPH = `query($id: Int!, $depth: Int!, $side: Side) { lineageGraph(containerId: $id, depth: $depth, side: $side) {
  nodes { id hasUpstream hasDownstream } edges { id } externalNodes { id } externalEdges { id } } }`;

/** The node and edge keys the API answers for a draw, as the page keys them. */
async function apiGraph(id, depth, side = null) {
  const g = (await api(GRAPH, { id, depth, side })).lineageGraph;
  return {
    nodes: sorted([...g.nodes.map((n) => `c${n.id}`), ...g.externalNodes.map((n) => n.id)]),
    edges: sorted([...g.edges, ...g.externalEdges].map((e) => `e${e.id}`)),
    flags: Object.fromEntries(g.nodes.map((n) => [`c${n.id}`, { up: n.hasUpstream, down: n.hasDownstream }])),
  };
}

/** A browser context for one test, closed when the test ends (open pages keep drawing). */
async function openContext(t, options = {}) {
  const c = await context(browser, options);
  contexts.push(c);
  t.after(() => c.ctx.close().catch(() => {}));
  return c;
}

/** Clicks (or double-clicks) a node on the canvas, after bringing it to the canvas's middle. */
async function clickNode(page, key, { double = false } = {}) {
  await page.evaluate((k) => window.__tributary.centre(k), key);
  const pos = await page.evaluate((k) => window.__tributary.nodePosition(k), key);
  assert.ok(pos, `${key} is drawn`);
  const box = await page.locator('#cy').boundingBox();
  if (double) await page.mouse.dblclick(box.x + pos.x, box.y + pos.y);
  else await page.mouse.click(box.x + pos.x, box.y + pos.y);
}

async function panelLoaded(page, key) {
  await page.waitForSelector(`#panel[data-node="${key}"][data-loaded="true"]`, { timeout: 30000 });
  await page.waitForFunction(() => !document.querySelector('#panel .loading'), null, { timeout: 30000 });
}

function noErrors(record, what) {
  assert.deepEqual(record.outside, [], `${what}: no request may leave loopback`);
  assert.deepEqual(record.pageErrors, [], `${what}: page errors`);
  assert.deepEqual(record.consoleErrors, [], `${what}: console errors`);
}

before(async () => {
  serve = await startServe();
  admin = serve.token(tag('ui-admin'), 'ADMIN');
  shop = await seedShop(serve.url, admin);
  browser = await launch();
});

after(async () => {
  for (const c of contexts) await c.ctx.close().catch(() => {});
  await browser?.close();
  await serve?.stop();
});

test('a page load of a depth-2 graph is one GraphQL request, and draws what the API answers', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  const id = shop.containers.orders_clean;
  const response = await page.goto(`${serve.url}/ui?container=${id}&depth=2`);
  assert.equal(response.status(), 200);
  assert.equal(response.headers()['content-type'], 'text/html; charset=utf-8');
  await drawn(page);
  const requests = graphqlRequests(record);
  assert.deepEqual(requests.map((r) => r.name), ['Graph'], 'one lineageGraph request, nothing else');
  const want = await apiGraph(id, 2);
  const got = await listed(page);
  assert.deepEqual(sorted(got.nodes.map((n) => n.key)), want.nodes);
  assert.deepEqual(sorted(got.edges.map((e) => e.key)), want.edges);
  for (const n of got.nodes.filter((n) => n.kind === 'container')) {
    assert.deepEqual({ up: n.up, down: n.down }, want.flags[n.key], `flags of ${n.name}`);
  }
  // Edges are labelled with their operation, or their source type when none.
  const labels = Object.fromEntries(got.edges.map((e) => [e.key, e.label]));
  assert.ok(Object.values(labels).includes('INSERT_INTO'), JSON.stringify(labels));
  assert.ok(Object.values(labels).includes('CTAS'));
  assert.ok(Object.values(labels).includes('run_event'));
  assert.ok(Object.values(labels).includes('manual'));
  // The external asset is drawn as one.
  const external = got.nodes.find((n) => n.kind === 'external');
  assert.match(external.name, /^s3:\/\/landing.*\/orders\.csv$/);
  assert.match(await page.locator('#status').textContent(), /7 nodes \(1 external\), 8 edges/);
  await shot(page, 'draw-depth-2');
  noErrors(record, 'page load');
});

test('search suggests containers as you type; picking one draws it; direction and depth redraw', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  await page.goto(`${serve.url}/ui`);
  await page.waitForFunction(() => document.body.dataset.state === 'idle');
  // The keyboard only: type, arrow down to the match, Enter.
  await page.locator('#search').focus();
  // On a shared Neo4j, this run's suffix finds this run's tables only.
  await page.keyboard.type(run ? `_${run}` : 'customer');
  await page.waitForSelector('#suggestions li[role=option]');
  const options = await page.locator('#suggestions li[role=option] strong').allTextContents();
  assert.ok(options.includes(shop.names.customers) && options.includes(shop.names.customer_ltv), options.join());
  // The suggestions come from `search`, ranked as the API ranks them.
  const asked = graphqlRequests(record).filter((r) => r.name === 'Search');
  assert.ok(asked.length > 0 && asked.every((r) => /\bsearch\(/.test(r.query)), JSON.stringify(asked));
  const hits = (await api('query($q: String!) { search(query: $q, kinds: [CONTAINER], first: 12) { container { name displayName } } }', { q: run ? `_${run}` : 'customer' })).search;
  assert.deepEqual(options, hits.map((h) => h.container.displayName || h.container.name));
  const index = options.indexOf(shop.names.customer_ltv);
  for (let i = 0; i < index; i++) await page.keyboard.press('ArrowDown');
  assert.equal(await page.locator('#search').getAttribute('aria-activedescendant'), `suggestion-${index}`);
  const before = record.requests.length;
  await page.keyboard.press('Enter');
  await drawn(page);
  assert.deepEqual(graphqlRequests(record, before).map((r) => r.name), ['Graph']);
  assert.match(page.url(), new RegExp(`/ui\\?container=${shop.containers.customer_ltv}&depth=2$`));
  const want = await apiGraph(shop.containers.customer_ltv, 2);
  assert.deepEqual(sorted((await listed(page)).nodes.map((n) => n.key)), want.nodes);

  // Upstream only, depth 1.
  await page.selectOption('#side', 'up');
  await drawn(page);
  await page.fill('#depth', '1');
  await page.locator('#depth').press('Enter');
  await page.waitForURL(/side=up/);
  await page.waitForFunction(() => location.search.includes('depth=1') && document.body.dataset.state === 'drawn');
  const up = await apiGraph(shop.containers.customer_ltv, 1, 'UPSTREAM');
  let got = await listed(page);
  assert.deepEqual(sorted(got.nodes.map((n) => n.key)), up.nodes);
  assert.deepEqual(sorted(got.edges.map((e) => e.key)), up.edges);
  // Back: the previous view again, from the URL.
  await page.goBack();
  await page.waitForFunction(() => !location.search.includes('depth=1') && document.body.dataset.state === 'drawn');
  await page.goBack();
  await page.waitForFunction(() => !location.search.includes('side=') && document.body.dataset.state === 'drawn');
  got = await listed(page);
  assert.deepEqual(sorted(got.nodes.map((n) => n.key)), want.nodes);
  assert.equal(await page.locator('#side').inputValue(), '');
  noErrors(record, 'search');
});

test('expanding a node adds its next step in place with one request, and collapsing removes it', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  const centre = shop.containers.orders_clean;
  await page.goto(`${serve.url}/ui?container=${centre}&depth=2`);
  await drawn(page);
  const report = `c${shop.containers.finance_report}`;
  const kpis = `c${shop.containers.board_kpis}`;
  let got = await listed(page);
  assert.equal(got.nodes.find((n) => n.key === report).down, true, 'finance_report has more downstream');
  assert.ok(!got.nodes.some((n) => n.key === kpis));
  const positions = await page.evaluate(() => window.__tributary.positions());
  const before = record.requests.length;
  await clickNode(page, report, { double: true });
  await page.waitForSelector(`#node-list li[data-node="${kpis}"]`, { state: 'attached' });
  await drawn(page);
  assert.deepEqual(
    graphqlRequests(record, before).filter((r) => r.name === 'Graph').length,
    1,
    'one lineageGraph request for the expansion',
  );
  const after = await page.evaluate(() => window.__tributary.positions());
  for (const [key, p] of Object.entries(positions)) assert.deepEqual(after[key], p, `${key} stayed where it was`);
  got = await listed(page);
  assert.equal(got.nodes.find((n) => n.key === report).down, false);
  // What the expansion added is what the API answers one step downstream of the node.
  const step = await apiGraph(shop.containers.finance_report, 1, 'DOWNSTREAM');
  for (const e of step.edges) assert.ok(got.edges.some((x) => x.key === e), `${e} drawn`);
  assert.match(page.url(), new RegExp(`x=${shop.containers.finance_report}d`));
  await shot(page, 'expanded');

  // Collapse from the list, with the keyboard.
  await page.locator(`#node-list li[data-node="${report}"] button[data-action=collapse]`).focus();
  await page.keyboard.press('Enter');
  await page.waitForSelector(`#node-list li[data-node="${kpis}"]`, { state: 'detached' });
  got = await listed(page);
  assert.equal(got.nodes.find((n) => n.key === report).down, true);
  assert.ok(!page.url().includes('x='));
  noErrors(record, 'expand');
});

test('the side panel: column lineage with the derived flag, impact, metadata and evidence match the API', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  const id = shop.containers.orders_clean;
  const key = `c${id}`;
  await page.goto(`${serve.url}/ui?container=${id}&depth=2`);
  await drawn(page);
  await clickNode(page, key);
  await panelLoaded(page, key);
  assert.match(page.url(), new RegExp(`sel=${key}`));
  const panel = page.locator('#panel');
  assert.equal(await panel.locator('#panel-title').textContent(), shop.names.orders_clean);
  assert.match(await panel.locator('[data-section=attributes]').innerText(), new RegExp(tag('warehouse')));

  // Column lineage: each field's edges, both ways, with the derived flag.
  const fields = (await api('query($id: Int!) { containerFields(containerId: $id) { items { id name } } }', { id })).containerFields.items;
  for (const f of fields) {
    const edges = (await api('query($f: Int!) { edges(fieldId: $f) { items { id sourceFieldId targetFieldId derived } } }', { f: f.id })).edges.items;
    const want = sorted(edges.map((e) => `${e.id}:${e.sourceFieldId === f.id ? 'to' : 'from'}:${e.sourceFieldId === f.id ? e.targetFieldId : e.sourceFieldId}:${Boolean(e.derived)}`));
    const got = sorted(
      await panel.locator(`tr[data-field-id="${f.id}"] ul[data-side] li`).evaluateAll((lis) =>
        lis.map((li) => `${li.dataset.edgeId}:${li.parentElement.dataset.side}:${li.dataset.otherField}:${li.dataset.derived === 'true'}`),
      ),
    );
    assert.deepEqual(got, want, `column lineage of ${f.name}`);
  }
  // email is derived from customers.email; order_id a copy of orders.id.
  const email = fields.find((f) => f.name === 'email');
  assert.equal(await panel.locator(`tr[data-field-id="${email.id}"] ul[data-side=from] li`).getAttribute('data-derived'), 'true');

  // Impact: the count and the list, nearest first, as the API answers.
  const impact = (await api('query($id: Int!) { impact(containerId: $id) { isPartial containers { container { id } } } }', { id })).impact;
  const count = panel.locator('[data-section=impact] [data-impact-count]');
  assert.equal(Number(await count.getAttribute('data-impact-count')), impact.containers.length);
  assert.equal(await count.getAttribute('data-partial'), String(impact.isPartial));
  const listedImpact = await panel.locator('[data-section=impact] li[data-container-id]').evaluateAll((lis) => lis.map((li) => Number(li.dataset.containerId)));
  assert.deepEqual(listedImpact, impact.containers.map((c) => c.container.id));
  // and the external assets it reaches, as the API lists them.
  const externals = (await api('query($id: Int!) { impact(containerId: $id) { externals { external { id } } } }', { id })).impact.externals;
  const listedExternals = await panel.locator('[data-section=impact] li[data-external-id]').evaluateAll((lis) => lis.map((li) => li.dataset.externalId));
  assert.deepEqual(listedExternals, externals.map((x) => x.external.id));

  // Metadata: the user's description is the effective one, dbt's is kept beside it.
  const meta = (await api('query($id: Int!) { metadataAssertions(containerId: $id) { attribute source effective } }', { id })).metadataAssertions;
  const shownMeta = await panel.locator('[data-section=metadata] li[data-attribute]').evaluateAll((lis) => lis.map((li) => `${li.dataset.attribute}:${li.dataset.source}:${li.dataset.effective}`));
  assert.deepEqual(sorted(shownMeta), sorted(meta.map((m) => `${m.attribute}:${m.source}:${m.effective}`)));
  assert.ok(shownMeta.includes('description:user:true'));

  // Evidence of the incoming OpenLineage edges: the job and the run.
  const evidence = await panel.locator('[data-section=evidence]').innerText();
  assert.match(evidence, new RegExp(`${tag('dbt')}/orders_clean`));
  assert.match(evidence, /COMPLETE/);
  assert.equal(await panel.locator('[data-hidden-evidence]').count(), 0, 'an admin sees all evidence');
  await shot(page, 'panel');

  // Escape closes the panel.
  await panel.locator('#panel-title').focus();
  await page.keyboard.press('Escape');
  await page.waitForSelector('#panel', { state: 'hidden' });
  assert.ok(!page.url().includes('sel='));
  noErrors(record, 'panel');
});

test('a field shows its column lineage on the graph and its PII flow; reload restores the view', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  const id = shop.containers.orders_clean;
  await page.goto(`${serve.url}/ui?container=${id}&depth=2`);
  await drawn(page);
  // Expand finance_report, then select orders_clean and its email field.
  await page.locator(`#node-list li[data-node="c${shop.containers.finance_report}"] button[data-side=d]`).focus();
  await page.keyboard.press('Enter');
  await page.waitForSelector(`#node-list li[data-node="c${shop.containers.board_kpis}"]`, { state: 'attached' });
  await clickNode(page, `c${id}`);
  await panelLoaded(page, `c${id}`);
  const email = shop.fields.orders_clean.email;
  await page.locator(`#panel button[data-action=field][data-field-id="${email}"]`).click();
  await page.waitForSelector(`#field-path .field-path[data-field-id="${email}"]`);
  const conn = (await api('query($f: Int!) { field(id: $f) { containerId } fieldConnections(fieldId: $f) { fields { containerId } } piiFlow(fieldId: $f) { fields { field { id } } } }', { f: email }));
  const drawnKeys = new Set((await listed(page)).nodes.map((n) => n.key));
  const want = sorted([...new Set([conn.field.containerId, ...conn.fieldConnections.fields.map((f) => f.containerId)])].map((c) => `c${c}`).filter((k) => drawnKeys.has(k)));
  let got = await listed(page);
  assert.deepEqual(sorted(got.nodes.filter((n) => n.highlighted).map((n) => n.key)), want);
  assert.deepEqual(want, sorted([`c${shop.containers.customers}`, `c${id}`, `c${shop.containers.customer_ltv}`]), 'email comes from customers and goes to customer_ltv');
  const pii = await page.locator('#field-path ul[data-flow=down] li').evaluateAll((lis) => lis.map((li) => Number(li.dataset.fieldId)));
  assert.deepEqual(sorted(pii), sorted(conn.piiFlow.fields.map((f) => f.field.id)));
  assert.match(page.url(), new RegExp(`field=${email}`));
  await page.click('#fit');
  await shot(page, 'field-path');

  // Reload: the same nodes, edges, selection and highlighted path.
  const url = page.url();
  const before = got;
  await page.reload();
  await drawn(page);
  await panelLoaded(page, `c${id}`);
  await page.waitForSelector(`#field-path .field-path[data-field-id="${email}"]`);
  assert.equal(page.url(), url);
  got = await listed(page);
  assert.deepEqual(got, before);
  assert.equal(await page.locator('#panel-title').textContent(), shop.names.orders_clean);

  // A link with the selection and the field opens the same, in a new tab: the README's
  // screenshot (UI_DOCS_SCREENSHOT=1 copies it to docs/explorer.png).
  const wide = await ctx.newPage();
  await wide.setViewportSize({ width: 1600, height: 860 });
  await wide.goto(`${serve.url}/ui?container=${id}&depth=2&sel=c${id}&field=${email}`);
  await drawn(wide);
  await panelLoaded(wide, `c${id}`);
  await wide.waitForSelector(`#field-path .field-path[data-field-id="${email}"]`);
  assert.deepEqual(sorted((await listed(wide)).nodes.filter((n) => n.highlighted).map((n) => n.key)), want);
  await wide.click('#fit');
  await shot(wide, 'explorer');
  if (storeKind === 'embedded' && process.env.UI_DOCS_SCREENSHOT) {
    mkdirSync(join(repo, 'docs'), { recursive: true });
    copyFileSync(join(artifacts, 'explorer.png'), join(repo, 'docs', 'explorer.png'));
  }
  noErrors(record, 'field');
});

test('retired edges are drawn on demand, dashed, as the API keeps them', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  const id = shop.containers.revenue_daily;
  await page.goto(`${serve.url}/ui?container=${shop.containers.orders_clean}&depth=2&sel=c${id}`);
  await drawn(page);
  await panelLoaded(page, `c${id}`);
  const retired = (await api('query($id: Int!) { edges(containerId: $id, includeRetired: true) { items { id retiredAt sourceFieldId } } }', { id })).edges.items.filter((e) => e.retiredAt && e.sourceFieldId == null);
  assert.equal(retired.length, 1, 'the CTAS retired the INSERT from customers');
  assert.equal(await page.locator('#edge-list li[data-retired=true]').count(), 0);
  await page.locator('#panel button[data-action=retired]').click();
  await page.waitForSelector('#edge-list li[data-retired=true]', { state: 'attached' });
  const shown = await page.locator('#edge-list li[data-retired=true]').evaluateAll((lis) => lis.map((li) => li.dataset.edge));
  assert.deepEqual(shown, retired.map((e) => `e${e.id}`));
  assert.match(await page.locator(`#panel li[data-edge-id="${retired[0].id}"]`).innerText(), /retired/);
  await shot(page, 'retired');
  await page.locator('#panel button[data-action=retired]').click();
  await page.waitForSelector('#edge-list li[data-retired=true]', { state: 'detached' });
  noErrors(record, 'retired');
});

test('without a token the page asks for one once (401), and draws once given', async (t) => {
  const { ctx, record } = await openContext(t);
  const page = await ctx.newPage();
  await page.goto(`${serve.url}/ui?container=${shop.containers.orders_clean}`);
  const dialog = page.locator('#token-dialog');
  await dialog.waitFor({ state: 'visible' });
  assert.match(await page.locator('#token-reason').textContent(), /401/);
  await shot(page, 'token-dialog');
  await dialog.locator('button[value=cancel]').click();
  await page.waitForSelector('#alert[data-kind=unauthenticated]');
  assert.match(await page.locator('#alert').textContent(), /needs an API token \(401\)/);
  await page.waitForTimeout(300);
  assert.equal(await dialog.isVisible(), false, 'asked once, not again on its own');
  await shot(page, 'unauthenticated');
  await page.locator('#alert button', { hasText: 'Enter token' }).click();
  await dialog.waitFor({ state: 'visible' });
  await page.locator('#token-input').fill(admin);
  await page.keyboard.press('Enter');
  await drawn(page);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('tributary.token')), admin);
  assert.equal(await page.locator('#alert[data-kind=unauthenticated]').count(), 0);
  // A reload keeps the token (this tab's session storage), so nothing is asked.
  await page.reload();
  await drawn(page);
  assert.equal(await dialog.isVisible(), false);
  noErrors(record, '401');
});

test('without VIEWER the evidence is hidden and said so; without REPORTER the metadata too (403)', async (t) => {
  const reporter = serve.token(tag('ui-reporter'), 'MEMBER');
  const nobody = serve.token(tag('ui-nobody'), 'MEMBER');
  await api(`mutation($n: String!, $m: [String!]!, $d: Int!) { upsertTeam(input: {name: $n, members: $m, permissions: [{datastoreId: $d, permission: REPORTER}]}) { name } }`, {
    n: tag('ui-reporters'),
    m: [tag('ui-reporter')],
    d: shop.datastore.id,
  });
  const id = shop.containers.orders_clean;
  const evidence = (await api('query($id: Int!) { edges(containerId: $id) { items { targetContainerId evidence { details } } } }', { id }, reporter)).edges.items;
  assert.ok(evidence.some((e) => e.targetContainerId === id && e.evidence.length && e.evidence.every((x) => x.details === null)), 'the API hides the details');

  for (const [who, token] of [['reporter', reporter], ['nobody', nobody]]) {
    const { ctx, record } = await openContext(t, { token });
    const page = await ctx.newPage();
    await page.goto(`${serve.url}/ui?container=${id}&depth=2&sel=c${id}`);
    await drawn(page);
    await panelLoaded(page, `c${id}`);
    const hidden = page.locator('#panel [data-hidden-evidence]');
    assert.ok((await hidden.count()) >= 2, `${who}: each incoming edge's evidence says it is hidden`);
    assert.match(await hidden.first().textContent(), /403.*VIEWER/);
    assert.equal(await page.locator('#panel .evidence[data-visible=true]').count(), 0);
    // The rest of the panel is there.
    assert.ok((await page.locator('#panel tr[data-field-id]').count()) === 3);
    const meta = page.locator('#panel [data-section=metadata]');
    if (who === 'reporter') {
      assert.ok((await meta.locator('li[data-attribute]').count()) >= 2, 'REPORTER sees the metadata');
    } else {
      await meta.locator('[data-refused=forbidden]').waitFor();
      assert.match(await meta.innerText(), /Not allowed \(403\)/);
    }
    await shot(page, `forbidden-${who}`);
    noErrors(record, `403 ${who}`);
  }
});

test('a store that is unavailable is said so, and Retry draws once it answers', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  await page.route('**/graphql', (route) =>
    route.request().method() === 'POST'
      ? route.fulfill({
          status: 200,
          contentType: 'application/json',
          body: JSON.stringify({ data: null, errors: [{ message: 'The store is unavailable or too slow; try again', extensions: { code: 'UNAVAILABLE' } }] }),
        })
      : route.fallback(),
  );
  await page.goto(`${serve.url}/ui?container=${shop.containers.orders_clean}`);
  await page.waitForSelector('#alert[data-kind=unavailable]');
  assert.match(await page.locator('#alert').textContent(), /unavailable or too slow \(UNAVAILABLE\)/);
  await shot(page, 'unavailable');
  await page.unroute('**/graphql');
  await page.locator('#alert button', { hasText: 'Retry' }).click();
  await drawn(page);
  noErrors(record, 'unavailable');
});

test('dark mode, the list view, and the PNG and SVG exports', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin, colorScheme: 'dark' });
  const page = await ctx.newPage();
  await page.goto(`${serve.url}/ui?container=${shop.containers.orders_clean}&depth=2`);
  await drawn(page);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(18, 22, 28)', 'the dark scheme');
  await shot(page, 'dark');
  const png = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]).then(([d]) => d.path());
  assert.deepEqual([...readFileSync(png).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  const svgPath = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]).then(([d]) => d.path());
  const svg = readFileSync(svgPath, 'utf8');
  assert.match(svg, /^<svg /);
  for (const name of [shop.names.orders_clean, shop.names.customers]) assert.ok(svg.includes(name), name);
  await page.click('#view-toggle');
  await page.waitForURL(/view=list/);
  assert.equal(await page.locator('#node-list').isVisible(), true);
  await shot(page, 'list-view');
  noErrors(record, 'dark');
});

test('GraphiQL at GET /graphql renders and runs a query with nothing but this server', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  const response = await page.goto(`${serve.url}/graphql`);
  assert.equal(response.status(), 200);
  await page.waitForSelector('.graphiql-container', { timeout: 30000 });
  await page.waitForSelector('.graphiql-query-editor .CodeMirror');
  await page.locator('.graphiql-execute-button').click();
  await page.waitForFunction(() => /"total"/.test(document.querySelector('.graphiql-response')?.textContent ?? ''), null, { timeout: 30000 });
  await shot(page, 'graphiql');
  assert.ok(record.requests.length > 0);
  for (const r of record.requests) assert.match(new URL(r.url).hostname, /^(127\.0\.0\.1|localhost)$/, r.url);
  noErrors(record, 'graphiql');
});

test('2,000 nodes: every node is in the page, and a pan and a zoom complete', { timeout: 900000 }, async (t) => {
  const started = Date.now();
  const big = await seedLarge(serve.url, admin, 2000);
  const seeded = Date.now();
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  await page.goto(`${serve.url}/ui?container=${big.centre}&depth=3`);
  await drawn(page, 240000);
  const want = await apiGraph(big.centre, 3);
  assert.equal(want.nodes.length, 2000);
  const got = await listed(page);
  assert.deepEqual(sorted(got.nodes.map((n) => n.key)), want.nodes);
  assert.deepEqual(sorted(got.edges.map((e) => e.key)), want.edges);
  assert.equal(await page.locator('#minimap').isVisible(), true, 'the overview map shows on a large graph');
  const timing = await page.evaluate(() => window.__tributary.lastDraw);
  const box = await page.locator('#cy').boundingBox();
  const v0 = await page.evaluate(() => window.__tributary.viewport());
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 150, box.y + box.height / 2 + 80, { steps: 10 });
  await page.mouse.up();
  await page.waitForFunction((p) => Math.abs(window.__tributary.viewport().pan.x - p) > 100, v0.pan.x, { timeout: 120000 });
  const v1 = await page.evaluate(() => window.__tributary.viewport());
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((z) => window.__tributary.viewport().zoom > z, v1.zoom, { timeout: 120000 });
  // A click still finds its node (large graphs hit-test by position).
  await clickNode(page, `c${big.centre}`);
  await panelLoaded(page, `c${big.centre}`);
  await shot(page, 'large');
  process.stderr.write(`large graph (${storeKind}): seeded in ${Math.round((seeded - started) / 1000)} s, first draw ${JSON.stringify(timing)}\n`);
  noErrors(record, 'large');
});

if (storeKind === 'embedded') {
  test('with TRIBUTARY_AUTH=off the page just works, no token asked', async (t) => {
    const open = await startServe({ auth: 'off', dataDir: serve.dir });
    try {
      const { ctx, record } = await openContext(t);
      const page = await ctx.newPage();
      await page.goto(`${open.url}/ui?container=${shop.containers.orders_clean}`);
      await drawn(page);
      assert.equal(await page.locator('#token-dialog').isVisible(), false);
      noErrors(record, 'auth off');
    } finally {
      await open.stop();
    }
  });
}
