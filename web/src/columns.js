// The column view: the drawn tables as boxes listing their fields, and the field edges between
// them (a plain copy solid, a derived value dashed, a masked one dotted), as Marquez's column
// lineage and DataHub's column expansion show them. A table's box opens to its column rows (its
// header folds it back); field edges run from row to row; selecting a row highlights that
// column's path upstream and downstream across the tables. One request (`columns` in
// queries.js) for the fields of up to 20 tables, one per 40 linked fields for their edges; drawn
// as SVG, so every field and field edge is in the DOM.
import { gql } from './api.js';
import { COLUMN_CONTAINERS, FIELD_EDGES_PER_REQUEST, columns, fieldEdges } from './queries.js';

const NS = 'http://www.w3.org/2000/svg';
const BOX_W = 240;
const ROW_H = 22;
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

/** The end of a name that fits `chars` characters: shortened from its start, never the middle. */
const fromStart = (s, chars) => (s.length <= chars ? s : `…${s.slice(s.length - chars + 1)}`);

/** Draws the column view of `model`'s containers into `root`, ordered as `positions` lay them out
 * (`direction`: the graph's, LR or TB; the column view always runs left to right). */
export async function drawColumns(root, model, positions, direction = 'LR') {
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
  // Columns by the graph's ranks, tables stacked within each.
  const rankAxis = direction === 'TB' ? 'y' : 'x';
  const crossAxis = direction === 'TB' ? 'x' : 'y';
  const byX = new Map();
  for (const c of shown) {
    const p = positions[c.key] ?? { x: 0, y: 0 };
    if (!byX.has(p[rankAxis])) byX.set(p[rankAxis], []);
    byX.get(p[rankAxis]).push(c);
  }
  const xs = [...byX.keys()].sort((a, b) => a - b);
  for (const x of xs) byX.get(x).sort((a, b) => (positions[a.key]?.[crossAxis] ?? 0) - (positions[b.key]?.[crossAxis] ?? 0));
  const drawable = [...edges.values()];
  const view = { root, model, shown, containers, fieldsOf, edges: drawable, byX, xs, folded: new Set(), selected: null };
  paint(view);
}

/** (Re)draws the column view from what drawColumns read: the folded tables as headers only,
 * the selected column's path highlighted. */
function paint(view) {
  const { root, model, shown, containers, fieldsOf, edges, byX, xs, folded } = view;
  const at = new Map();
  const rowOf = new Map();
  let height = 0;
  xs.forEach((x, col) => {
    let y = 20;
    for (const c of byX.get(x)) {
      const fields = fieldsOf.get(c.id);
      const open = !folded.has(c.key);
      const bx = 20 + col * (BOX_W + GAP_X);
      at.set(c.id, { x: bx, y, h: open ? HEAD_H + Math.max(1, fields.length) * ROW_H + 6 : HEAD_H });
      // A folded table's field edges end at its header.
      fields.forEach((f, i) => rowOf.set(f.id, { x: bx, y: open ? y + HEAD_H + i * ROW_H + ROW_H / 2 : y + HEAD_H / 2, container: c.id, open }));
      y += at.get(c.id).h + GAP_Y;
    }
    height = Math.max(height, y);
  });
  const width = 40 + xs.length * (BOX_W + GAP_X);
  const root2 = svg('svg', { width, height: height + 20, viewBox: `0 0 ${width} ${height + 20}`, role: 'img', 'aria-label': 'Column lineage of the drawn tables' });
  const defs = svg('defs', {});
  const marker = svg('marker', { id: 'col-arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' });
  marker.append(svg('path', { d: 'M0,0L10,5L0,10z', fill: 'var(--edge)' }));
  defs.append(marker);
  root2.append(defs);
  for (const c of shown) {
    const a = at.get(c.id);
    const open = !folded.has(c.key);
    const fields = fieldsOf.get(c.id);
    const g = svg('g', { 'data-table': c.key, 'data-open': String(open) });
    g.append(svg('rect', { x: a.x, y: a.y, width: BOX_W, height: a.h, rx: 6, fill: 'var(--node-bg)', stroke: c.key === model.centre ? 'var(--accent)' : 'var(--node-border)', 'stroke-width': c.key === model.centre ? 3 : 1, class: 'table-box' }));
    const head = svg('g', { class: 'table-head', tabindex: 0, role: 'button', 'aria-expanded': String(open), 'data-toggle': c.key });
    head.append(svg('rect', { x: a.x, y: a.y, width: BOX_W, height: HEAD_H, rx: 6, fill: 'transparent' }));
    head.append(svg('text', { x: a.x + 8, y: a.y + 19, 'font-weight': 700, 'font-size': 14, fill: 'var(--node-fg)' }, `${open ? '▾' : '▸'} ${fromStart(c.displayName || c.name, open ? 27 : 22)}${open ? '' : ` (${fields.length})`}`));
    head.append(svg('title', {}, `${[c.database, c.schema, c.name].filter(Boolean).join('.')}: ${open ? 'fold' : 'open'} its ${fields.length} columns`));
    g.append(head);
    if (open && !fields.length) g.append(svg('text', { x: a.x + 10, y: a.y + HEAD_H + 15, 'font-size': 13, fill: 'var(--muted)' }, 'no fields recorded'));
    if (open) {
      for (const f of fields) {
        const r = rowOf.get(f.id);
        const row = svg('g', { class: 'column-row', 'data-row-field': f.id, tabindex: 0, role: 'button', 'aria-pressed': 'false' });
        row.append(svg('rect', { x: a.x + 1, y: r.y - ROW_H / 2, width: BOX_W - 2, height: ROW_H, class: 'row-bg', 'data-row-box': f.id }));
        row.append(svg('text', { x: a.x + 10, y: r.y + 5, 'font-size': 13, fill: 'var(--node-fg)', 'data-field-id': f.id }, fromStart(f.name, 22)));
        if (f.type) row.append(svg('text', { x: a.x + BOX_W - 8, y: r.y + 5, 'font-size': 12, fill: 'var(--muted)', 'text-anchor': 'end' }, fromStart(f.type, 10)));
        row.append(svg('title', {}, `${c.name}.${f.name}${f.type ? ` (${f.type})` : ''}: select to highlight its path`));
        g.append(row);
      }
    }
    root2.append(g);
  }
  let drawnEdges = 0;
  const drawn = [];
  for (const e of edges) {
    const s = rowOf.get(e.sourceFieldId);
    const t = rowOf.get(e.targetFieldId);
    if (!s || !t) continue;
    const style = fieldEdgeStyle(e);
    const forward = t.x > s.x;
    const same = t.x === s.x;
    // Within one column of tables, an edge leaves and enters on the right, curving out.
    const x1 = forward || same ? s.x + BOX_W : s.x;
    const x2 = forward ? t.x : t.x + BOX_W;
    const bend = same ? 60 : Math.max(40, Math.abs(x2 - x1) / 2) * (forward ? 1 : -1);
    const colour = style === 'copy' ? 'var(--edge)' : style === 'derived' ? 'var(--highlight)' : 'var(--retired)';
    const path = svg('path', {
      d: `M${x1},${s.y} C${x1 + bend},${s.y} ${same ? x2 + bend : x2 - bend},${t.y} ${x2},${t.y}`,
      fill: 'none',
      stroke: colour,
      'stroke-width': 1.6,
      'stroke-dasharray': style === 'derived' ? '6 4' : style === 'masked' ? '2 3' : null,
      'marker-end': 'url(#col-arrow)',
      'data-edge-id': e.id,
      'data-style': style,
      'data-source-field': e.sourceFieldId,
      'data-target-field': e.targetFieldId,
      'data-folded': s.open && t.open ? null : 'true',
    });
    path.append(svg('title', {}, `${style}${e.operation ? ` · ${e.operation}` : ''}${e.description ? ` · ${e.description}` : ''}`));
    root2.append(path);
    drawn.push(e);
    drawnEdges++;
  }
  const note = Object.assign(document.createElement('p'), {
    className: 'note',
    textContent: `${shown.length} table${shown.length === 1 ? '' : 's'}${containers.length > shown.length ? ` of ${containers.length} (the nearest ${COLUMN_CONTAINERS})` : ''}, ${drawnEdges} field edge${drawnEdges === 1 ? '' : 's'} between them: a copy solid, derived dashed, masked dotted. Select a column to highlight its path both ways; a table’s header folds its columns.`,
  });
  root.replaceChildren(note, root2);
  root.dataset.edges = String(drawnEdges);
  wire(view, root2, drawn);
}

/** Selecting a column row highlights its path both ways across the tables (the rows and field
 * edges it reaches), dimming the rest; again clears. A table's header folds its rows away (its
 * edges then end at the header) or opens them. */
function wire(view, svgRoot, edges) {
  const { root } = view;
  const out = new Map();
  const inn = new Map();
  for (const e of edges) {
    if (!out.has(e.sourceFieldId)) out.set(e.sourceFieldId, []);
    if (!inn.has(e.targetFieldId)) inn.set(e.targetFieldId, []);
    out.get(e.sourceFieldId).push(e);
    inn.get(e.targetFieldId).push(e);
  }
  const reach = (start, next, end) => {
    const fields = new Set([start]);
    const via = new Set();
    const queue = [start];
    while (queue.length) {
      const f = queue.shift();
      for (const e of next.get(f) ?? []) {
        via.add(String(e.id));
        const o = e[end];
        if (!fields.has(o)) {
          fields.add(o);
          queue.push(o);
        }
      }
    }
    return { fields, via };
  };
  const show = () => {
    const selected = view.selected;
    svgRoot.classList.toggle('has-path', selected != null);
    const none = { fields: new Set(), via: new Set() };
    const up = selected != null ? reach(selected, inn, 'sourceFieldId') : none;
    const down = selected != null ? reach(selected, out, 'targetFieldId') : none;
    for (const row of svgRoot.querySelectorAll('.column-row')) {
      const f = Number(row.dataset.rowField);
      row.dataset.path = f === selected ? 'selected' : up.fields.has(f) ? 'upstream' : down.fields.has(f) ? 'downstream' : 'none';
      row.setAttribute('aria-pressed', String(f === selected));
    }
    for (const p of svgRoot.querySelectorAll('path[data-edge-id]')) {
      const id = p.dataset.edgeId;
      p.dataset.path = up.via.has(id) ? 'upstream' : down.via.has(id) ? 'downstream' : 'none';
    }
    root.dataset.selectedField = selected ?? '';
    root.dataset.pathFields = String(selected != null ? up.fields.size + down.fields.size - 1 : 0);
  };
  const act = (target) => {
    const row = target.closest('.column-row');
    if (row) {
      const id = Number(row.dataset.rowField);
      view.selected = view.selected === id ? null : id;
      return show();
    }
    const head = target.closest('.table-head');
    if (!head) return;
    const key = head.dataset.toggle;
    if (view.folded.has(key)) view.folded.delete(key);
    else view.folded.add(key);
    paint(view);
    view.root.querySelector(`.table-head[data-toggle="${CSS.escape(key)}"]`)?.focus();
  };
  svgRoot.addEventListener('click', (e) => act(e.target));
  svgRoot.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' && e.key !== ' ') return;
    e.preventDefault();
    act(e.target);
  });
  show();
}
