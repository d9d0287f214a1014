// The column view: the drawn tables as boxes listing their fields, and the field edges between
// them (a plain copy solid, a derived value dashed, a masked one dotted), as Marquez's column
// lineage and DataHub's column expansion show them. One request (`columns` in queries.js) for
// the fields of up to 20 tables, one per 40 linked fields for their edges; drawn as SVG, so every field and field edge is in the DOM.
import { gql } from './api.js';
import { COLUMN_CONTAINERS, FIELD_EDGES_PER_REQUEST, columns, fieldEdges } from './queries.js';

const NS = 'http://www.w3.org/2000/svg';
const BOX_W = 220;
const ROW_H = 20;
const HEAD_H = 28;
const GAP_X = 140;
const GAP_Y = 26;

function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) node.setAttribute(k, String(v));
  if (text != null) node.textContent = text;
  return node;
}

const masked = (e) => /mask|hash|redact|anonymi/i.test(`${e.description ?? ''} ${e.operation ?? ''}`);
export const fieldEdgeStyle = (e) => (masked(e) ? 'masked' : e.derived ? 'derived' : 'copy');

/** Draws the column view of `model`'s containers into `root`, ordered as `positions` lay them out. */
export async function drawColumns(root, model, positions) {
  root.replaceChildren(Object.assign(document.createElement('p'), { className: 'note loading', textContent: 'Loading the fields…' }));
  const containers = [...model.nodes.values()].filter((n) => n.kind === 'container' && !model.hidden.has(n.key));
  containers.sort((a, b) => (a.key === model.centre ? -1 : b.key === model.centre ? 1 : 0));
  const shown = containers.slice(0, COLUMN_CONTAINERS);
  const { data } = await gql(columns(shown.map((c) => c.id)));
  const fieldsOf = new Map();
  const edges = new Map();
  shown.forEach((c, i) => fieldsOf.set(c.id, data[`f${i}`].items));
  const linked = [...fieldsOf.values()].flat().filter((f) => f.hasLineage).map((f) => f.id);
  for (let i = 0; i < linked.length; i += FIELD_EDGES_PER_REQUEST) {
    const ids = linked.slice(i, i + FIELD_EDGES_PER_REQUEST);
    const answer = (await gql(fieldEdges(ids), Object.fromEntries(ids.map((id, j) => [`f${j}`, id])))).data;
    ids.forEach((_, j) => {
      for (const e of answer[`f${j}`].items) if (e.sourceFieldId != null && e.targetFieldId != null) edges.set(e.id, e);
    });
  }
  // Columns by the graph's ranks (x), tables stacked within each.
  const byX = new Map();
  for (const c of shown) {
    const p = positions[c.key] ?? { x: 0, y: 0 };
    if (!byX.has(p.x)) byX.set(p.x, []);
    byX.get(p.x).push(c);
  }
  const xs = [...byX.keys()].sort((a, b) => a - b);
  const at = new Map();
  const rowOf = new Map();
  let height = 0;
  xs.forEach((x, col) => {
    let y = 20;
    for (const c of byX.get(x).sort((a, b) => (positions[a.key]?.y ?? 0) - (positions[b.key]?.y ?? 0))) {
      const fields = fieldsOf.get(c.id);
      at.set(c.id, { x: 20 + col * (BOX_W + GAP_X), y, h: HEAD_H + Math.max(1, fields.length) * ROW_H + 6 });
      fields.forEach((f, i) => rowOf.set(f.id, { x: 20 + col * (BOX_W + GAP_X), y: y + HEAD_H + i * ROW_H + ROW_H / 2, container: c.id }));
      y += at.get(c.id).h + GAP_Y;
    }
    height = Math.max(height, y);
  });
  const width = 40 + xs.length * (BOX_W + GAP_X);
  const root2 = svg('svg', { width, height: height + 20, viewBox: `0 0 ${width} ${height + 20}`, role: 'img', 'aria-label': 'Column lineage of the drawn tables' });
  root2.append(
    svg('defs', {}),
  );
  root2.firstChild.append(Object.assign(svg('marker', { id: 'col-arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' }), {}));
  root2.querySelector('marker').append(svg('path', { d: 'M0,0L10,5L0,10z', fill: 'var(--edge)' }));
  for (const c of shown) {
    const a = at.get(c.id);
    const g = svg('g', { 'data-table': c.key });
    g.append(svg('rect', { x: a.x, y: a.y, width: BOX_W, height: a.h, rx: 6, fill: 'var(--node-bg)', stroke: c.key === model.centre ? 'var(--accent)' : 'var(--node-border)', 'stroke-width': c.key === model.centre ? 3 : 1 }));
    g.append(svg('text', { x: a.x + 8, y: a.y + 18, 'font-weight': 700, 'font-size': 13, fill: 'var(--node-fg)' }, c.displayName || c.name));
    const fields = fieldsOf.get(c.id);
    if (!fields.length) g.append(svg('text', { x: a.x + 10, y: a.y + HEAD_H + 13, 'font-size': 12, fill: 'var(--muted)' }, 'no fields recorded'));
    for (const f of fields) {
      const r = rowOf.get(f.id);
      g.append(svg('text', { x: a.x + 10, y: r.y + 4, 'font-size': 12, fill: 'var(--node-fg)', 'data-field-id': f.id }, `${f.name}${f.type ? `  ${f.type}` : ''}`));
    }
    root2.append(g);
  }
  let drawnEdges = 0;
  for (const e of edges.values()) {
    const s = rowOf.get(e.sourceFieldId);
    const t = rowOf.get(e.targetFieldId);
    if (!s || !t) continue;
    const style = fieldEdgeStyle(e);
    const forward = t.x > s.x;
    const x1 = forward ? s.x + BOX_W : s.x;
    const x2 = forward ? t.x : t.x + BOX_W;
    const bend = Math.max(40, Math.abs(x2 - x1) / 2) * (forward ? 1 : -1);
    const colour = style === 'copy' ? 'var(--edge)' : style === 'derived' ? 'var(--highlight)' : 'var(--retired)';
    const path = svg('path', {
      d: `M${x1},${s.y} C${x1 + bend},${s.y} ${x2 - bend},${t.y} ${x2},${t.y}`,
      fill: 'none',
      stroke: colour,
      'stroke-width': 1.6,
      'stroke-dasharray': style === 'derived' ? '6 4' : style === 'masked' ? '2 3' : null,
      'marker-end': 'url(#col-arrow)',
      'data-edge-id': e.id,
      'data-style': style,
      'data-source-field': e.sourceFieldId,
      'data-target-field': e.targetFieldId,
    });
    path.append(svg('title', {}, `${style}${e.operation ? ` · ${e.operation}` : ''}${e.description ? ` · ${e.description}` : ''}`));
    root2.append(path);
    drawnEdges++;
  }
  const note = Object.assign(document.createElement('p'), {
    className: 'note',
    textContent: `${shown.length} table${shown.length === 1 ? '' : 's'}${containers.length > shown.length ? ` of ${containers.length} (the nearest ${COLUMN_CONTAINERS})` : ''}, ${drawnEdges} field edge${drawnEdges === 1 ? '' : 's'} between them: a copy solid, derived dashed, masked dotted.`,
  });
  root.replaceChildren(note, root2);
  root.dataset.edges = String(drawnEdges);
}
