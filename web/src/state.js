// The URL is the state: `/ui?container=<id>&depth=<1..20>&side=up|down` (the contract's names),
// plus the page's own `sel` (the selected node: `c<id>` or an external node's `ext:...` id),
// `field` (the field whose column lineage is drawn), `x` (nodes expanded in place, as
// `<id><u|d|b>` joined by commas, in the order they were expanded) and `view=list`.

export const DEFAULT_DEPTH = 2;

export function clampDepth(value) {
  const n = Number.parseInt(value, 10);
  if (!Number.isFinite(n)) return DEFAULT_DEPTH;
  return Math.min(20, Math.max(1, n));
}

/** The state in a location's query string. */
export function parse(search) {
  const q = new URLSearchParams(search);
  const container = Number.parseInt(q.get('container') ?? '', 10);
  const side = q.get('side');
  const field = Number.parseInt(q.get('field') ?? '', 10);
  const expansions = (q.get('x') ?? '')
    .split(',')
    .map((s) => s.match(/^(\d+)([udb])$/))
    .filter(Boolean)
    .map((m) => ({ id: Number(m[1]), side: m[2] }));
  return {
    container: Number.isFinite(container) && container > 0 ? container : null,
    depth: q.has('depth') ? clampDepth(q.get('depth')) : DEFAULT_DEPTH,
    side: side === 'up' || side === 'down' ? side : null,
    sel: q.get('sel') || null,
    field: Number.isFinite(field) && field > 0 ? field : null,
    expansions,
    view: q.get('view') === 'list' ? 'list' : 'graph',
  };
}

/** The query string of a state (fixed key order, defaults left out). */
export function format(state) {
  const q = new URLSearchParams();
  if (state.container != null) q.set('container', String(state.container));
  if (state.container != null) q.set('depth', String(state.depth));
  if (state.side) q.set('side', state.side);
  if (state.sel) q.set('sel', state.sel);
  if (state.field != null) q.set('field', String(state.field));
  if (state.expansions?.length) q.set('x', state.expansions.map((e) => `${e.id}${e.side}`).join(','));
  if (state.view === 'list') q.set('view', 'list');
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The GraphQL `Side` of a URL side. */
export function graphSide(side) {
  return side === 'up' ? 'UPSTREAM' : side === 'down' ? 'DOWNSTREAM' : null;
}
