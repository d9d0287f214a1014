// The layered layout: dagre (@dagrejs/dagre), sources first and derived tables after them. The
// direction and the spacing are chosen from the graph's shape and the canvas it will be shown in:
// left to right or top down, wide layers wrapped into sub-columns (or sub-rows), whichever lets
// Fit show the graph largest, so that its labels stay legible. It runs in a web worker
// (layout-worker.js), so a graph of thousands of nodes never blocks the page while it is laid out.
import dagre from '@dagrejs/dagre';

/** Node size on the canvas, in model units (graph.js draws nodes this size). Three lines of
 * LABEL_FONT text fit: the name (up to two lines) and what it is. */
export const NODE_WIDTH = 214;
export const NODE_HEIGHT = 60;
/** The node label's font size in model units: on screen it is this times the canvas zoom. */
export const LABEL_FONT = 13;
/** No label smaller than this on screen at Fit (CSS pixels). */
export const LEGIBLE_PX = 12;
/** The smallest zoom at which node labels are legible; Fit never goes below it. */
export const LEGIBLE_ZOOM = LEGIBLE_PX / LABEL_FONT;
/** Fit never zooms closer than this (a three-node graph is not blown up). */
export const MAX_FIT_ZOOM = 1.25;
/** The layout is chosen to reach this zoom at Fit; past it, the plainer layout wins. */
const COMFORTABLE_ZOOM = 1;
/** Padding Fit leaves around the graph, in CSS pixels. */
export const FIT_PADDING = 24;
export const RANK_SEP = 110;
export const NODE_SEP = 16;
/** Top-down layers need less room between them: edges run vertically, their labels beside. */
const RANK_SEP_TB = 64;
const NODE_SEP_TB = 28;
/** Space between the sub-columns (sub-rows) of a wrapped layer. */
const WRAP_GAP = 30;

/** dagre's network-simplex ranking gives the tightest layers but grows badly (a 1,000-node graph
 * took a minute in a measurement); past this many nodes the tight-tree ranker takes over (2,000
 * nodes in about 2.5 s), and only one direction is tried. */
const NETWORK_SIMPLEX_MAX_NODES = 200;

/** The size of a node along the layout's rank axis and across it. */
const extent = (direction) => (direction === 'TB' ? { main: NODE_HEIGHT, cross: NODE_WIDTH } : { main: NODE_WIDTH, cross: NODE_HEIGHT });

function dagreLayout(nodes, edges, direction) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({
    rankdir: direction,
    ranksep: direction === 'TB' ? RANK_SEP_TB : RANK_SEP,
    nodesep: direction === 'TB' ? NODE_SEP_TB : NODE_SEP,
    edgesep: 6,
    marginx: 20,
    marginy: 20,
    ranker: nodes.length > NETWORK_SIMPLEX_MAX_NODES ? 'tight-tree' : 'network-simplex',
  });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.key, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const e of edges) {
    if (e.source !== e.target && g.hasNode(e.source) && g.hasNode(e.target)) g.setEdge(e.source, e.target, {}, e.key);
  }
  dagre.layout(g);
  const positions = {};
  for (const key of g.nodes()) {
    const n = g.node(key);
    positions[key] = { x: Math.round(n.x), y: Math.round(n.y) };
  }
  return positions;
}

/** The layers of a laid-out graph: node keys grouped by their rank-axis coordinate, in order. */
function ranksOf(positions, direction) {
  const axis = direction === 'TB' ? 'y' : 'x';
  const ranks = new Map();
  for (const [key, p] of Object.entries(positions)) {
    if (!ranks.has(p[axis])) ranks.set(p[axis], []);
    ranks.get(p[axis]).push(key);
  }
  return [...ranks.keys()].sort((a, b) => a - b).map((k) => ranks.get(k));
}

/**
 * Folds every layer of more than `perLine` nodes into sub-columns (left to right) or sub-rows
 * (top down) of at most that many, in dagre's order (which keeps its crossing reduction), and
 * spreads the layers to make room. A table with 800 sources would otherwise be a column tens of
 * thousands of pixels tall, which no screen can show.
 */
function wrapRanks(ranks, positions, perLine, direction) {
  const out = {};
  const { main, cross } = extent(direction);
  const crossAxis = direction === 'TB' ? 'x' : 'y';
  const step = cross + (direction === 'TB' ? NODE_SEP_TB : NODE_SEP);
  const rankSep = direction === 'TB' ? RANK_SEP_TB : RANK_SEP;
  let at = 0;
  for (const rank of ranks) {
    const keys = [...rank].sort((a, b) => positions[a][crossAxis] - positions[b][crossAxis] || (a < b ? -1 : 1));
    const lines = Math.ceil(keys.length / perLine);
    const per = Math.ceil(keys.length / lines);
    keys.forEach((key, i) => {
      const line = Math.floor(i / per);
      const slot = i % per;
      const inLine = Math.min(per, keys.length - line * per);
      const m = Math.round(at + line * (main + WRAP_GAP) + main / 2);
      // Every other sub-column is staggered by half a step, so that the edges into the far ones
      // pass between the near ones' nodes rather than through them.
      const c = Math.round((slot - (inLine - 1) / 2 + (lines > 1 && line % 2 ? 0.5 : 0)) * step);
      out[key] = direction === 'TB' ? { x: c, y: m } : { x: m, y: c };
    });
    at += lines * (main + WRAP_GAP) - WRAP_GAP + rankSep;
  }
  return out;
}

function bounds(positions) {
  let x1 = Infinity;
  let y1 = Infinity;
  let x2 = -Infinity;
  let y2 = -Infinity;
  for (const p of Object.values(positions)) {
    x1 = Math.min(x1, p.x - NODE_WIDTH / 2);
    x2 = Math.max(x2, p.x + NODE_WIDTH / 2);
    y1 = Math.min(y1, p.y - NODE_HEIGHT / 2);
    y2 = Math.max(y2, p.y + NODE_HEIGHT / 2);
  }
  return { w: Math.max(1, x2 - x1), h: Math.max(1, y2 - y1) };
}

/** The zoom at which Fit shows `positions` whole in a `view` of `{ width, height }` CSS pixels. */
export function fitZoom(positions, view) {
  const b = bounds(positions);
  // Edge labels and arrows stick out of the node boxes a little: leave room for them.
  return Math.min((view.width - 2 * FIT_PADDING) / (b.w + 20), (view.height - 2 * FIT_PADDING) / (b.h + 20));
}

/**
 * Positions for `nodes` (`[{ key }]`) and `edges` (`[{ key, source, target }]`): `{ positions,
 * direction }`, positions a map from node key to the centre `{ x, y }`, direction `LR` or `TB`.
 * With `view` (`{ width, height }`, the canvas in CSS pixels) the candidates (both directions,
 * each with its wide layers wrapped a few ways) are scored by the zoom Fit would give them, up to
 * COMFORTABLE_ZOOM; the best wins, the plainer on a near tie. Pure: the same input gives the
 * same output.
 */
export function layout(nodes, edges, view = null) {
  const lr = dagreLayout(nodes, edges, 'LR');
  const perColumn = Math.max(30, Math.round(Math.sqrt(nodes.length) * 1.2));
  if (!view || !view.width || !view.height || nodes.length > NETWORK_SIMPLEX_MAX_NODES) {
    const ranks = ranksOf(lr, 'LR');
    const widest = Math.max(0, ...ranks.map((r) => r.length));
    return { positions: widest > perColumn ? wrapRanks(ranks, lr, perColumn, 'LR') : lr, direction: 'LR' };
  }
  // In order of preference: unwrapped first, then ever more wrapped, left to right before top
  // down at each step.
  const bases = { LR: lr, TB: dagreLayout(nodes, edges, 'TB') };
  const candidates = [];
  const ranks = { LR: ranksOf(lr, 'LR'), TB: ranksOf(bases.TB, 'TB') };
  const widest = (d) => Math.max(0, ...ranks[d].map((r) => r.length));
  for (const lines of [1, 2, 3, 4, 5, 6, 8, 10]) {
    for (const direction of ['LR', 'TB']) {
      if (lines === 1) candidates.push({ positions: bases[direction], direction });
      else if (widest(direction) >= lines * 2) candidates.push({ positions: wrapRanks(ranks[direction], bases[direction], Math.ceil(widest(direction) / lines), direction), direction });
    }
  }
  // Past a comfortable zoom nothing reads better: the first candidate that reaches it wins.
  let best = null;
  for (const c of candidates) {
    c.zoom = Math.min(COMFORTABLE_ZOOM, fitZoom(c.positions, view));
    if (!best || c.zoom > best.zoom * 1.03) best = c;
  }
  return { positions: best.positions, direction: best.direction };
}
