// The layered layout: dagre (@dagrejs/dagre) from left to right, sources on the left and derived
// tables on the right. It runs in a web worker (layout-worker.js), so a graph of thousands of
// nodes never blocks the page while it is laid out.
import dagre from '@dagrejs/dagre';

/** Node size on the canvas, in model units (graph.js draws nodes this size). */
export const NODE_WIDTH = 190;
export const NODE_HEIGHT = 44;
export const RANK_SEP = 110;
export const NODE_SEP = 14;

/** dagre's network-simplex ranking gives the tightest layers but grows badly (a 1,000-node graph
 * took a minute in a measurement); past this many nodes the tight-tree ranker takes over (2,000
 * nodes in about 2.5 s). */
const NETWORK_SIMPLEX_MAX_NODES = 200;

/**
 * Positions for `nodes` (`[{ key }]`) and `edges` (`[{ key, source, target }]`): a map from node
 * key to the centre `{ x, y }`. Pure: the same input gives the same output.
 */
export function layout(nodes, edges) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({
    rankdir: 'LR',
    ranksep: RANK_SEP,
    nodesep: NODE_SEP,
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
  const ranks = new Map();
  for (const key of g.nodes()) {
    const r = g.node(key).rank ?? 0;
    if (!ranks.has(r)) ranks.set(r, []);
    ranks.get(r).push(key);
  }
  const perColumn = Math.max(30, Math.round(Math.sqrt(nodes.length) * 1.2));
  if (Math.max(0, ...[...ranks.values()].map((r) => r.length)) <= perColumn) return positions;
  return wrapRanks(ranks, positions, perColumn);
}

/** Space between the sub-columns of a wrapped rank. */
const COLUMN_GAP = 30;

/**
 * A wide rank (a table with 800 sources, say) makes a column tens of thousands of pixels tall,
 * which no screen can show. When a rank has more than `perColumn` nodes, every rank is folded
 * into sub-columns of at most that many, in dagre's order (which keeps its crossing reduction),
 * and the ranks are spread left to right to make room: sources still left, derived right.
 */
function wrapRanks(ranks, positions, perColumn) {
  const out = {};
  const step = NODE_HEIGHT + NODE_SEP;
  let x = 0;
  for (const r of [...ranks.keys()].sort((a, b) => a - b)) {
    const keys = ranks.get(r).sort((a, b) => positions[a].y - positions[b].y);
    const columns = Math.ceil(keys.length / perColumn);
    const rows = Math.ceil(keys.length / columns);
    keys.forEach((key, i) => {
      const column = Math.floor(i / rows);
      const row = i % rows;
      const inColumn = Math.min(rows, keys.length - column * rows);
      out[key] = { x: Math.round(x + column * (NODE_WIDTH + COLUMN_GAP) + NODE_WIDTH / 2), y: Math.round((row - (inColumn - 1) / 2) * step) };
    });
    x += columns * (NODE_WIDTH + COLUMN_GAP) - COLUMN_GAP + RANK_SEP;
  }
  return out;
}
