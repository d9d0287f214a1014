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
import { seedFailedRun, seedFanout, seedLarge, seedShop } from './seed.mjs';

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
  // The home page reads its lists after the page is idle; its requests must be done before
  // the requests a pick makes are counted below.
  await page.waitForSelector('#home[data-loaded=true]');
  // The keyboard only: type, arrow down to the match, Enter.
  await page.locator('#search').focus();
  // On a shared Neo4j, this run's suffix finds this run's tables only.
  const typed = run ? `_${run}` : 'customer';
  await page.keyboard.type(typed);
  // The list for the whole text, not the first to appear: a pause while typing lets a
  // shorter text's suggestions show first, and the whole text's list replaces them later.
  await page.waitForFunction((q) => document.getElementById('suggestions').dataset.query === q, typed);
  await page.waitForSelector('#suggestions li[role=option]');
  const options = await page.locator('#suggestions li[role=option] strong').allTextContents();
  assert.ok(options.includes(shop.names.customers) && options.includes(shop.names.customer_ltv), options.join());
  // The suggestions come from `search`, ranked as the API ranks them.
  const asked = graphqlRequests(record).filter((r) => r.name === 'Search');
  assert.ok(asked.length > 0 && asked.every((r) => /\bsearch\(/.test(r.query)), JSON.stringify(asked));
  const hits = (await api('query($q: String!) { search(query: $q, kinds: [CONTAINER], first: 12) { container { name displayName } } }', { q: typed })).search;
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
  // Sentinel: a later request (Draw again) meets the same 401; once its alert is drawn anew (or
  // the dialog opens, the failure), every earlier 401 has had its chance to ask again too.
  await page.locator('#alert button').evaluate((b) => { b.dataset.before = '1'; });
  await page.locator('#search').fill('');
  await page.click('#draw');
  await page.waitForSelector('#alert[data-kind=unauthenticated] button:not([data-before]), #token-dialog[open]');
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
  // flat=1: every node drawn one by one (wide layers are not folded into groups).
  await page.goto(`${serve.url}/ui?container=${big.centre}&depth=3&flat=1`);
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


/** Copies an artifact screenshot to docs/ for the README (UI_DOCS_SCREENSHOT=1, embedded store). */
function toDocs(name, docName) {
  if (storeKind === 'embedded' && process.env.UI_DOCS_SCREENSHOT) {
    mkdirSync(join(repo, 'docs'), { recursive: true });
    copyFileSync(join(artifacts, `${name}.png`), join(repo, 'docs', docName));
  }
}

const ns = () => `postgres://${tag('warehouse')}.example.com:5432`;
const fqn = (schema, key) => `shop.${schema}.${shop.names[key] ?? tag(key)}`;
let failed;
async function failedRun() {
  failed ??= await seedFailedRun(serve.url, admin, { ns: ns(), input: fqn('staging', 'orders_clean'), output: fqn('mart', 'revenue_daily') });
  const job = (await api('query($n: String!, $m: String!) { job(namespace: $n, name: $m) { id latestRun { state } } }', { n: failed.namespace, m: failed.name })).job;
  return { ...failed, id: job.id, state: job.latestRun.state };
}

test('the home lists the latest changes (live), the failed runs, datastores and jobs; each opens the graph', async (t) => {
  const run = await failedRun();
  assert.equal(run.state, 'FAIL');
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.goto(`${serve.url}/ui`);
  await page.waitForSelector('#home[data-loaded=true]');
  // The failed run, with its error, links to its job's graph.
  const incident = page.locator(`#home li[data-incident="${run.runId}"]`);
  await incident.waitFor();
  assert.match(await incident.innerText(), /FAIL[\s\S]*division by zero/);
  assert.equal(await incident.locator(`[data-outputs] a[href*="container=${shop.containers.revenue_daily}&"]`).count(), 1, 'the table it left stale');
  // Datastores with their counts.
  const store = page.locator(`#home details[data-datastore-id="${shop.datastore.id}"]`);
  assert.match(await store.innerText(), /7 tables/);
  // Jobs, with their latest run's state.
  assert.equal(await page.locator(`#home [data-home=jobs] li[data-job-id="${run.id}"] .state`).textContent(), 'FAIL');
  // A change made now shows up without a reload (the page reads on from the log's end).
  const made = (await api(`mutation { createEdge(input: {sourceContainerId: ${shop.containers.customers}, targetContainerId: ${shop.containers.board_kpis}, description: "home test"}) { id } }`)).createEdge;
  const change = page.locator(`#home li[data-change=EDGE_ASSERTED][data-edge-id="${made.id}"]`);
  await change.waitFor({ timeout: 20000 });
  assert.match(await change.innerText(), new RegExp(`${shop.names.customers} → ${shop.names.board_kpis}`));
  await shot(page, 'home');
  toDocs('home', 'explorer-home.png');
  // The change opens the graph on it, its source selected.
  await change.locator('a').click();
  await drawn(page);
  assert.match(page.url(), new RegExp(`container=${shop.containers.board_kpis}&depth=2&sel=c${shop.containers.customers}`));
  assert.ok((await listed(page)).edges.some((e) => e.key === `e${made.id}`));
  await api(`mutation { deleteEdge(id: ${made.id}) }`);
  // Back home; the incident opens the job's graph with its panel.
  await page.goto(`${serve.url}/ui`);
  await page.locator(`#home li[data-incident="${run.runId}"] a[href*="job="]`).click();
  await drawn(page);
  assert.match(page.url(), new RegExp(`job=${run.id}`));
  await panelLoaded(page, `j${run.id}`);
  noErrors(record, 'home');
});

test('jobs on the graph: drawn between tables with their latest run state; a job link centres on it with its run history', async (t) => {
  const run = await failedRun();
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  const id = shop.containers.orders_clean;
  await page.goto(`${serve.url}/ui?container=${id}&depth=2`);
  await drawn(page);
  await page.locator('#jobs-toggle').check();
  await page.waitForURL(/jobs=1/);
  await drawn(page);
  const g = (await api('query($id: Int!) { lineageGraph(containerId: $id, depth: 2, includeJobs: true) { jobs { id name latestRun { state } } } }', { id })).lineageGraph;
  const jobs = await page.locator('#node-list li[data-kind=job]').evaluateAll((lis) => lis.map((li) => `${li.dataset.node}:${li.dataset.runState}`));
  assert.deepEqual(sorted(jobs), sorted(g.jobs.map((j) => `j${j.id}:${j.latestRun?.state ?? 'NONE'}`)));
  assert.ok(jobs.includes(`j${run.id}:FAIL`), jobs.join());
  assert.ok(jobs.some((j) => j.endsWith(':COMPLETE')));
  // Edges from each input to its job and from the job to each output.
  const edges = (await listed(page)).edges;
  assert.ok(edges.some((e) => e.source === `c${id}` && e.target === `j${run.id}`));
  assert.ok(edges.some((e) => e.source === `j${run.id}` && e.target === `c${shop.containers.revenue_daily}`));
  await page.click('#fit');
  await shot(page, 'jobs');
  toDocs('jobs', 'explorer-jobs.png');
  // The table's panel: its producers and consumers, its health with the causes.
  await page.goto(`${serve.url}/ui?container=${id}&depth=2&jobs=1&sel=c${shop.containers.revenue_daily}`);
  await drawn(page);
  await panelLoaded(page, `c${shop.containers.revenue_daily}`);
  const health = page.locator('#panel [data-section=health]');
  assert.equal(await health.locator('[data-health]').getAttribute('data-health'), 'FAILED');
  assert.equal(await health.locator(`[data-causes] li[data-run-id="${run.runId}"]`).count(), 1);
  assert.equal(await health.locator(`[data-jobs=producers] li[data-job-id="${run.id}"]`).count(), 1);
  // /ui?job=<id>: centred on the job, its panel with the run history.
  await page.goto(`${serve.url}/ui?job=${run.id}&sel=j${run.id}`);
  await drawn(page);
  await panelLoaded(page, `j${run.id}`);
  const centre = (await listed(page)).nodes[0];
  assert.equal(centre.key, `j${run.id}`);
  const rows = await page.locator('#panel table.runs tr[data-run-id]').evaluateAll((trs) => trs.map((tr) => `${tr.dataset.runId}:${tr.dataset.state}`));
  assert.deepEqual(rows, [`${run.runId}:FAIL`]);
  assert.match(await page.locator('#panel table.runs').innerText(), /division by zero/);
  assert.equal(await page.locator(`#panel [data-io=out] li[data-node="c${shop.containers.revenue_daily}"]`).count(), 1);
  await shot(page, 'job-panel');
  noErrors(record, 'jobs');
});

test('time: the as-of control hides an edge created after the instant; since draws the diff; early instants are clamped', async (t) => {
  const q = (query) => api(query);
  const made = await q(`mutation {
    a: upsertContainer(input: {datastoreId: ${shop.datastore.id}, database: "shop", schema: "time", name: "${tag('t_old_source')}", containerType: "table"}) { id }
    b: upsertContainer(input: {datastoreId: ${shop.datastore.id}, database: "shop", schema: "time", name: "${tag('t_new_source')}", containerType: "table"}) { id }
    x: upsertContainer(input: {datastoreId: ${shop.datastore.id}, database: "shop", schema: "time", name: "${tag('t_target')}", containerType: "table"}) { id }
  }`);
  const name = (k) => `shop.time.${tag(k)}`;
  await q(`mutation { recordLineage(target: "${name('t_target')}", sources: ["${name('t_old_source')}"], operation: "INSERT") { status } }`);
  await new Promise((r) => setTimeout(r, 1500));
  const instant = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  await new Promise((r) => setTimeout(r, 1500));
  await q(`mutation { recordLineage(target: "${name('t_target')}", sources: ["${name('t_new_source')}"], operation: "CTAS") { edgesRetired } }`);
  const edges = (await api('query($id: Int!) { edges(containerId: $id, includeRetired: true) { items { id sourceContainerId retiredAt } } }', { id: made.x.id })).edges.items;
  const oldEdge = `e${edges.find((e) => e.sourceContainerId === made.a.id).id}`;
  const newEdge = `e${edges.find((e) => e.sourceContainerId === made.b.id).id}`;

  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  await page.goto(`${serve.url}/ui?container=${made.x.id}&depth=1`);
  await drawn(page);
  let keys = (await listed(page)).edges.map((e) => e.key);
  assert.deepEqual(keys, [newEdge], 'now: the CTAS replaced the old source');
  // The as-of control, to the second (UTC).
  await page.fill('#as-of', instant.slice(0, 19));
  await page.locator('#as-of').dispatchEvent('change');
  await page.waitForURL(/asOf=/);
  await drawn(page);
  keys = (await listed(page)).edges.map((e) => e.key);
  assert.deepEqual(keys, [oldEdge], `as of ${instant}: the edge created after it is hidden, the one retired after it is back`);
  assert.equal(new URL(page.url()).searchParams.get('asOf'), new Date(instant).toISOString());
  // Changed since the instant: the appeared edge and the retired one, coloured apart.
  await page.goto(`${serve.url}/ui?container=${made.x.id}&depth=1&since=${encodeURIComponent(instant)}`);
  await drawn(page);
  const got = Object.fromEntries((await listed(page)).edges.map((e) => [e.key, e]));
  const changes = await page.locator('#edge-list li').evaluateAll((lis) => Object.fromEntries(lis.map((li) => [li.dataset.edge, li.dataset.change])));
  assert.equal(changes[newEdge], 'appeared');
  assert.equal(changes[oldEdge], 'retired');
  assert.equal(got[oldEdge].retired, true);
  const classes = await page.evaluate(([a, b]) => [window.__tributary.classes(a), window.__tributary.classes(b)], [newEdge, oldEdge]);
  assert.ok(classes[0].includes('change-appeared') && classes[1].includes('change-retired'), JSON.stringify(classes));
  const colours = await page.evaluate(([a, b]) => [window.__tributary.lineColour(a), window.__tributary.lineColour(b)], [newEdge, oldEdge]);
  assert.notEqual(colours[0], colours[1]);
  // The panel lists each change with its evidence.
  assert.equal(await page.locator(`#panel [data-diff=appeared] li[data-edge-id="${newEdge.slice(1)}"]`).count(), 1);
  assert.equal(await page.locator(`#panel [data-diff=retired] li[data-edge-id="${oldEdge.slice(1)}"]`).count(), 1);
  await page.click('#fit');
  await shot(page, 'diff');
  toDocs('diff', 'explorer-diff.png');
  // Before the store's first record: clamped to it, with a note, not an error.
  await page.goto(`${serve.url}/ui?container=${made.x.id}&depth=1&asOf=2001-01-01T00:00:00Z`);
  await drawn(page);
  assert.match(await page.locator('#time-note').textContent(), /before the store’s first record/);
  assert.ok(!page.url().includes('2001-01-01'), page.url());
  noErrors(record, 'time');
});

test('explain: two selected tables, the paths between them highlighted with each hop’s evidence', async (t) => {
  const extra = (await api(`mutation { createEdge(input: {sourceContainerId: ${shop.containers.customers}, targetContainerId: ${shop.containers.customer_ltv}, description: "a second way"}) { id } }`)).createEdge;
  t.after(() => api(`mutation { deleteEdge(id: ${extra.id}) }`));
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  await page.goto(`${serve.url}/ui?container=${shop.containers.orders_clean}&depth=2&sel=c${shop.containers.customers}`);
  await drawn(page);
  await panelLoaded(page, `c${shop.containers.customers}`);
  await page.locator('#panel button[data-action=explain-from]').click();
  await page.locator(`#node-list li[data-node="c${shop.containers.customer_ltv}"] button[data-action=select]`).focus();
  await page.keyboard.press('Enter');
  await panelLoaded(page, `c${shop.containers.customer_ltv}`);
  await page.locator('#panel button[data-action=explain-to]').click();
  await page.waitForSelector('#panel [data-section=explain] [data-paths]');
  const answer = (await api(`query { explainLineage(from: {containerId: ${shop.containers.customers}}, to: {containerId: ${shop.containers.customer_ltv}}) { paths { hops { edge { id } } } } }`)).explainLineage;
  assert.equal(answer.paths.length, 2);
  assert.equal(await page.locator('#panel [data-path]').count(), 2);
  const hopEdges = answer.paths.flatMap((p) => p.hops.map((h) => `e${h.edge.id}`));
  const lit = await page.locator('#edge-list li[data-highlighted=true]').evaluateAll((lis) => lis.map((li) => li.dataset.edge));
  assert.deepEqual(sorted(lit), sorted([...new Set(hopEdges)]));
  const litNodes = (await listed(page)).nodes.filter((n) => n.highlighted).map((n) => n.key);
  assert.deepEqual(sorted(litNodes), sorted([`c${shop.containers.customers}`, `c${shop.containers.orders_clean}`, `c${shop.containers.customer_ltv}`]));
  assert.match(await page.locator('#panel [data-section=explain]').innerText(), /evidence: /);
  await shot(page, 'explain');
  noErrors(record, 'explain');
});

test('a 1 -> 30 -> 900 fan-out: the 900 fold into a group per feeding table, which opens on demand', { timeout: 600000 }, async (t) => {
  const fan = await seedFanout(serve.url, admin, 30);
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  await page.goto(`${serve.url}/ui?container=${fan.root}&depth=2`);
  await drawn(page, 120000);
  const draw = await page.evaluate(() => window.__tributary.lastDraw);
  assert.equal(draw.nodes, 931);
  assert.equal(draw.groups, 30);
  assert.equal(draw.drawnNodes, 61, 'the root, the 30, and one group for each of them');
  const groups = await page.locator('#node-list > li[data-kind=group]').evaluateAll((lis) => lis.map((li) => ({ key: li.dataset.node, members: li.querySelectorAll('li[data-node]').length })));
  assert.equal(groups.length, 30);
  for (const g of groups) assert.equal(g.members, 30, g.key);
  // Which of the 30 feeds which group: one edge from each to its own group.
  const edges = (await listed(page)).edges.filter((e) => e.source.startsWith('c') && e.target.startsWith('g'));
  assert.deepEqual(sorted(edges.map((e) => `${e.source}>${e.target}`)), sorted(fan.mids.map((m) => `c${m}>gd:c${m}`)));
  // A tall window for the picture, so that the 30 and their groups are drawn large enough to read.
  await page.setViewportSize({ width: 1400, height: 1700 });
  await page.waitForTimeout(300);
  await page.click('#fit');
  await page.waitForTimeout(300);
  await shot(page, 'fanout');
  await page.setViewportSize({ width: 1400, height: 900 });
  toDocs('fanout', 'explorer-fanout.png');
  // Select a group: its tables listed; open it: its 30 tables drawn one by one.
  const group = `gd:c${fan.mids[0]}`;
  await page.locator(`#node-list li[data-node="${group}"] button[data-action=select]`).focus();
  await page.keyboard.press('Enter');
  await panelLoaded(page, group);
  assert.equal(await page.locator('#panel ul[data-members] li').count(), 30);
  await page.locator('#panel button[data-action=open-group]').click();
  await page.waitForURL(/open=/);
  await drawn(page);
  const after = await page.evaluate(() => window.__tributary.lastDraw);
  assert.equal(after.groups, 29);
  assert.equal(after.drawnNodes, 61 - 1 + 30);
  assert.ok(await page.evaluate((k) => window.__tributary.nodePosition(k) != null, `c${fan.leaves[0]}`));
  // A node budget (maxNodes): the answer is cut, and the page says where, why and how much.
  await page.goto(`${serve.url}/ui?container=${fan.root}&depth=2&max=100`);
  await drawn(page);
  const cut = (await api(`query { lineageGraph(containerId: ${fan.root}, depth: 2, maxNodes: 100) { isPartial nodes { id } frontier { id reason beyond } } }`)).lineageGraph;
  assert.equal(cut.isPartial, true);
  const tagged = await page.locator('#node-list li[data-cut-reason]').evaluateAll((lis) => lis.map((li) => `${li.dataset.node}:${li.dataset.cutReason}:${li.dataset.beyond}`));
  const byId = new Map();
  for (const f of cut.frontier) byId.set(f.id, { reason: f.reason, beyond: (byId.get(f.id)?.beyond ?? 0) + f.beyond });
  assert.deepEqual(sorted(tagged), sorted([...byId].map(([id, f]) => `c${id}:${f.reason}:${f.beyond}`)));
  assert.match(await page.locator('#status').textContent(), /Cut \(.*the 100-node budget/);
  noErrors(record, 'fan-out');
});

test('the column view draws fields inside their tables and the field edges between them', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  await page.goto(`${serve.url}/ui?container=${shop.containers.orders_clean}&depth=1&view=columns`);
  await drawn(page);
  await page.waitForSelector('#columns-view[data-edges]');
  const paths = await page.locator('#columns-view path[data-edge-id]').evaluateAll((ps) => ps.map((p) => ({ id: p.dataset.edgeId, style: p.dataset.style, s: p.dataset.sourceField, t: p.dataset.targetField })));
  const f = shop.fields;
  assert.ok(paths.some((p) => Number(p.s) === f.orders.id && Number(p.t) === f.orders_clean.order_id && p.style === 'copy'), JSON.stringify(paths));
  assert.ok(paths.some((p) => Number(p.s) === f.customers.email && Number(p.t) === f.orders_clean.email && p.style === 'derived'));
  assert.equal(await page.locator(`#columns-view text[data-field-id="${f.orders_clean.amount}"]`).count(), 1);
  await shot(page, 'columns');
  noErrors(record, 'columns');
});

test('fixes: sel= takes a bare id; same-named tables get a qualified name; the token dialog suggests a role that can read', async (t) => {
  const { ctx, record } = await openContext(t, { token: admin });
  const page = await ctx.newPage();
  const id = shop.containers.orders_clean;
  await page.goto(`${serve.url}/ui?container=${id}&sel=${shop.containers.customers}`);
  await drawn(page);
  await panelLoaded(page, `c${shop.containers.customers}`);
  assert.equal(await page.locator('#panel-title').textContent(), shop.names.customers);
  // A second "orders" in another schema, feeding orders_clean: both are drawn qualified.
  const twin = (await api(`mutation { upsertContainer(input: {datastoreId: ${shop.datastore.id}, database: "shop", schema: "archive", name: "${shop.names.orders}", containerType: "table"}) { id } }`)).upsertContainer;
  const edge = (await api(`mutation { createEdge(input: {sourceContainerId: ${twin.id}, targetContainerId: ${id}}) { id } }`)).createEdge;
  t.after(() => api(`mutation { deleteEdge(id: ${edge.id}) }`));
  await page.goto(`${serve.url}/ui?container=${id}&depth=1`);
  await drawn(page);
  const q = await page.locator('#node-list li[data-qualified]').evaluateAll((lis) => lis.map((li) => li.dataset.qualified));
  assert.deepEqual(sorted(q), sorted([`shop.raw.${shop.names.orders}`, `shop.archive.${shop.names.orders}`]));
  // The token dialog names a role and team permission that can read.
  const hint = await page.locator('#token-dialog .hint').textContent();
  assert.match(hint, /--team TEAM/);
  assert.match(hint, /VIEWER/);
  assert.match(hint, /sees evidence details, metadata and restricted jobs hidden/);
  noErrors(record, 'fixes');
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
