// The URL is the state: `/ui?container=<id>&depth=<1..20>&side=up|down` (the contract's names),
// `job=<id>` (centred on a job), `jobs=1` (jobs drawn between tables), `asOf=<RFC 3339>` (the
// graph as it was), `since=<RFC 3339>` (what changed since, as a diff), plus the page's own `sel`
// (the selected node: `c<id>`, a bare container id, `j<id>` or an external node's `ext:...` id),
// `field` (the field whose column lineage is drawn), `x` (nodes expanded in place, as
// `<id><u|d|b>` joined by commas, in the order they were expanded), `open` (collapsed groups
// opened, by group key), `flat=1` (never collapse wide layers), `max` (maxNodes) and
// `view=list|columns` and `hl=stale` (the FAILED and STALE tables highlighted). `/ui` with
// neither container nor job is the home page.

export const DEFAULT_DEPTH = 2;
export const DEFAULT_MAX_NODES = 5000;

export function clampDepth(value) {
  const n = Number.parseInt(value, 10);
  if (!Number.isFinite(n)) return DEFAULT_DEPTH;
  return Math.min(20, Math.max(1, n));
}

const positiveInt = (s) => {
  const n = Number.parseInt(s ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : null;
};

/** An RFC 3339 instant, or null when `s` is none. */
export function instant(s) {
  if (!s) return null;
  const t = Date.parse(s);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
}

/** `sel=` as the page keys nodes: a bare number is a container id. */
export function selKey(s) {
  if (!s) return null;
  return /^\d+$/.test(s) ? `c${s}` : s;
}

/** The state in a location's query string. */
export function parse(search) {
  const q = new URLSearchParams(search);
  const side = q.get('side');
  const expansions = (q.get('x') ?? '')
    .split(',')
    .map((s) => s.match(/^(\d+)([udb])$/))
    .filter(Boolean)
    .map((m) => ({ id: Number(m[1]), side: m[2] }));
  const view = q.get('view');
  return {
    container: positiveInt(q.get('container')),
    job: positiveInt(q.get('job')),
    jobs: q.get('jobs') === '1',
    asOf: instant(q.get('asOf')),
    since: instant(q.get('since')),
    depth: q.has('depth') ? clampDepth(q.get('depth')) : DEFAULT_DEPTH,
    side: side === 'up' || side === 'down' ? side : null,
    sel: selKey(q.get('sel')),
    field: positiveInt(q.get('field')),
    expansions,
    open: (q.get('open') ?? '').split(',').filter(Boolean),
    flat: q.get('flat') === '1',
    max: positiveInt(q.get('max')),
    view: view === 'list' || view === 'columns' ? view : 'graph',
    hl: q.get('hl') === 'stale' ? 'stale' : null,
  };
}

/** The query string of a state (fixed key order, defaults left out). */
export function format(state) {
  const q = new URLSearchParams();
  const graph = state.container != null || state.job != null;
  if (state.container != null) q.set('container', String(state.container));
  else if (state.job != null) q.set('job', String(state.job));
  if (graph) q.set('depth', String(state.depth));
  if (state.side) q.set('side', state.side);
  if (state.jobs && state.container != null) q.set('jobs', '1');
  if (state.asOf) q.set('asOf', state.asOf);
  if (state.since) q.set('since', state.since);
  if (state.sel) q.set('sel', state.sel);
  if (state.field != null) q.set('field', String(state.field));
  if (state.expansions?.length) q.set('x', state.expansions.map((e) => `${e.id}${e.side}`).join(','));
  if (state.open?.length) q.set('open', state.open.join(','));
  if (state.flat) q.set('flat', '1');
  if (state.max) q.set('max', String(state.max));
  if (state.view === 'list' || state.view === 'columns') q.set('view', state.view);
  if (state.hl === 'stale' && graph) q.set('hl', 'stale');
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The GraphQL `Side` of a URL side. */
export function graphSide(side) {
  return side === 'up' ? 'UPSTREAM' : side === 'down' ? 'DOWNSTREAM' : null;
}
