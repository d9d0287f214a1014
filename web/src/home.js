// The home page (`/ui` without a container or job): where a person starts. The latest lineage
// changes from the change log (kept live by reading on from its end cursor), the failed runs and
// what they left stale (`incidents`), the datastores with their counts, and the recently active
// jobs. Every entry is a link that opens the graph on it. Only the public GraphQL API.
import { gql } from './api.js';
import { CHANGES, CHANGE_CURSORS, DATASTORE_CONTAINERS, HOME, homeCounts, incidentImpacts } from './queries.js';

/** Entries shown (a group of column changes is one), from the newest READ_CHANGES changes. */
const SHOWN_CHANGES = 15;
const READ_CHANGES = 100;
const POLL_MS = 3000;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}

export const when = (t) => (t ? t.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC') : '');

/** Text that may break after a `/ . _` (a long name wraps there, never inside a word). */
export function breakable(text) {
  const f = document.createDocumentFragment();
  for (const part of String(text).split(/(?<=[/._])/)) {
    if (f.childNodes.length) f.append(document.createElement('wbr'));
    f.append(part);
  }
  return f;
}

function link(href, text, attrs = {}) {
  return el('a', { href, ...attrs }, breakable(text));
}

function endName(edge, side) {
  const c = side === 'source' ? edge.sourceContainer ?? edge.sourceField?.container : edge.targetContainer ?? edge.targetField?.container;
  return c?.displayName || c?.name || (side === 'source' ? edge.sourceExternalFqn ?? edge.sourceNodeId : edge.targetExternalFqn ?? edge.targetNodeId) || (side === 'source' ? 'an unknown source' : 'an unknown target');
}

/** A column edge (between two fields), as against a table edge. */
const isColumnEdge = (e) => e != null && (e.sourceFieldId != null || e.targetFieldId != null);

/** The table ids at the ends of an edge (a column edge's are its fields' tables). */
const tableIds = (e) => [e.sourceContainerId ?? e.sourceField?.container?.id ?? null, e.targetContainerId ?? e.targetField?.container?.id ?? null];

/**
 * The change log's entries as a person reads them: a table change each, and the column changes
 * of one kind between one pair of tables grouped into one entry under that pair, newest first.
 */
export function groupChanges(changes) {
  const out = [];
  const groups = new Map();
  const fieldsOf = new Map();
  for (const c of changes) {
    if ((c.kind === 'FIELD_CREATED' || c.kind === 'FIELD_DROPPED') && !c.edge) {
      // A table's new (or dropped) fields: one entry, counted.
      const key = `${c.kind}:${c.containerIds.join()}`;
      let g = fieldsOf.get(key);
      if (!g) {
        g = { kind: c.kind, at: c.at, change: c, fields: 0 };
        fieldsOf.set(key, g);
        out.push(g);
      }
      g.fields++;
      continue;
    }
    if (!isColumnEdge(c.edge)) {
      out.push({ kind: c.kind, at: c.at, change: c });
      continue;
    }
    const [s, t] = tableIds(c.edge);
    const key = `${c.kind}:${s}>${t}`;
    let g = groups.get(key);
    if (!g) {
      g = { kind: c.kind, at: c.at, columns: [], change: c };
      groups.set(key, g);
      out.push(g);
    }
    g.columns.push(c);
  }
  return out;
}

const KIND_TEXT = {
  EDGE_ASSERTED: 'appeared',
  EDGE_RETIRED: 'retired',
  EDGE_REVIVED: 'revived',
  EDGE_RELABELLED: 'relabelled',
  EDGE_DELETED: 'deleted',
  CONTAINER_CREATED: 'table created',
  CONTAINER_DROPPED: 'table dropped',
  FIELD_CREATED: 'field created',
  FIELD_DROPPED: 'field dropped',
  // A dataset first seen unregistered, now a table: its jobs, edges and evidence moved to it.
  EXTERNAL_ADOPTED: 'registered as a table (was external):',
};

export class Home {
  constructor(root, { onError }) {
    this.root = root;
    this.onError = onError;
    this.timer = 0;
    this.cursor = null;
    this.changes = [];
    /** Table names by id, for the changes that carry only ids. */
    this.names = new Map();
    this.active = false;
  }

  hide() {
    this.active = false;
    clearTimeout(this.timer);
    this.root.hidden = true;
  }

  async show() {
    this.active = true;
    this.root.hidden = false;
    const section = (name, title) => {
      const s = el('section', { 'data-home': name, 'aria-labelledby': `home-${name}` }, el('h2', { id: `home-${name}`, text: title }));
      const body = el('div', {}, el('p', { class: 'loading', text: 'Loading…' }));
      s.append(body);
      return { s, body };
    };
    const intro = el(
      'section',
      { class: 'intro' },
      el('h2', { text: 'Start here' }),
      el('p', { text: 'Type a table’s name in the search box above to draw its lineage, or open anything below: a recent change, a failed run, a datastore’s tables, a job. Ctrl+K or / focuses the search.' }),
    );
    this.parts = {
      changes: section('changes', 'Latest lineage changes (live)'),
      incidents: section('incidents', 'Failed runs and the assets they left stale'),
      datastores: section('datastores', 'Datastores'),
      jobs: section('jobs', 'Recently active jobs'),
    };
    this.root.replaceChildren(intro, ...Object.values(this.parts).map((p) => p.s));
    this.root.dataset.loaded = 'false';
    try {
      const { data } = await gql(HOME);
      await this.renderIncidents(data.incidents.items);
      // The newest 100, their counts 24 datastores a request (two aliases each; a request
      // holds at most 50); the rest are found through the search.
      const stores = [...data.datastores].sort((a, b) => b.id - a.id).slice(0, 100);
      const lastPage = Math.max(1, Math.ceil(data.jobCount.total / 100));
      const counts = {};
      for (let i = 0; i === 0 || i < stores.length; i += 24) {
        const chunk = stores.slice(i, i + 24).map((d) => d.id);
        Object.assign(counts, (await gql(homeCounts(chunk, i === 0 ? lastPage : 0, i))).data);
      }
      this.renderDatastores(stores, counts, data.datastores.length);
      this.renderJobs(counts.recent.items);
      await this.loadChanges();
    } catch (e) {
      this.onError(e);
      for (const p of Object.values(this.parts)) if (p.body.querySelector('.loading')) p.body.replaceChildren(el('p', { class: 'error', text: e.message }));
    }
    this.root.dataset.loaded = 'true';
  }

  /** The newest changes: the log is read oldest first, so the page walks to its end with
   * cursors only, then reads the last page whole. */
  async loadChanges() {
    let after = null;
    let tail = [];
    for (let i = 0; i < 50; i++) {
      const { data } = await gql(CHANGE_CURSORS, { after });
      const page = data.changes;
      tail = [...tail, ...page.items.map((x) => x.cursor)].slice(-(READ_CHANGES + 1));
      after = page.endCursor;
      if (!page.hasMore) break;
    }
    const start = tail.length > READ_CHANGES ? tail[0] : null;
    const { data } = await gql(CHANGES, { after: start, first: READ_CHANGES + 1 });
    this.changes = data.changes.items.slice(-READ_CHANGES).reverse();
    this.cursor = data.changes.endCursor;
    await this.nameTables();
    this.renderChanges();
    this.poll();
  }

  poll() {
    clearTimeout(this.timer);
    if (!this.active) return;
    this.timer = setTimeout(async () => {
      if (!this.active) return;
      try {
        const { data } = await gql(CHANGES, { after: this.cursor, first: 100 });
        if (data.changes.items.length) {
          this.changes = [...data.changes.items.reverse(), ...this.changes].slice(0, READ_CHANGES);
          this.cursor = data.changes.endCursor;
          await this.nameTables();
          this.renderChanges();
        }
      } catch {
        // Try again at the next tick.
      }
      this.poll();
    }, POLL_MS);
  }

  /** The names of the tables that changes without an edge name only by id (created, dropped,
   * their fields), read once each, at most 40 a request. */
  async nameTables() {
    const ids = [...new Set(this.changes.filter((c) => !c.edge).flatMap((c) => c.containerIds))].filter((id) => !this.names.has(id)).slice(0, 40);
    if (!ids.length) return;
    const { data } = await gql(`query TableNames { ${ids.map((id, i) => `c${i}: container(id: ${Number(id)}) { id name displayName }`).join(' ')} }`);
    ids.forEach((id, i) => {
      const c = data?.[`c${i}`];
      this.names.set(id, c ? c.displayName || c.name : `table ${id} (gone)`);
    });
  }

  renderChanges() {
    const body = this.parts.changes.body;
    if (!this.changes.length) return body.replaceChildren(el('p', { text: 'No lineage recorded yet.' }));
    const ul = el('ul');
    for (const g of groupChanges(this.changes).slice(0, SHOWN_CHANGES)) {
      const c = g.change;
      const e = c.edge;
      const [sourceTable, targetTable] = e ? tableIds(e) : [null, null];
      const target = targetTable ?? c.containerIds[0];
      const source = sourceTable;
      const tableName = (id) => this.names.get(id) ?? `table ${id}`;
      const what = e ? `${endName(e, 'source')} → ${endName(e, 'target')}` : c.containerIds.map(tableName).join(', ') || 'a table';
      const ev = e?.evidence?.[0];
      const by = ev ? [ev.jobName ? `job ${ev.jobName}` : null, ev.provider].filter(Boolean).join(', ') : e ? e.sourceType : '';
      const href = target != null ? `/ui?container=${target}&depth=2${source != null && source !== target ? `&sel=c${source}` : ''}` : null;
      const columns = g.columns
        ? el(
            'ul',
            { class: 'columns-changed', 'data-columns': g.columns.length },
            ...g.columns.map((x) => el('li', { 'data-edge-id': x.edgeId ?? null }, `${x.edge.sourceField?.name ?? 'a column'} → ${x.edge.targetField?.name ?? 'a column'}`)),
          )
        : null;
      const kind = KIND_TEXT[c.kind] ?? c.kind;
      ul.append(
        el(
          'li',
          { 'data-change': c.kind, 'data-edge-id': c.edgeId ?? null, 'data-group': g.columns ? 'columns' : null },
          el('span', {
            class: `kind-${c.kind}`,
            text: g.columns
              ? `${g.columns.length} column edge${g.columns.length === 1 ? '' : 's'} ${kind} `
              : g.fields
                ? `${g.fields} field${g.fields === 1 ? '' : 's'} ${c.kind === 'FIELD_DROPPED' ? 'dropped from' : 'created in'} `
                : `${kind} `,
          }),
          href ? link(href, what) : what,
          e ? el('span', { class: 'tag', text: e.operation || e.sourceType }) : null,
          columns,
          el('div', { class: 'sub', text: `${when(g.at)}${by ? ` · by ${by}` : ''}` }),
        ),
      );
    }
    body.replaceChildren(ul);
  }

  renderIncidents(items) {
    const body = this.parts.incidents.body;
    if (!items.length) return body.replaceChildren(el('p', { text: 'No failed runs: every job’s latest run went through.' }));
    const ul = el('ul');
    for (const x of items) {
      const j = x.job;
      const name = j ? (j.restricted ? `job ${j.id} (restricted)` : `${j.namespace}/${j.name}`) : 'a job';
      ul.append(
        el(
          'li',
          { 'data-incident': x.run.runId, 'data-job-id': j?.id ?? null },
          el('span', { class: `state state-${x.state}`, text: x.state }),
          j ? link(`/ui?job=${j.id}&depth=2&sel=j${j.id}`, name) : name,
          el('div', { class: 'sub', text: `${when(x.at)} · ${x.failedCount} table${x.failedCount === 1 ? '' : 's'} not refreshed, ${x.staleCount} stale downstream` }),
          x.errorMessage ? el('div', { class: 'error', text: x.errorMessage }) : null,
          el('div', { class: 'impact-lists', 'data-impact-for': x.run.runId }),
        ),
      );
    }
    body.replaceChildren(ul);
    return this.loadImpacts(items).catch((e) => {
      for (const d of body.querySelectorAll('[data-impact-for]')) d.replaceChildren(el('span', { class: 'error', text: e.message }));
    });
  }

  /** Under each incident: the table it failed to refresh and the stale ones downstream, apart,
   * each a link to its graph (the failed one with what is stale highlighted). */
  async loadImpacts(items) {
    const runs = items.map((x) => x.run.runId).slice(0, 20);
    if (!runs.length) return;
    const { data } = await gql(incidentImpacts(runs), Object.fromEntries(runs.map((r, i) => [`r${i}`, r])));
    runs.forEach((runId, i) => {
      const box = this.root.querySelector(`[data-impact-for="${CSS.escape(runId)}"]`);
      const impact = data[`i${i}`];
      if (!box || !impact) return;
      const tables = impact.containers.filter((c) => c.container);
      const failed = tables.filter((c) => c.distance === 0);
      const stale = tables.filter((c) => c.distance > 0);
      const line = (label, list, kind, href) => {
        if (!list.length) return null;
        // data-outputs: the tables the failed run should have written (its job's outputs).
        const div = el('div', { class: 'sub', 'data-tables': kind, 'data-outputs': kind === 'FAILED' ? list.length : null }, el('span', { class: `state state-${kind}`, text: label }), ' ');
        list.forEach((c, k) => div.append(k ? ', ' : '', link(href(c.container.id), c.container.displayName || c.container.name, { 'data-container-id': c.container.id })));
        return div;
      };
      box.replaceChildren(
        ...[
          line('FAILED', failed, 'FAILED', (id) => `/ui?container=${id}&depth=3&side=down&hl=stale&sel=c${id}`),
          line(`STALE${impact.isPartial ? ' (the first ones)' : ''}`, stale, 'STALE', (id) => `/ui?container=${id}&depth=2&hl=stale&sel=c${id}`),
        ].filter(Boolean),
      );
    });
  }

  renderDatastores(stores, counts, total) {
    const body = this.parts.datastores.body;
    if (!stores.length) return body.replaceChildren(el('p', { text: 'No datastores yet.' }));
    const ul = el('ul');
    stores.forEach((d, i) => {
      const tables = counts[`c${i}`]?.total ?? 0;
      const jobs = counts[`j${i}`]?.total ?? 0;
      const details = el('details', { 'data-datastore-id': d.id }, el('summary', {}, el('strong', { text: d.name }), el('span', { class: 'sub', text: ` ${d.type} · ${tables} table${tables === 1 ? '' : 's'} · ${jobs} job${jobs === 1 ? '' : 's'}` })));
      details.addEventListener('toggle', () => this.loadTables(details, d.id), { once: true });
      ul.append(el('li', { 'data-tables': tables, 'data-jobs': jobs }, details));
    });
    body.replaceChildren(ul);
    if (total > stores.length) body.append(el('p', { class: 'sub', text: `${total - stores.length} more datastores: search for their tables.` }));
  }

  async loadTables(details, id) {
    const box = el('ul', {}, el('li', { class: 'loading', text: 'Loading…' }));
    details.append(box);
    try {
      const { data } = await gql(DATASTORE_CONTAINERS, { id });
      box.replaceChildren(...data.containers.items.map((c) => el('li', {}, link(`/ui?container=${c.id}&depth=2`, [c.database, c.schema, c.name].filter(Boolean).join('.')))));
      if (data.containers.total > data.containers.items.length) box.append(el('li', { class: 'sub', text: `${data.containers.total - data.containers.items.length} more: search by name.` }));
    } catch (e) {
      box.replaceChildren(el('li', { class: 'error', text: e.message }));
    }
  }

  renderJobs(items) {
    const body = this.parts.jobs.body;
    const jobs = [...items].sort((a, b) => String(b.lastSeenAt ?? '').localeCompare(String(a.lastSeenAt ?? ''))).slice(0, 12);
    if (!jobs.length) return body.replaceChildren(el('p', { text: 'No jobs recorded yet (they come from OpenLineage events).' }));
    const ul = el('ul');
    for (const j of jobs) {
      const state = j.latestRun?.state;
      ul.append(
        el(
          'li',
          { 'data-job-id': j.id },
          el('span', { class: `state state-${state ?? 'NONE'}`, text: state ?? 'no run' }),
          link(`/ui?job=${j.id}&depth=2&sel=j${j.id}`, j.restricted ? `job ${j.id} (restricted)` : `${j.namespace}/${j.name}`),
          el('div', { class: 'sub', text: `last seen ${when(j.lastSeenAt)}` }),
        ),
      );
    }
    body.replaceChildren(ul);
  }
}
