// Test data for the "at a glance" browser tests (glance.test.mjs) and the README's screenshots
// (screenshots.mjs), written through the public GraphQL API only: a 15-table chain, a 30-table
// fan-out, a dbt-like project with long names whose nightly run failed (real OpenLineage START
// and FAIL events), column lineage across three tables, and a source replaced since an instant.
import { randomUUID } from 'node:crypto';
import { gql, tag } from './harness.mjs';

const PRODUCER = 'https://example.com/tributary-ui-tests';
const RUN_SCHEMA = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';

async function datastore(url, admin, name, type = 'postgresql', namespaces = []) {
  return (
    await gql(url, admin, `mutation($n: String!, $t: String!, $ns: [String!]!) { upsertDatastore(input: {name: $n, type: $t, storeType: "jdbc", namespaces: $ns}) { id name } }`, {
      n: tag(name),
      t: type,
      ns: namespaces,
    })
  ).upsertDatastore;
}

/** Tables `[{ key, schema, name, fields }]` in datastore `ds` (database `db`): key → `{ id, fields: name → id }`. */
async function tables(url, admin, ds, db, list) {
  const out = {};
  for (let i = 0; i < list.length; i += 40) {
    const chunk = list.slice(i, i + 40);
    const body = chunk
      .map(
        (t, j) =>
          `t${j}: upsertContainer(input: {datastoreId: ${ds.id}, database: "${db}", schema: "${t.schema}", name: "${t.name}", containerType: "table"${
            t.fields ? `, fields: [${t.fields.map((f) => `{name: "${f}", type: "text"}`).join(', ')}]` : ''
          }}) { id fields(size: 50) { items { id name } } }`,
      )
      .join('\n');
    const made = await gql(url, admin, `mutation { ${body} }`);
    chunk.forEach((t, j) => {
      out[t.key] = { id: made[`t${j}`].id, name: t.name, fields: Object.fromEntries(made[`t${j}`].fields.items.map((f) => [f.name, f.id])) };
    });
  }
  return out;
}

async function edges(url, admin, pairs) {
  for (let i = 0; i < pairs.length; i += 40) {
    const chunk = pairs.slice(i, i + 40);
    const body = chunk.map(([s, t], j) => `e${j}: createEdge(input: {sourceContainerId: ${s}, targetContainerId: ${t}, sourceType: "catalog_import"}) { id }`).join('\n');
    await gql(url, admin, `mutation { ${body} }`);
  }
}

/** A chain of `length` tables, each feeding the next. Returns the ids in order. */
export async function seedChain(url, admin, length = 15, prefix = 'step') {
  const ds = await datastore(url, admin, 'chain', 'snowflake');
  const list = Array.from({ length }, (_, i) => ({ key: i, schema: 'steps', name: tag(`${prefix}_${String(i).padStart(2, '0')}_of_the_nightly_chain`) }));
  const t = await tables(url, admin, ds, 'pipeline', list);
  const ids = list.map((x) => t[x.key].id);
  await edges(url, admin, ids.slice(1).map((id, i) => [ids[i], id]));
  return ids;
}

/** One table feeding `width - 1` others: `width` tables in all. */
export async function seedFanout30(url, admin, width = 30) {
  const ds = await datastore(url, admin, 'fan30', 'bigquery');
  const list = [{ key: 'root', schema: 'raw', name: tag('events_raw') }];
  for (let i = 1; i < width; i++) list.push({ key: `leaf${i}`, schema: 'marts', name: tag(`events_by_${['country', 'device', 'campaign', 'hour', 'product'][i % 5]}_${String(i).padStart(2, '0')}`) });
  const t = await tables(url, admin, ds, 'analytics', list);
  await edges(url, admin, list.slice(1).map((x) => [t.root.id, t[x.key].id]));
  return { root: t.root.id, leaves: list.slice(1).map((x) => t[x.key].id) };
}

function runEvent({ eventType, runId, job, inputs, outputs, minutesAgo, error = null }) {
  return {
    eventType,
    eventTime: new Date(Date.now() - minutesAgo * 60000).toISOString(),
    producer: PRODUCER,
    schemaURL: RUN_SCHEMA,
    run: {
      runId,
      facets: error
        ? { errorMessage: { _producer: PRODUCER, _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json', message: error, programmingLanguage: 'SQL' } }
        : {},
    },
    job,
    inputs,
    outputs,
  };
}

async function ingest(url, admin, events) {
  const report = (await gql(url, admin, 'mutation($e: [JSON!]!) { ingestOpenLineage(events: $e) { applied events { status errors { message } } } }', { e: events })).ingestOpenLineage;
  // A FAIL that changes no lineage is "recorded" (its run state, no lineage); none is rejected or failed.
  if (!report.events.every((e) => ['applied', 'recorded', 'ignored'].includes(e.status))) throw new Error(`OpenLineage: ${JSON.stringify(report)}`);
}

/**
 * A dbt-style project of 13 tables with long names, built by one dbt job per model (OpenLineage
 * COMPLETE runs). Then the nightly run of the job building `fct_revenue_by_region_and_channel_daily`
 * starts and fails (START, FAIL): that table is FAILED, the three built from it STALE, the rest
 * fresh. Returns the tables (key → `{ id, name }`), the failed job and its run id.
 */
export async function seedProject(url, admin) {
  const ns = `postgres://${tag('dwh')}.example.com:5432`;
  const ds = await datastore(url, admin, 'dwh', 'postgresql', [ns]);
  const model = (key, schema, name, fields = ['id', 'amount', 'region', 'channel', 'day']) => ({ key, schema, name: tag(name), fields });
  const list = [
    model('orders', 'raw', 'raw_shop_orders'),
    model('payments', 'raw', 'raw_payment_provider_transactions'),
    model('customers', 'raw', 'raw_crm_customers'),
    model('stg_orders', 'staging', 'stg_orders'),
    model('stg_payments', 'staging', 'stg_payments_deduplicated'),
    model('stg_customers', 'staging', 'stg_customers'),
    model('int_orders', 'intermediate', 'int_orders_joined_with_payments'),
    model('dim_customers', 'marts', 'dim_customers'),
    model('fct_revenue', 'marts', 'fct_revenue_by_region_and_channel_daily'),
    model('rpt_board', 'reporting', 'rpt_board_revenue_weekly'),
    model('rpt_marketing', 'reporting', 'rpt_marketing_attribution_last_touch'),
    model('rpt_finance', 'reporting', 'rpt_finance_revenue_reconciliation'),
    model('rpt_ltv', 'reporting', 'rpt_customer_lifetime_value'),
  ];
  const t = await tables(url, admin, ds, 'analytics', list);
  const name = (key) => `analytics.${list.find((x) => x.key === key).schema}.${t[key].name}`;
  const builds = [
    ['stg_orders', ['orders']],
    ['stg_payments', ['payments']],
    ['stg_customers', ['customers']],
    ['int_orders', ['stg_orders', 'stg_payments']],
    ['dim_customers', ['stg_customers']],
    ['fct_revenue', ['int_orders', 'dim_customers']],
    ['rpt_board', ['fct_revenue']],
    ['rpt_marketing', ['fct_revenue', 'dim_customers']],
    ['rpt_finance', ['fct_revenue']],
    ['rpt_ltv', ['dim_customers']],
  ];
  const jobNs = tag('dbt');
  const events = [];
  for (const [out, ins] of builds) {
    const runId = randomUUID();
    const job = { namespace: jobNs, name: `analytics.${t[out].name}` };
    const io = { inputs: ins.map((k) => ({ namespace: ns, name: name(k) })), outputs: [{ namespace: ns, name: name(out) }] };
    events.push(runEvent({ eventType: 'START', runId, job, ...io, minutesAgo: 90 }), runEvent({ eventType: 'COMPLETE', runId, job, ...io, minutesAgo: 88 }));
  }
  await ingest(url, admin, events);
  // Tonight's run of fct_revenue: started, then failed.
  const runId = randomUUID();
  const job = { namespace: jobNs, name: `analytics.${t.fct_revenue.name}` };
  const io = { inputs: ['int_orders', 'dim_customers'].map((k) => ({ namespace: ns, name: name(k) })), outputs: [{ namespace: ns, name: name('fct_revenue') }] };
  await ingest(url, admin, [
    runEvent({ eventType: 'START', runId, job, ...io, minutesAgo: 5 }),
    runEvent({ eventType: 'FAIL', runId, job, ...io, minutesAgo: 4, error: 'division by zero in revenue_per_order' }),
  ]);
  const jobId = (await gql(url, admin, 'query($n: String!, $m: String!) { job(namespace: $n, name: $m) { id } }', { n: job.namespace, m: job.name })).job.id;
  return { tables: t, ns, datastore: ds, job: { id: jobId, ...job }, runId };
}

/** Three tables whose column `x` is copied along (a.x → b.x → c.x), and a `y` derived on the way. */
export async function seedColumns(url, admin) {
  const ds = await datastore(url, admin, 'cols', 'postgresql');
  const t = await tables(url, admin, ds, 'shop', [
    { key: 'a', schema: 'raw', name: tag('col_orders'), fields: ['id', 'x', 'y'] },
    { key: 'b', schema: 'staging', name: tag('col_orders_clean'), fields: ['id', 'x', 'y'] },
    { key: 'c', schema: 'mart', name: tag('col_orders_daily'), fields: ['day', 'x', 'y_total'] },
  ]);
  await gql(
    url,
    admin,
    `mutation {
      ab: createEdge(input: {sourceFieldId: ${t.a.fields.x}, targetFieldId: ${t.b.fields.x}}) { id }
      bc: createEdge(input: {sourceFieldId: ${t.b.fields.x}, targetFieldId: ${t.c.fields.x}}) { id }
      ay: createEdge(input: {sourceFieldId: ${t.a.fields.y}, targetFieldId: ${t.b.fields.y}}) { id }
      by: createEdge(input: {sourceFieldId: ${t.b.fields.y}, targetFieldId: ${t.c.fields.y_total}, description: "sum(y)"}) { id }
    }`,
  );
  return t;
}

/**
 * A target fed by eight tables, one of which an external engine's CTAS replaced after `instant`
 * (its edge retired, a new one appeared). Returns the target, the instant and both edges' keys.
 */
export async function seedReplaced(url, admin) {
  const ds = await datastore(url, admin, 'diffs', 'snowflake');
  const list = [
    { key: 'target', schema: 'mart', name: tag('sales_summary') },
    { key: 'old', schema: 'raw', name: tag('sales_legacy_export') },
    { key: 'new', schema: 'raw', name: tag('sales_events_stream') },
  ];
  for (let i = 0; i < 8; i++) list.push({ key: `other${i}`, schema: 'raw', name: tag(`sales_dim_${['store', 'region', 'calendar', 'product', 'promo', 'currency', 'channel', 'staff'][i]}`) });
  const t = await tables(url, admin, ds, 'sales', list);
  const fq = (key) => `sales.${list.find((x) => x.key === key).schema}.${t[key].name}`;
  await gql(url, admin, `mutation { recordLineage(target: "${fq('target')}", sources: ["${fq('old')}"], operation: "INSERT") { status } }`);
  await edges(url, admin, list.filter((x) => x.key.startsWith('other')).map((x) => [t[x.key].id, t.target.id]));
  // A whole second apart: the API's instants are to the second in the time controls.
  await new Promise((r) => setTimeout(r, 1200));
  const instant = new Date(Math.floor(Date.now() / 1000) * 1000 + 1000).toISOString();
  await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(instant) - Date.now()) + 1200));
  await gql(url, admin, `mutation { recordLineage(target: "${fq('target')}", sources: ["${fq('new')}"], operation: "CTAS") { edgesRetired } }`);
  const all = (await gql(url, admin, 'query($id: Int!) { edges(containerId: $id, includeRetired: true, size: 100) { items { id sourceContainerId retiredAt } } }', { id: t.target.id })).edges.items;
  const retired = all.find((e) => e.sourceContainerId === t.old.id && e.retiredAt);
  const appeared = all.find((e) => e.sourceContainerId === t.new.id && !e.retiredAt);
  return { tables: t, instant, retired: `e${retired.id}`, appeared: `e${appeared.id}` };
}
