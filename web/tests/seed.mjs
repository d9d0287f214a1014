// Test data, written through the public GraphQL API only: a small shop whose lineage has every
// kind of edge the page shows (OpenLineage with job and run evidence and column lineage, SQL
// capture, an external engine's CTAS that retired an older source, manual edges, an external
// asset, user and source metadata), and a layered graph of 2,000 containers.
import { randomUUID } from 'node:crypto';
import { gql, tag } from './harness.mjs';

const PRODUCER = 'https://example.com/tributary-ui-tests';
const RUN_SCHEMA = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';

function olEvent({ job, runId, inputs, output, columns = null, description = null }) {
  const facets = {};
  if (columns) {
    facets.columnLineage = {
      _producer: PRODUCER,
      _schemaURL: 'https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json',
      fields: columns,
    };
  }
  if (description) facets.documentation = { _producer: PRODUCER, _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/DocumentationDatasetFacet.json', description };
  return {
    eventType: 'COMPLETE',
    eventTime: new Date(Date.now() - 60000).toISOString(),
    producer: PRODUCER,
    schemaURL: RUN_SCHEMA,
    run: { runId },
    job,
    inputs,
    outputs: [{ ...output, facets }],
  };
}


/**
 * The shop. Centred on orders_clean at depth 2 (both ways) the graph is: landing file (external)
 * → orders → orders_clean ← customers; orders_clean → revenue_daily → finance_report;
 * orders_clean → customer_ltv. finance_report feeds board_kpis, one step beyond depth 2.
 */
export async function seedShop(url, admin) {
  const ns = `postgres://${tag('warehouse')}.example.com:5432`;
  const q = (query, variables) => gql(url, admin, query, variables);
  const ds = (await q(`mutation($n: String!, $ns: [String!]!) { upsertDatastore(input: {name: $n, type: "postgresql", storeType: "jdbc", namespaces: $ns}) { id name } }`, { n: tag('warehouse'), ns: [ns] })).upsertDatastore;
  const name = tag;
  const tables = {
    orders: ['raw', ['id', 'customer_id', 'amount', 'created_at']],
    customers: ['raw', ['id', 'email', 'full_name']],
    orders_clean: ['staging', ['order_id', 'email', 'amount']],
    revenue_daily: ['mart', ['day', 'revenue']],
    customer_ltv: ['mart', ['email', 'ltv']],
    finance_report: ['mart', ['day', 'total']],
    board_kpis: ['mart', ['kpi', 'value']],
  };
  const parts = Object.entries(tables).map(
    ([key, [schema, fields]]) =>
      `${key}: upsertContainer(input: {datastoreId: ${ds.id}, database: "shop", schema: "${schema}", name: "${name(key)}", containerType: "table",
        fields: [${fields.map((f) => `{name: "${f}", type: "text"}`).join(', ')}]}) { id name fields(size: 20) { items { id name } } }`,
  );
  const made = await q(`mutation { ${parts.join('\n')} }`);
  const c = {};
  const f = {};
  for (const [key, v] of Object.entries(made)) {
    c[key] = v.id;
    f[key] = Object.fromEntries(v.fields.items.map((x) => [x.name, x.id]));
  }
  const fqn = (key) => `shop.${tables[key][0]}.${name(key)}`;

  // OpenLineage: the landing file loads orders; dbt builds orders_clean with column lineage and a
  // description (a source's metadata).
  const events = [
    olEvent({
      job: { namespace: tag('ingest'), name: 'load_orders' },
      runId: randomUUID(),
      inputs: [{ namespace: `s3://${tag('landing')}`, name: 'orders.csv' }],
      output: { namespace: ns, name: fqn('orders') },
    }),
    olEvent({
      job: { namespace: tag('dbt'), name: 'orders_clean' },
      runId: randomUUID(),
      inputs: [{ namespace: ns, name: fqn('orders') }, { namespace: ns, name: fqn('customers') }],
      output: { namespace: ns, name: fqn('orders_clean') },
      description: 'Orders, cleaned by dbt',
      columns: {
        order_id: { inputFields: [{ namespace: ns, name: fqn('orders'), field: 'id', transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }] }] },
        amount: { inputFields: [{ namespace: ns, name: fqn('orders'), field: 'amount', transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }] }] },
        email: { inputFields: [{ namespace: ns, name: fqn('customers'), field: 'email', transformations: [{ type: 'DIRECT', subtype: 'TRANSFORMATION', description: 'lower(trim(email))' }] }] },
      },
    }),
  ];
  const report = (await q('mutation($e: [JSON!]!) { ingestOpenLineage(events: $e) { applied events { status errors { message } } } }', { e: events })).ingestOpenLineage;
  if (report.applied !== events.length) throw new Error(`OpenLineage seed: ${JSON.stringify(report)}`);

  // SQL capture: customer_ltv from orders_clean (INSERT_INTO; ltv derived, email copied).
  const sql = (
    await q('mutation($s: [String!]!, $d: Int!) { ingestSql(statements: $s, dialect: "postgres", datastoreId: $d) { recorded failed } }', {
      s: [`INSERT INTO ${fqn('customer_ltv')} (email, ltv) SELECT email, sum(amount) FROM ${fqn('orders_clean')} GROUP BY email`],
      d: ds.id,
    })
  ).ingestSql;
  if (sql.recorded !== 1) throw new Error(`SQL seed: ${JSON.stringify(sql)}`);

  // Manual column lineage orders_clean.amount → revenue_daily.revenue (this also makes the
  // container edge), and board_kpis from finance_report.
  await q(`mutation {
    revenue: createEdge(input: {sourceFieldId: ${f.orders_clean.amount}, targetFieldId: ${f.revenue_daily.revenue}, description: "sum(amount)"}) { id }
    day: createEdge(input: {sourceFieldId: ${f.revenue_daily.day}, targetFieldId: ${f.finance_report.day}}) { id }
    kpis: createEdge(input: {sourceContainerId: ${c.finance_report}, targetContainerId: ${c.board_kpis}, description: "quarterly board pack"}) { id }
  }`);
  // An external engine: customers fed revenue_daily once; a CTAS from orders_clean replaced it
  // (the customers edge is retired, kept with its history); finance_report is a CTAS too.
  await q(`mutation {
    old: recordLineage(target: "${fqn('revenue_daily')}", sources: ["${fqn('customers')}"], operation: "INSERT") { status }
  }`);
  await q(`mutation {
    ctas: recordLineage(target: "${fqn('revenue_daily')}", sources: ["${fqn('orders_clean')}"], operation: "CTAS") { edgesRetired }
    report: recordLineage(target: "${fqn('finance_report')}", sources: ["${fqn('revenue_daily')}"], operation: "CTAS") { status }
  }`);
  // The user's own description of orders_clean: it wins over dbt's.
  await q(`mutation { upsertContainer(input: {datastoreId: ${ds.id}, database: "shop", schema: "staging", name: "${name('orders_clean')}", description: "Orders, cleaned (owned by finance)"}) { id } }`);
  return { datastore: ds, containers: c, fields: f, names: Object.fromEntries(Object.keys(tables).map((k) => [k, name(k)])) };
}

/**
 * A layered graph of exactly `total` containers around one centre, all within depth 3: upstream
 * layers of 800, 150 and 20 tables, the centre, and downstream layers of 20, 200 and the rest.
 * Each table of a wide layer feeds one or two of the next (seeded, so the same every run).
 */
export async function seedLarge(url, admin, total = 2000) {
  const q = (query, variables) => gql(url, admin, query, variables);
  const ds = (await q(`mutation($n: String!) { upsertDatastore(input: {name: $n, type: "snowflake"}) { id } }`, { n: tag('lake') })).upsertDatastore;
  const layers = [800, 150, 20, 1, 20, 200];
  layers.push(total - layers.reduce((a, b) => a + b, 0));
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const names = layers.map((n, layer) => Array.from({ length: n }, (_, i) => tag(`big_l${layer}_${String(i).padStart(4, '0')}`)));
  const ids = new Map();
  const all = names.flat();
  for (let i = 0; i < all.length; i += 50) {
    const chunk = all.slice(i, i + 50);
    const body = chunk.map((n, j) => `c${j}: upsertContainer(input: {datastoreId: ${ds.id}, database: "lake", schema: "big", name: "${n}", containerType: "table"}) { id }`).join('\n');
    const made = await q(`mutation { ${body} }`);
    chunk.forEach((n, j) => ids.set(n, made[`c${j}`].id));
  }
  const edges = [];
  for (let k = 0; k < names.length - 1; k++) {
    const a = names[k];
    const b = names[k + 1];
    const pairs = new Set();
    const add = (s, t) => pairs.add(`${s}\n${t}`);
    if (a.length >= b.length) {
      for (const s of a) {
        add(s, b[Math.floor(rnd() * b.length)]);
        if (rnd() < 0.4) add(s, b[Math.floor(rnd() * b.length)]);
      }
    } else {
      for (const t of b) {
        add(a[Math.floor(rnd() * a.length)], t);
        if (rnd() < 0.4) add(a[Math.floor(rnd() * a.length)], t);
      }
    }
    for (const p of pairs) edges.push(p.split('\n'));
  }
  for (let i = 0; i < edges.length; i += 50) {
    const chunk = edges.slice(i, i + 50);
    const body = chunk.map(([s, t], j) => `e${j}: createEdge(input: {sourceContainerId: ${ids.get(s)}, targetContainerId: ${ids.get(t)}, sourceType: "catalog_import"}) { id }`).join('\n');
    await q(`mutation { ${body} }`);
  }
  return { datastore: ds, centre: ids.get(names[3][0]), containers: all.length, edges: edges.length };
}

/** A job whose latest run failed (START, then FAIL with an error message), writing `output`
 * from `input` (OpenLineage dataset names in namespace `ns`). Returns the job's name. */
export async function seedFailedRun(url, admin, { ns, input, output, job = 'revenue_rollup' }) {
  const runId = randomUUID();
  const base = (eventType, minutesAgo) => ({
    eventType,
    eventTime: new Date(Date.now() - minutesAgo * 60000).toISOString(),
    producer: PRODUCER,
    schemaURL: RUN_SCHEMA,
    run: {
      runId,
      facets:
        eventType === 'FAIL'
          ? { errorMessage: { _producer: PRODUCER, _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json', message: 'division by zero in revenue', programmingLanguage: 'SQL' } }
          : {},
    },
    job: { namespace: tag('nightly'), name: job },
    inputs: [{ namespace: ns, name: input }],
    outputs: [{ namespace: ns, name: output }],
  });
  const events = [base('START', 3), base('FAIL', 2)];
  const report = (await gql(url, admin, 'mutation($e: [JSON!]!) { ingestOpenLineage(events: $e) { applied events { status errors { message } } } }', { e: events })).ingestOpenLineage;
  if (report.applied !== events.length) throw new Error(`failed-run seed: ${JSON.stringify(report)}`);
  return { namespace: tag('nightly'), name: job, runId };
}

/** A fan-out: one root feeding `width` tables, each of which feeds `width` more (1 -> 30 -> 900). */
export async function seedFanout(url, admin, width = 30) {
  const q = (query, variables) => gql(url, admin, query, variables);
  const ds = (await q(`mutation($n: String!) { upsertDatastore(input: {name: $n, type: "bigquery"}) { id } }`, { n: tag('fan') })).upsertDatastore;
  const names = [tag('fan_root')];
  for (let i = 0; i < width; i++) names.push(tag(`fan_mid_${String(i).padStart(2, '0')}`));
  for (let i = 0; i < width; i++) for (let j = 0; j < width; j++) names.push(tag(`fan_leaf_${String(i).padStart(2, '0')}_${String(j).padStart(2, '0')}`));
  const ids = new Map();
  for (let i = 0; i < names.length; i += 50) {
    const chunk = names.slice(i, i + 50);
    const body = chunk.map((n, j) => `c${j}: upsertContainer(input: {datastoreId: ${ds.id}, database: "fan", schema: "out", name: "${n}", containerType: "table"}) { id }`).join('\n');
    const made = await q(`mutation { ${body} }`);
    chunk.forEach((n, j) => ids.set(n, made[`c${j}`].id));
  }
  const edges = [];
  for (let i = 0; i < width; i++) {
    edges.push([names[0], names[1 + i]]);
    for (let j = 0; j < width; j++) edges.push([names[1 + i], names[1 + width + i * width + j]]);
  }
  for (let i = 0; i < edges.length; i += 50) {
    const chunk = edges.slice(i, i + 50);
    const body = chunk.map(([s, t], j) => `e${j}: createEdge(input: {sourceContainerId: ${ids.get(s)}, targetContainerId: ${ids.get(t)}, sourceType: "catalog_import"}) { id }`).join('\n');
    await q(`mutation { ${body} }`);
  }
  return { datastore: ds, root: ids.get(names[0]), mids: names.slice(1, 1 + width).map((n) => ids.get(n)), leaves: names.slice(1 + width).map((n) => ids.get(n)), containers: names.length, edges: edges.length };
}
