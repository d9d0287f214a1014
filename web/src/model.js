// What is drawn, without the drawing: the nodes and edges of the answers received so far, and the
// expansions made in place (so that each can be collapsed again). No DOM here.

export const containerKey = (id) => `c${id}`;
export const edgeKey = (id) => `e${id}`;

/** The label an edge carries: what introduced it, else its source type. */
export function edgeLabel(e) {
  return e.operation || e.sourceType || '';
}

function nodeOf(n) {
  return {
    key: containerKey(n.id),
    kind: 'container',
    id: n.id,
    name: n.name ?? `container ${n.id}`,
    displayName: n.displayName ?? null,
    containerType: n.containerType ?? null,
    datastore: n.datastore ?? null,
    fieldCount: n.fieldCount ?? null,
    up: Boolean(n.hasUpstream),
    down: Boolean(n.hasDownstream),
  };
}

function externalOf(n) {
  return { key: n.id, kind: 'external', id: n.id, name: n.fqn, fqn: n.fqn, sourceType: n.sourceType, up: false, down: false };
}

function edgeOf(e) {
  const source = e.sourceContainerId != null ? containerKey(e.sourceContainerId) : e.sourceNodeId;
  const target = e.targetContainerId != null ? containerKey(e.targetContainerId) : e.targetNodeId;
  return {
    key: edgeKey(e.id),
    id: e.id,
    source,
    target,
    sourceType: e.sourceType,
    operation: e.operation ?? null,
    description: e.description ?? null,
    retired: Boolean(e.retiredAt),
    label: edgeLabel(e),
  };
}

export class GraphModel {
  constructor() {
    this.clear();
  }

  clear() {
    /** @type {Map<string, object>} */
    this.nodes = new Map();
    /** @type {Map<string, object>} */
    this.edges = new Map();
    /** Expansions in the order made: `{ key, side, nodes: [keys], edges: [keys], before }`. */
    this.expansions = [];
    this.centre = null;
  }

  /** Starts over from a `lineageGraph` answer around container `centreId`. */
  reset(graph, centreId) {
    this.clear();
    this.centre = containerKey(centreId);
    for (const n of graph.nodes) this.nodes.set(containerKey(n.id), nodeOf(n));
    for (const n of graph.externalNodes ?? []) this.nodes.set(n.id, externalOf(n));
    for (const e of [...graph.edges, ...(graph.externalEdges ?? [])]) {
      const edge = edgeOf(e);
      if (this.nodes.has(edge.source) && this.nodes.has(edge.target)) this.edges.set(edge.key, edge);
    }
  }

  /**
   * Merges the answer of expanding node `key` one step (`side`: u, d or b) and records the
   * expansion. Nodes already drawn keep their place and flags; the expanded node's flag for that
   * side is cleared, since the answer holds all its neighbours there. Returns what was added.
   */
  merge(graph, key, side) {
    const node = this.nodes.get(key);
    const added = { nodes: [], edges: [] };
    if (!node) return added;
    const before = { up: node.up, down: node.down };
    for (const n of graph.nodes) {
      const k = containerKey(n.id);
      if (!this.nodes.has(k)) {
        this.nodes.set(k, nodeOf(n));
        added.nodes.push(k);
      }
    }
    for (const n of graph.externalNodes ?? []) {
      if (!this.nodes.has(n.id)) {
        this.nodes.set(n.id, externalOf(n));
        added.nodes.push(n.id);
      }
    }
    for (const e of [...graph.edges, ...(graph.externalEdges ?? [])]) {
      const edge = edgeOf(e);
      if (!this.edges.has(edge.key) && this.nodes.has(edge.source) && this.nodes.has(edge.target)) {
        this.edges.set(edge.key, edge);
        added.edges.push(edge.key);
      }
    }
    if (side === 'u' || side === 'b') node.up = false;
    if (side === 'd' || side === 'b') node.down = false;
    this.expansions.push({ key, side, nodes: added.nodes, edges: added.edges, before });
    return added;
  }

  /** Whether `key` was expanded in place (and can be collapsed). */
  expanded(key) {
    return this.expansions.some((x) => x.key === key);
  }

  /**
   * Undoes the expansions of node `key`: the nodes and edges they added go, with the expansions
   * made from those nodes in turn. Returns the keys removed.
   */
  collapse(key) {
    const removed = { nodes: [], edges: [] };
    const undo = (k) => {
      for (let i = this.expansions.length - 1; i >= 0; i--) {
        const x = this.expansions[i];
        if (x.key !== k) continue;
        this.expansions.splice(i, 1);
        for (const n of x.nodes) undo(n);
        for (const e of x.edges) {
          if (this.edges.delete(e)) removed.edges.push(e);
        }
        for (const n of x.nodes) {
          if (this.nodes.delete(n)) removed.nodes.push(n);
        }
        const node = this.nodes.get(k);
        if (node) {
          node.up = node.up || x.before.up;
          node.down = node.down || x.before.down;
        }
      }
    };
    undo(key);
    // Edges whose end went with a collapsed node.
    for (const [k, e] of this.edges) {
      if (!this.nodes.has(e.source) || !this.nodes.has(e.target)) {
        this.edges.delete(k);
        removed.edges.push(k);
      }
    }
    return removed;
  }

  /** Adds retired edges (from a side panel's list) between nodes already drawn. */
  addRetired(edges) {
    const added = [];
    for (const e of edges) {
      const edge = edgeOf(e);
      if (!this.edges.has(edge.key) && this.nodes.has(edge.source) && this.nodes.has(edge.target)) {
        this.edges.set(edge.key, edge);
        added.push(edge.key);
      }
    }
    return added;
  }

  /** Removes the retired edges drawn on demand. */
  removeRetired() {
    const removed = [];
    for (const [k, e] of this.edges) {
      if (e.retired) {
        this.edges.delete(k);
        removed.push(k);
      }
    }
    return removed;
  }

  /** Nodes whose lineage goes on beyond what is drawn. */
  cut() {
    return [...this.nodes.values()].filter((n) => n.up || n.down);
  }
}
