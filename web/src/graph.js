// The drawing: a cytoscape.js canvas (nodes, labelled edges, selection, highlight, pan and zoom),
// an overview map for large graphs, and the PNG and SVG exports. Positions come from the layout
// worker for a whole draw, and from `placeBeside` for an expansion, which never moves the nodes
// already drawn.
import cytoscape from 'cytoscape';
import { FIT_PADDING, LABEL_FONT, LEGIBLE_ZOOM, MAX_FIT_ZOOM, NODE_HEIGHT, NODE_SEP, NODE_WIDTH, RANK_SEP } from './layout.js';

/** The labels' font (as the page's: see style.css). */
export const FONT_FAMILY = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
/** Edge labels, in model units (at the legible zoom, 11 px on screen or more). */
const EDGE_FONT = 12;

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
    failed: cssVar('--health-failed'),
    failedBg: cssVar('--health-failed-bg'),
    stale: cssVar('--health-stale'),
    staleBg: cssVar('--health-stale-bg'),
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
        'font-size': LABEL_FONT,
        'font-family': FONT_FAMILY,
        'line-height': 1.15,
        // Labels are broken into lines here (nodeLabel), never by the canvas.
        'text-wrap': 'wrap',
        'text-max-width': NODE_WIDTH * 2,
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
    // Health: a failed table red, a stale one amber, each with its word in the label (the badge).
    { selector: 'node.health-FAILED', style: { 'border-width': 4, 'border-color': p.failed, 'background-color': p.failedBg } },
    { selector: 'node.health-STALE', style: { 'border-width': 4, 'border-style': 'dashed', 'border-color': p.stale, 'background-color': p.staleBg } },
    { selector: 'node.centre.health-FAILED, node.centre.health-STALE', style: { 'border-style': 'double', 'border-width': 6 } },
    // The selected node's label in the scheme's own text colour: a job's white label on the light
    // selection colour would fail contrast.
    { selector: 'node.selected', style: { 'background-color': p.selectedBg, 'border-width': 3, 'border-color': p.accent, color: p.nodeText } },
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
        'font-size': EDGE_FONT,
        'font-family': FONT_FAMILY,
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
    // Highlighted (what is stale), a table keeps its health colour.
    { selector: 'node.hl.health-FAILED', style: { 'border-color': p.failed } },
    { selector: 'node.hl.health-STALE', style: { 'border-color': p.stale } },
    { selector: 'node:active', style: { 'overlay-opacity': 0.08 } },
    // A large graph's elements take no pointer events: every press is then the canvas's own
    // (a native pan, without hit-testing thousands of elements on each move), and taps find
    // their node by position (GraphView.nodeAt).
    ...(large ? [{ selector: 'node, edge', style: { events: 'no' } }] : []),
  ];
}

let measurer = null;
/** The width of `s` in the node label's font, in model units. */
function textWidth(s, size = LABEL_FONT) {
  if (!measurer) measurer = document.createElement('canvas').getContext('2d');
  measurer.font = `${size}px ${FONT_FAMILY}`;
  return measurer.measureText(s).width;
}
/** The room for text in a node (its width less the padding either side). */
const LINE_WIDTH = NODE_WIDTH - 20;

/** The longest end of `s` that fits `room` behind an ellipsis: a name is shortened from its
 * start (the database and schema go first), never in the middle. */
function keepEnd(s, room, fits) {
  if (fits(s, room)) return s;
  let lo = 0;
  let hi = s.length;
  // The smallest cut that fits (binary search: text width grows with length).
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (fits(`…${s.slice(mid)}`, room)) hi = mid;
    else lo = mid + 1;
  }
  return `…${s.slice(lo)}`;
}

/**
 * A name in at most two lines that fit a node: broken after a `_ . / : -` where one fits (else
 * anywhere), and shortened from its start when even two lines are too few. `lead` and `tail`
 * (the ◂ ▸ marks) take room on the first and last line.
 */
export function fitName(name, { lead = '', tail = '', room = LINE_WIDTH } = {}) {
  const fits = (t, r) => textWidth(t) <= r;
  if (fits(`${lead}${name}${tail}`, room)) return [`${lead}${name}${tail}`];
  // The second line: the longest end that fits, starting after a break where possible.
  const breaks = [];
  for (let i = 1; i < name.length; i++) if ('_./:-'.includes(name[i - 1])) breaks.push(i);
  // Where both lines fit, the break that balances them best.
  let cut = null;
  let widest = Infinity;
  for (const i of breaks) {
    const a = `${lead}${name.slice(0, i)}`;
    const b = `${name.slice(i)}${tail}`;
    if (!fits(a, room) || !fits(b, room)) continue;
    const w = Math.max(textWidth(a), textWidth(b));
    if (w < widest) {
      widest = w;
      cut = i;
    }
  }
  if (cut != null) return [`${lead}${name.slice(0, cut)}`, `${name.slice(cut)}${tail}`];
  cut = breaks.find((i) => fits(`${name.slice(i)}${tail}`, room));
  if (cut == null) {
    cut = name.length - 1;
    while (cut > 1 && fits(`${name.slice(cut - 1)}${tail}`, room)) cut--;
  }
  const second = `${name.slice(cut)}${tail}`;
  const first = keepEnd(name.slice(0, cut), room - (lead ? textWidth(lead) : 0), fits);
  return [`${lead}${first}`, second];
}

/** The name a node is known by in full: a table's database, schema and name; an asset's fqn. */
export function qualifiedName(n) {
  if (n.kind === 'external') return n.fqn;
  if (n.kind === 'job') return n.namespace ? `${n.namespace}/${n.name}` : n.name;
  if (n.kind === 'group') return n.name;
  return [n.database, n.schema, n.name].filter(Boolean).join('.');
}

const HEALTH_TEXT = { FAILED: '✖ FAILED', STALE: '⚠ STALE' };

/** The canvas label of a node: ◂ and ▸ say there is more lineage that way; a failed or stale
 * table says so first on its second line. */
export function nodeLabel(n, ambiguous = null) {
  if (n.kind === 'group') return `${n.name}\nselect to list, double-click to open`;
  if (n.kind === 'job') return `${fitName(n.name, { room: LINE_WIDTH - 44 }).join('\n')}\njob · ${n.state ? n.state.toLowerCase() : 'no run'}`;
  const plain = n.displayName || n.name;
  const qualified = ambiguous?.has(plain) ? qualifiedName(n) : plain;
  const lines = fitName(n.kind === 'external' ? n.fqn : qualified, { lead: n.up ? '◂ ' : '', tail: n.down ? ' ▸' : '' });
  const what = n.kind === 'external' ? `external · ${n.sourceType}` : [n.datastore?.name, n.containerType].filter(Boolean).join(' · ');
  const sub = n.health && HEALTH_TEXT[n.health] ? `${HEALTH_TEXT[n.health]}${what ? ` · ${what}` : ''}` : what;
  if (sub) lines.push(fitEnd(sub));
  return lines.join('\n');
}

/** A secondary line cut at its end to fit (what a table is matters less than its name). */
function fitEnd(s) {
  if (textWidth(s) <= LINE_WIDTH) return s;
  let n = s.length;
  while (n > 1 && textWidth(`${s.slice(0, n)}…`) > LINE_WIDTH) n--;
  return `${s.slice(0, n)}…`;
}

function nodeElement(n, model, position) {
  const classes = [n.kind === 'container' ? 'container' : n.kind];
  if (n.key === model.centre) classes.push('centre');
  if (n.kind === 'job') classes.push(`run-${n.state ?? 'NONE'}`);
  if (n.health) classes.push(`health-${n.health}`);
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
    /** Whether the view is as Fit left it (nobody panned or zoomed since): then a change of the
     * canvas's size (a panel or a bar opening beside it, the window) fits it again. */
    this.fitted = false;
    this.lastTap = 0;
    this.direction = 'LR';
    this.tip = document.createElement('div');
    this.tip.className = 'node-tip';
    this.tip.hidden = true;
    this.tip.setAttribute('role', 'tooltip');
    container.parentElement?.append(this.tip);
    this.resizeObserver = new ResizeObserver(() => this.resized());
    this.resizeObserver.observe(container);
  }

  /** Draws what is `shown` of `model` (`{ nodes, edges }`, see model.visible) afresh at
   * `positions` (node key → `{x, y}`), laid out in `direction` (LR or TB); Fit keeps `focus`
   * (node keys: the centre, a diff's changes) in view when the whole graph cannot be legible. */
  draw(model, positions, shown, { direction = 'LR', focus = null } = {}) {
    if (this.cy) this.cy.destroy();
    this.direction = direction;
    this.centreKey = model.centre;
    this.focus = focus;
    this.selected = null;
    this.nodesByKey = new Map(shown.nodes.map((n) => [n.key, n]));
    const elements = [];
    for (const n of shown.nodes) elements.push(nodeElement(n, model, positions[n.key] ?? { x: 0, y: 0 }));
    for (const e of shown.edges) elements.push(edgeElement(e));
    const large = elements.length > LARGE;
    this.large = large;
    this.cy = cytoscape({
      container: this.container,
      elements,
      style: stylesheet(palette(), large),
      layout: { name: 'preset', fit: false },
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
    this.minimap?.detach();
    this.minimap = new Minimap(this.minimapCanvas, this.cy);
    this.fit();
    this.cy.on('viewport', () => {
      if (!this.fitting) this.fitted = false;
      this.tip.hidden = true;
    });
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
    this.cy.on('tapstart', () => {
      this.lastTap = performance.now();
    });
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
    // The whole name on hover: the canvas shows it shortened when it is long.
    this.cy.on('mouseover', 'node', (e) => this.showTip(e.target));
    this.cy.on('mouseout', 'node', () => {
      this.tip.hidden = true;
    });
    return new Promise((resolve) => {
      // The first frame with the elements on it.
      this.cy.one('render', () => requestAnimationFrame(() => resolve()));
      this.cy.forceRender?.();
    });
  }

  showTip(ele) {
    const n = this.nodesByKey?.get(ele.id()) ?? this.extraNodes?.get(ele.id());
    if (!n) return;
    const health = n.health ? ` — ${n.health}` : '';
    this.tip.textContent = `${qualifiedName(n)}${health}`;
    const p = ele.renderedPosition();
    const h = ele.renderedHeight();
    this.tip.style.left = `${Math.round(this.container.offsetLeft + p.x)}px`;
    this.tip.style.top = `${Math.round(this.container.offsetTop + p.y + h / 2 + 6)}px`;
    this.tip.dataset.node = ele.id();
    this.tip.hidden = false;
  }

  /** The canvas changed size: fit again when the view is as Fit left it, else keep what is in
   * view (and the selected node in sight). Not while a double-click may be under way: its
   * second click must find its node where the first one did. */
  resized() {
    const cy = this.cy;
    if (!cy || cy.destroyed()) return;
    const wait = 450 - (performance.now() - this.lastTap);
    if (wait > 0) {
      clearTimeout(this.resizeTimer);
      this.resizeTimer = setTimeout(() => this.resized(), wait);
      return;
    }
    if (this.fitted) this.fit();
    else cy.resize();
    if (this.selected) this.reveal(this.selected);
    this.minimap?.refresh();
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
    const positions = { ...placeBeside(cy, origin, left, -1, this.direction), ...placeBeside(cy, origin, right, 1, this.direction) };
    for (const k of nodeKeys) this.nodesByKey?.set(k, model.nodes.get(k));
    cy.batch(() => {
      cy.add(nodeKeys.map((k) => nodeElement(model.nodes.get(k), model, positions[k])));
      cy.add(edgeKeys.map((k) => edgeElement(model.edges.get(k))));
    });
    this.minimap?.show(cy.nodes().length > MINIMAP_NODES || this.floored);
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

  /** Marks tables FAILED or STALE (`health`: container key → state) after the draw. */
  setHealth(model, health) {
    const cy = this.cy;
    if (!cy) return;
    cy.batch(() => {
      cy.nodes('.health-FAILED, .health-STALE').removeClass('health-FAILED health-STALE');
      for (const [key, state] of health) {
        const el = cy.getElementById(key);
        const n = model.nodes.get(key);
        if (!el.nonempty() || !n) continue;
        el.addClass(`health-${state}`);
        el.data('label', nodeLabel(n, model.ambiguousNames));
      }
    });
  }

  select(key) {
    this.selected = key;
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

  /**
   * Fits the graph into the canvas, no closer than MAX_FIT_ZOOM (a three-node graph is not blown
   * up), and never so far that node labels drop below LEGIBLE_PX on screen: a graph too big for
   * that is shown at the legible zoom around its focus (the centre and its neighbours, or a
   * diff's changes), with the overview map to find the rest.
   */
  fit() {
    const cy = this.cy;
    if (!cy) return;
    this.fitting = true;
    // The canvas may have changed size since (a window resized, a panel opened).
    cy.resize();
    const room = this.room();
    const all = cy.elements();
    const bb = all.boundingBox();
    const zoom = Math.min(MAX_FIT_ZOOM, room.w / Math.max(bb.w, 1), room.h / Math.max(bb.h, 1));
    this.floored = zoom < LEGIBLE_ZOOM;
    const z = this.floored ? LEGIBLE_ZOOM : zoom;
    const box = this.floored ? this.focusElements(room).boundingBox() : bb;
    // Centred on the focus; then, along an axis where the graph is bigger than the room, moved
    // so that no empty margin shows beside it (more of the graph in view, the focus still in it),
    // and along one where it is smaller, centred.
    const axis = (lo, hi, focusLo, focusHi, roomLo, roomLen) => {
      const pan = roomLo + roomLen / 2 - ((focusLo + focusHi) / 2) * z;
      if ((hi - lo) * z <= roomLen) return roomLo + roomLen / 2 - ((lo + hi) / 2) * z;
      return Math.min(roomLo - lo * z, Math.max(roomLo + roomLen - hi * z, pan));
    };
    cy.viewport({ zoom: z, pan: { x: axis(bb.x1, bb.x2, box.x1, box.x2, room.x, room.w), y: axis(bb.y1, bb.y2, box.y1, box.y2, room.y, room.h) } });
    this.fitting = false;
    this.fitted = true;
    this.minimap?.show(cy.nodes().length > MINIMAP_NODES || this.floored);
  }

  /** The part of the canvas the drawing may use, in CSS pixels: all of it but the toolbar's
   * strip at the top, the legend's at the bottom and a margin. */
  room() {
    const cy = this.cy;
    const stage = this.container.parentElement;
    const toolbar = stage?.querySelector('.toolbar');
    const legend = stage?.querySelector('.legend');
    const top = (toolbar ? toolbar.offsetTop + toolbar.offsetHeight : 0) + 8;
    const bottom = (legend && legend.offsetHeight ? cy.height() - legend.offsetTop : 0) + 8;
    const x = FIT_PADDING;
    return { x, y: top, w: Math.max(50, cy.width() - 2 * x), h: Math.max(50, cy.height() - top - bottom) };
  }

  /** What Fit keeps in view when the whole graph cannot be legible: the focus nodes with the
   * edges between them, else the centre with its neighbours, as far as they fit. */
  focusElements(room) {
    const cy = this.cy;
    const fits = (eles) => {
      const b = eles.boundingBox();
      return b.w * LEGIBLE_ZOOM <= room.w && b.h * LEGIBLE_ZOOM <= room.h;
    };
    const centre = cy.getElementById(this.centreKey ?? '');
    if (this.focus?.length) {
      let f = cy.collection();
      for (const k of this.focus) f = f.union(cy.getElementById(k));
      if (f.nonempty()) {
        f = f.union(f.edgesWith(f));
        if (fits(f)) return f;
        // Too many changes to show together: the first ones, then the rest by panning.
        return f.nodes().first();
      }
    }
    if (centre.empty()) return cy.nodes().first();
    const near = centre.closedNeighborhood();
    return fits(near) ? near : centre;
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

/** Free spots for `keys` in a column (a row, top down) beside `origin` (direction -1 before it,
 * 1 after it), clear of the nodes already drawn there. Wide fan-outs wrap into further columns
 * of at most 25. */
export function placeBeside(cy, origin, keys, direction, layoutDirection = 'LR') {
  const positions = {};
  if (!keys.length) return positions;
  const tb = layoutDirection === 'TB';
  // In the frame of the layout: `m` along the ranks, `c` across them.
  const main = tb ? NODE_HEIGHT : NODE_WIDTH;
  const cross = tb ? NODE_WIDTH : NODE_HEIGHT;
  const om = tb ? origin.y : origin.x;
  const oc = tb ? origin.x : origin.y;
  const mOf = (n) => n.position(tb ? 'y' : 'x');
  const cOf = (n) => n.position(tb ? 'x' : 'y');
  const perColumn = tb ? 8 : 25;
  const step = cross + NODE_SEP;
  const columns = Math.ceil(keys.length / perColumn);
  const sorted = [...keys].sort();
  for (let col = 0; col < columns; col++) {
    const slice = sorted.slice(col * perColumn, (col + 1) * perColumn);
    const m = om + direction * (col + 1) * (main + (tb ? 64 : RANK_SEP));
    const occupied = cy
      .nodes()
      .filter((n) => Math.abs(mOf(n) - m) < main)
      .map(cOf);
    const length = slice.length * step;
    const fits = (top) => occupied.every((c) => c < top - step / 2 || c > top + length - step / 2);
    let top = oc - length / 2 + step / 2;
    for (let i = 0; i < 400 && !fits(top); i++) {
      // Try after and before in turn, further out each time.
      const offset = Math.ceil((i + 1) / 2) * step;
      top = oc - length / 2 + step / 2 + (i % 2 === 0 ? offset : -offset);
    }
    slice.forEach((k, i) => {
      const c = top + i * step;
      positions[k] = tb ? { x: c, y: m } : { x: m, y: c };
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
      out.push(`<text x="${m.x.toFixed(1)}" y="${(m.y - 3).toFixed(1)}" font-size="${EDGE_FONT}" fill="${p.edgeText}" text-anchor="middle">${escapeXml(label)}</text>`);
    }
  });
  cy.nodes().forEach((n) => {
    const { x, y } = n.position();
    const external = n.hasClass('external');
    const centre = n.hasClass('centre');
    const failed = n.hasClass('health-FAILED');
    const stale = n.hasClass('health-STALE');
    const fill = failed ? p.failedBg : stale ? p.staleBg : external ? p.external : p.node;
    const stroke = failed ? p.failed : stale ? p.stale : centre ? p.accent : external ? p.externalBorder : p.border;
    out.push(
      `<rect x="${(x - NODE_WIDTH / 2).toFixed(1)}" y="${(y - NODE_HEIGHT / 2).toFixed(1)}" width="${NODE_WIDTH}" height="${NODE_HEIGHT}" rx="6" fill="${fill}" stroke="${stroke}" stroke-width="${failed || stale ? 4 : centre ? 3 : 1}"${external || stale ? ' stroke-dasharray="4 3"' : ''}/>`,
    );
    const lines = String(n.data('label')).split('\n');
    lines.forEach((line, i) => {
      const dy = (i - (lines.length - 1) / 2) * LABEL_FONT * 1.15 + LABEL_FONT / 3;
      out.push(`<text x="${x.toFixed(1)}" y="${(y + dy).toFixed(1)}" font-size="${LABEL_FONT}" fill="${p.nodeText}" text-anchor="middle">${escapeXml(line)}</text>`);
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
        d.fillStyle = n.hasClass('health-FAILED') ? p.failed : n.hasClass('health-STALE') ? p.stale : n.hasClass('centre') ? p.accent : n.hasClass('external') ? p.externalBorder : p.border;
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
