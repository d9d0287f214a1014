// The drawing: a cytoscape.js canvas (nodes, labelled edges, selection, highlight, pan and zoom),
// an overview map for large graphs, and the PNG and SVG exports. Positions come from the layout
// worker for a whole draw, and from `placeBeside` for an expansion, which never moves the nodes
// already drawn.
import cytoscape from 'cytoscape';
import { NODE_HEIGHT, NODE_WIDTH, RANK_SEP, NODE_SEP } from './layout.js';

/** Above this many elements the canvas switches to the cheaper settings for pan and zoom. */
const LARGE = 800;
/** Above this many nodes the overview map shows. */
export const MINIMAP_NODES = 60;

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/** The colours of the current scheme (light or dark), read from style.css's custom properties. */
export function palette() {
  return {
    bg: cssVar('--canvas-bg'),
    node: cssVar('--node-bg'),
    nodeText: cssVar('--node-fg'),
    border: cssVar('--node-border'),
    external: cssVar('--external-bg'),
    externalBorder: cssVar('--external-border'),
    accent: cssVar('--accent'),
    highlight: cssVar('--highlight'),
    edge: cssVar('--edge'),
    edgeText: cssVar('--muted'),
    retired: cssVar('--retired'),
    selectedBg: cssVar('--selected-bg'),
    ok: cssVar('--run-ok'),
    fail: cssVar('--run-fail'),
    running: cssVar('--run-running'),
    appeared: cssVar('--appeared'),
    group: cssVar('--group-bg'),
  };
}

/** Large graphs draw straight edges (no control points to compute) and no labels when zoomed out. */
function stylesheet(p, large = false) {
  return [
    {
      selector: 'node',
      style: {
        shape: 'round-rectangle',
        width: NODE_WIDTH,
        height: NODE_HEIGHT,
        'background-color': p.node,
        'border-width': 1,
        'border-color': p.border,
        label: 'data(label)',
        color: p.nodeText,
        'font-size': 12,
        'text-wrap': 'wrap',
        'text-max-width': NODE_WIDTH - 14,
        'text-valign': 'center',
        'text-halign': 'center',
        'min-zoomed-font-size': 7,
      },
    },
    {
      selector: 'node.external',
      style: {
        shape: 'cut-rectangle',
        'background-color': p.external,
        'border-color': p.externalBorder,
        'border-style': 'dashed',
        'border-width': 1.5,
      },
    },
    {
      selector: 'node.job',
      style: { shape: 'round-hexagon', width: NODE_WIDTH - 30, 'background-color': p.node, 'border-width': 2, 'border-color': p.border, 'text-max-width': NODE_WIDTH - 50 },
    },
    { selector: 'node.run-COMPLETE', style: { 'background-color': p.ok, 'border-color': p.ok, color: '#fff' } },
    { selector: 'node.run-FAIL, node.run-ABORT', style: { 'background-color': p.fail, 'border-color': p.fail, color: '#fff' } },
    { selector: 'node.run-RUNNING, node.run-START', style: { 'background-color': p.running, 'border-color': p.running, color: '#fff' } },
    { selector: 'node.group', style: { shape: 'round-rectangle', 'background-color': p.group, 'border-style': 'double', 'border-width': 4, 'border-color': p.border, 'font-weight': 'bold' } },
    { selector: 'node.centre', style: { 'border-width': 3, 'border-color': p.accent } },
    { selector: 'node.selected', style: { 'background-color': p.selectedBg, 'border-width': 3, 'border-color': p.accent } },
    {
      selector: 'edge',
      style: {
        width: 1.5,
        'curve-style': large ? 'straight' : 'bezier',
        'line-color': p.edge,
        'target-arrow-shape': 'triangle',
        'target-arrow-color': p.edge,
        'arrow-scale': 0.9,
        label: 'data(label)',
        'font-size': 9,
        color: p.edgeText,
        'text-background-color': p.bg,
        'text-background-opacity': 0.85,
        'text-background-padding': 2,
        'min-zoomed-font-size': 8,
      },
    },
    {
      selector: 'edge.retired',
      style: { 'line-style': 'dashed', 'line-color': p.retired, 'target-arrow-color': p.retired, color: p.retired },
    },
    // After the base edge style, so that these win.
    { selector: 'edge.job', style: { 'line-style': 'solid', width: 1.2, 'arrow-scale': 0.7 } },
    { selector: 'edge.group', style: { width: 3 } },
    { selector: '.change-unchanged', style: { opacity: 0.3 } },
    { selector: 'edge.change-appeared', style: { width: 3.5, 'line-color': p.appeared, 'target-arrow-color': p.appeared, color: p.appeared } },
    { selector: 'node.change-appeared', style: { 'border-width': 3, 'border-color': p.appeared } },
    { selector: 'edge.change-retired', style: { width: 3.5, 'line-style': 'dashed', 'line-color': p.retired, 'target-arrow-color': p.retired, color: p.retired } },
    { selector: 'node.change-retired', style: { 'border-width': 3, 'border-style': 'dashed', 'border-color': p.retired } },
    { selector: '.dim', style: { opacity: 0.18 } },
    { selector: 'node.hl', style: { 'border-width': 3, 'border-color': p.highlight } },
    { selector: 'edge.hl', style: { width: 3, 'line-color': p.highlight, 'target-arrow-color': p.highlight } },
    { selector: 'node:active', style: { 'overlay-opacity': 0.08 } },
    // A large graph's elements take no pointer events: every press is then the canvas's own
    // (a native pan, without hit-testing thousands of elements on each move), and taps find
    // their node by position (GraphView.nodeAt).
    ...(large ? [{ selector: 'node, edge', style: { events: 'no' } }] : []),
  ];
}

/** Longer names are shortened in the middle on the canvas (the list and the panel show them
 * whole): a box has one width, and a path or URL has no space to wrap at. */
const MAX_LABEL = 30;
function shorten(s) {
  return s.length <= MAX_LABEL ? s : `${s.slice(0, 12)}…${s.slice(-(MAX_LABEL - 13))}`;
}

/** The canvas label of a node: ◂ and ▸ say there is more lineage that way. */
export function nodeLabel(n, ambiguous = null) {
  if (n.kind === 'group') return `${n.name}\nselect to list, double-click to open`;
  if (n.kind === 'job') return `${shorten(n.name)}\njob · ${n.state ? n.state.toLowerCase() : 'no run'}`;
  const plain = n.displayName || n.name;
  const qualified = ambiguous?.has(plain) ? [n.database, n.schema, n.name].filter(Boolean).join('.') : plain;
  const name = shorten(n.kind === 'external' ? n.fqn : qualified);
  const sub = shorten(n.kind === 'external' ? `external · ${n.sourceType}` : [n.datastore?.name, n.containerType].filter(Boolean).join(' · '));
  return `${n.up ? '◂ ' : ''}${name}${n.down ? ' ▸' : ''}${sub ? `\n${sub}` : ''}`;
}

function nodeElement(n, model, position) {
  const classes = [n.kind === 'container' ? 'container' : n.kind];
  if (n.key === model.centre) classes.push('centre');
  if (n.kind === 'job') classes.push(`run-${n.state ?? 'NONE'}`);
  if (n.change) classes.push(`change-${n.change}`);
  return { group: 'nodes', data: { id: n.key, label: nodeLabel(n, model.ambiguousNames) }, position: { ...position }, classes: classes.join(' ') };
}

function edgeElement(e) {
  const classes = [];
  if (e.retired) classes.push('retired');
  if (e.kind === 'job' || e.kind === 'group') classes.push(e.kind);
  if (e.change) classes.push(`change-${e.change}`);
  return { group: 'edges', data: { id: e.key, source: e.source, target: e.target, label: e.label }, classes: classes.join(' ') };
}

export class GraphView {
  constructor(container, minimapCanvas, handlers) {
    this.container = container;
    this.minimapCanvas = minimapCanvas;
    this.handlers = handlers;
    this.cy = null;
    this.minimap = null;
  }

  /** Draws what is `shown` of `model` (`{ nodes, edges }`, see model.visible) afresh at
   * `positions` (node key → `{x, y}`). */
  draw(model, positions, shown) {
    if (this.cy) this.cy.destroy();
    const elements = [];
    for (const n of shown.nodes) elements.push(nodeElement(n, model, positions[n.key] ?? { x: 0, y: 0 }));
    for (const e of shown.edges) elements.push(edgeElement(e));
    const large = elements.length > LARGE;
    this.large = large;
    this.cy = cytoscape({
      container: this.container,
      elements,
      style: stylesheet(palette(), large),
      layout: { name: 'preset', fit: true, padding: 30 },
      minZoom: 0.005,
      maxZoom: 3,
      boxSelectionEnabled: false,
      // Nodes stay where the layout put them: a drag anywhere pans.
      autoungrabify: true,
      selectionType: 'single',
      textureOnViewport: large,
      hideEdgesOnViewport: large,
      motionBlur: false,
      pixelRatio: large ? 1 : 'auto',
    });
    this.fit();
    if (large) {
      this.cy.on('tap', (e) => {
        const key = this.nodeAt(e.position);
        if (key) this.handlers.select(key);
      });
      this.cy.on('dbltap', (e) => {
        const key = this.nodeAt(e.position);
        if (key) this.handlers.expand(key);
      });
    }
    this.cy.on('tap', 'node', (e) => this.handlers.select(e.target.id()));
    // A drag that starts on a node pans too (nodes do not move), so that a dense graph can be
    // moved from anywhere.
    let dragFrom = null;
    this.cy.on('tapstart', 'node', (e) => {
      dragFrom = { ...e.renderedPosition };
    });
    this.cy.on('tapdrag', (e) => {
      if (!dragFrom) return;
      const p = e.renderedPosition;
      this.cy.panBy({ x: p.x - dragFrom.x, y: p.y - dragFrom.y });
      dragFrom = { ...p };
    });
    this.cy.on('tapend', () => {
      dragFrom = null;
    });
    this.cy.on('dbltap', 'node', (e) => this.handlers.expand(e.target.id()));
    this.minimap?.detach();
    this.minimap = new Minimap(this.minimapCanvas, this.cy);
    this.minimap.show(model.nodes.size > MINIMAP_NODES);
    return new Promise((resolve) => {
      // The first frame with the elements on it.
      this.cy.one('render', () => requestAnimationFrame(() => resolve()));
      this.cy.forceRender?.();
    });
  }

  /** Adds an expansion's nodes beside `anchorKey` on `side` (u or d; b splits them by their
   * edges to the anchor), without moving anything already drawn. */
  add(model, anchorKey, side, nodeKeys, edgeKeys) {
    const cy = this.cy;
    if (!cy) return;
    const anchor = cy.getElementById(anchorKey);
    const origin = anchor.nonempty() ? anchor.position() : { x: 0, y: 0 };
    const upstream = new Set();
    for (const k of edgeKeys) {
      const e = model.edges.get(k);
      if (e && e.target === anchorKey) upstream.add(e.source);
    }
    const left = nodeKeys.filter((k) => side === 'u' || (side === 'b' && upstream.has(k)));
    const right = nodeKeys.filter((k) => !left.includes(k));
    const positions = { ...placeBeside(cy, origin, left, -1), ...placeBeside(cy, origin, right, 1) };
    cy.batch(() => {
      cy.add(nodeKeys.map((k) => nodeElement(model.nodes.get(k), model, positions[k])));
      cy.add(edgeKeys.map((k) => edgeElement(model.edges.get(k))));
    });
    this.minimap?.show(cy.nodes().length > MINIMAP_NODES);
    this.minimap?.refresh();
  }

  /** The node drawn at a model position, if any. */
  nodeAt(p) {
    const hit = this.cy.nodes().filter((n) => {
      const q = n.position();
      return Math.abs(q.x - p.x) <= NODE_WIDTH / 2 && Math.abs(q.y - p.y) <= NODE_HEIGHT / 2;
    });
    return hit.nonempty() ? hit[0].id() : null;
  }

  addEdges(model, edgeKeys) {
    this.cy?.add(edgeKeys.map((k) => edgeElement(model.edges.get(k))));
  }

  remove(keys) {
    if (!this.cy) return;
    this.cy.batch(() => {
      for (const k of keys) this.cy.getElementById(k).remove();
    });
    this.minimap?.refresh();
  }

  /** Redraws a node's label and classes from the model (its flags changed). */
  update(model, key) {
    const n = model.nodes.get(key);
    const el = this.cy?.getElementById(key);
    if (n && el?.nonempty()) el.data('label', nodeLabel(n, model.ambiguousNames));
  }

  select(key) {
    if (!this.cy) return;
    this.cy.batch(() => {
      this.cy.nodes('.selected').removeClass('selected');
      if (key) this.cy.getElementById(key).addClass('selected');
    });
  }

  /** Brings a node into view without changing the zoom. */
  reveal(key) {
    const el = this.cy?.getElementById(key);
    if (!el?.nonempty()) return;
    const ext = this.cy.extent();
    const p = el.position();
    if (p.x < ext.x1 || p.x > ext.x2 || p.y < ext.y1 || p.y > ext.y2) this.cy.center(el);
  }

  /** Highlights the nodes in `keys` and the edges between them (or only `edgeKeys` when
   * given); dims the rest. Null clears. */
  highlight(keys, edgeKeys = null) {
    const cy = this.cy;
    if (!cy) return;
    cy.batch(() => {
      cy.elements().removeClass('dim hl');
      if (!keys) return;
      cy.elements().addClass('dim');
      for (const k of keys) cy.getElementById(k).removeClass('dim').addClass('hl');
      cy.edges().forEach((e) => {
        const on = edgeKeys ? edgeKeys.has(e.id()) : keys.has(e.data('source')) && keys.has(e.data('target'));
        if (on) e.removeClass('dim').addClass('hl');
      });
    });
  }

  /** Fits the graph into the canvas, no closer than 1.2 (a three-node graph stays readable). */
  fit() {
    const cy = this.cy;
    if (!cy) return;
    // The canvas may have changed size since (a window resized, a panel opened).
    cy.resize();
    cy.fit(undefined, 30);
    if (cy.zoom() > 1.2) {
      cy.zoom(1.2);
      cy.center();
    }
  }

  zoomBy(factor) {
    const cy = this.cy;
    if (!cy) return;
    cy.zoom({ level: cy.zoom() * factor, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  }

  restyle() {
    this.cy?.style(stylesheet(palette(), this.large));
    this.minimap?.refresh();
  }

  png() {
    const cy = this.cy;
    if (!cy) return null;
    const bb = cy.elements().boundingBox();
    const scale = Math.max(0.1, Math.min(2, 8000 / Math.max(bb.w, bb.h, 1)));
    return cy.png({ output: 'blob', full: true, scale, bg: palette().bg });
  }

  svg() {
    return this.cy ? toSvg(this.cy, palette()) : null;
  }
}

/** Free spots for `keys` in a column beside `origin` (direction -1 left, 1 right), clear of the
 * nodes already drawn there. Wide fan-outs wrap into further columns of at most 25. */
export function placeBeside(cy, origin, keys, direction) {
  const positions = {};
  if (!keys.length) return positions;
  const perColumn = 25;
  const step = NODE_HEIGHT + NODE_SEP;
  const columns = Math.ceil(keys.length / perColumn);
  const sorted = [...keys].sort();
  for (let c = 0; c < columns; c++) {
    const slice = sorted.slice(c * perColumn, (c + 1) * perColumn);
    const x = origin.x + direction * (c + 1) * (NODE_WIDTH + RANK_SEP);
    const occupied = cy
      .nodes()
      .filter((n) => Math.abs(n.position('x') - x) < NODE_WIDTH)
      .map((n) => n.position('y'));
    const height = slice.length * step;
    const fits = (top) => occupied.every((y) => y < top - step / 2 || y > top + height - step / 2);
    let top = origin.y - height / 2 + step / 2;
    for (let i = 0; i < 400 && !fits(top); i++) {
      // Try below and above in turn, further out each time.
      const offset = Math.ceil((i + 1) / 2) * step;
      top = origin.y - height / 2 + step / 2 + (i % 2 === 0 ? offset : -offset);
    }
    slice.forEach((k, i) => {
      positions[k] = { x, y: top + i * step };
    });
  }
  return positions;
}

const escapeXml = (s) => String(s).replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The graph as a standalone SVG document (nodes, edges with arrows, labels). */
export function toSvg(cy, p) {
  const bb = cy.elements().boundingBox({ includeLabels: true });
  const pad = 20;
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="${bb.x1 - pad} ${bb.y1 - pad} ${bb.w + 2 * pad} ${bb.h + 2 * pad}" width="${Math.ceil(bb.w + 2 * pad)}" height="${Math.ceil(bb.h + 2 * pad)}" font-family="system-ui, sans-serif">`,
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="${p.edge}"/></marker></defs>`,
    `<rect x="${bb.x1 - pad}" y="${bb.y1 - pad}" width="${bb.w + 2 * pad}" height="${bb.h + 2 * pad}" fill="${p.bg}"/>`,
  );
  cy.edges().forEach((e) => {
    const s = e.sourceEndpoint();
    const t = e.targetEndpoint();
    const cps = e.controlPoints();
    let d = `M${s.x.toFixed(1)},${s.y.toFixed(1)} `;
    if (cps?.length === 1) d += `Q${cps[0].x.toFixed(1)},${cps[0].y.toFixed(1)} `;
    else if (cps?.length >= 2) d += `C${cps[0].x.toFixed(1)},${cps[0].y.toFixed(1)} ${cps[1].x.toFixed(1)},${cps[1].y.toFixed(1)} `;
    else d += 'L';
    d += `${t.x.toFixed(1)},${t.y.toFixed(1)}`;
    const retired = e.hasClass('retired');
    const colour = retired ? p.retired : p.edge;
    out.push(`<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.5"${retired ? ' stroke-dasharray="5 4"' : ''} marker-end="url(#arrow)"/>`);
    const label = e.data('label');
    if (label) {
      const m = e.midpoint();
      out.push(`<text x="${m.x.toFixed(1)}" y="${(m.y - 3).toFixed(1)}" font-size="9" fill="${p.edgeText}" text-anchor="middle">${escapeXml(label)}</text>`);
    }
  });
  cy.nodes().forEach((n) => {
    const { x, y } = n.position();
    const external = n.hasClass('external');
    const centre = n.hasClass('centre');
    out.push(
      `<rect x="${(x - NODE_WIDTH / 2).toFixed(1)}" y="${(y - NODE_HEIGHT / 2).toFixed(1)}" width="${NODE_WIDTH}" height="${NODE_HEIGHT}" rx="6" fill="${external ? p.external : p.node}" stroke="${centre ? p.accent : external ? p.externalBorder : p.border}" stroke-width="${centre ? 3 : 1}"${external ? ' stroke-dasharray="4 3"' : ''}/>`,
    );
    const lines = String(n.data('label')).split('\n');
    lines.forEach((line, i) => {
      const dy = (i - (lines.length - 1) / 2) * 14 + 4;
      out.push(`<text x="${x.toFixed(1)}" y="${(y + dy).toFixed(1)}" font-size="${i ? 10 : 12}" fill="${p.nodeText}" text-anchor="middle">${escapeXml(line)}</text>`);
    });
  });
  out.push('</svg>');
  return out.join('\n');
}

/** The overview: every node as a dot, the visible part as a frame; click or drag to move there. */
class Minimap {
  constructor(canvas, cy) {
    this.canvas = canvas;
    this.cy = cy;
    this.frame = 0;
    this.dots = null;
    this.onViewport = () => this.schedule();
    this.onChange = () => this.refresh();
    cy.on('viewport resize', this.onViewport);
    cy.on('add remove position', this.onChange);
    this.onPointer = (e) => {
      if (e.type === 'pointerdown') {
        this.dragging = true;
        canvas.setPointerCapture?.(e.pointerId);
      }
      if (e.type === 'pointerup' || e.type === 'pointercancel') this.dragging = false;
      if ((e.type === 'pointerdown' || this.dragging) && this.transform) this.moveTo(e);
    };
    for (const t of ['pointerdown', 'pointermove', 'pointerup', 'pointercancel']) canvas.addEventListener(t, this.onPointer);
  }

  detach() {
    for (const t of ['pointerdown', 'pointermove', 'pointerup', 'pointercancel']) this.canvas.removeEventListener(t, this.onPointer);
  }

  show(on) {
    this.canvas.hidden = !on;
    if (on) this.refresh();
  }

  refresh() {
    this.dots = null;
    this.schedule();
  }

  schedule() {
    if (this.canvas.hidden || this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.paint();
    });
  }

  moveTo(e) {
    const r = this.canvas.getBoundingClientRect();
    const { scale, dx, dy } = this.transform;
    const mx = (e.clientX - r.left - dx) / scale;
    const my = (e.clientY - r.top - dy) / scale;
    const cy = this.cy;
    cy.pan({ x: cy.width() / 2 - mx * cy.zoom(), y: cy.height() / 2 - my * cy.zoom() });
  }

  paint() {
    const cy = this.cy;
    if (cy.destroyed()) return;
    const ctx = this.canvas.getContext('2d');
    const w = this.canvas.width;
    const h = this.canvas.height;
    const p = palette();
    if (!this.dots) {
      const bb = cy.nodes().boundingBox();
      const scale = Math.min((w - 8) / Math.max(bb.w, 1), (h - 8) / Math.max(bb.h, 1));
      this.transform = { scale, dx: (w - bb.w * scale) / 2 - bb.x1 * scale, dy: (h - bb.h * scale) / 2 - bb.y1 * scale };
      const dots = document.createElement('canvas');
      dots.width = w;
      dots.height = h;
      const d = dots.getContext('2d');
      d.fillStyle = p.bg;
      d.fillRect(0, 0, w, h);
      const nw = Math.max(1.5, NODE_WIDTH * scale);
      const nh = Math.max(1.5, NODE_HEIGHT * scale);
      cy.nodes().forEach((n) => {
        const { x, y } = n.position();
        d.fillStyle = n.hasClass('centre') ? p.accent : n.hasClass('external') ? p.externalBorder : p.border;
        d.fillRect(x * scale + this.transform.dx - nw / 2, y * scale + this.transform.dy - nh / 2, nw, nh);
      });
      this.dots = dots;
    }
    ctx.clearRect(0, 0, w, h);
    ctx.drawImage(this.dots, 0, 0);
    const ext = cy.extent();
    const { scale, dx, dy } = this.transform;
    ctx.strokeStyle = p.accent;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(ext.x1 * scale + dx, ext.y1 * scale + dy, ext.w * scale, ext.h * scale);
  }
}
