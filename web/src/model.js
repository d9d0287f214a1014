// What is drawn, without the drawing: the nodes and edges of the answers received so far, and the
// expansions made in place (so that each can be collapsed again). No DOM here.

export const containerKey = (id) => `c${id}`;
export const jobKey = (id) => `j${id}`;
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
    database: n.container?.database ?? n.database ?? null,
    schema: n.container?.schema ?? n.schema ?? null,
    fieldCount: n.fieldCount ?? null,
    // FAILED or STALE (a failed run left it so); null when fresh, unknown or not asked.
    health: n.healthAlert ?? null,
    up: Boolean(n.hasUpstream),
    down: Boolean(n.hasDownstream),
  };
}

function externalOf(n) {
  return { key: n.id, kind: 'external', id: n.id, name: n.fqn, fqn: n.fqn, sourceType: n.sourceType, up: false, down: false };
}

function jobOf(j) {
  return {
    key: jobKey(j.id),
    kind: 'job',
    id: j.id,
    name: j.restricted ? `job ${j.id} (restricted)` : j.name ?? `job ${j.id}`,
    namespace: j.namespace ?? null,
    restricted: Boolean(j.restricted),
    state: j.latestRun?.state ?? null,
    up: false,
    down: false,
  };
}

/** A jobEdge's end as the page keys nodes: `job:<id>`, a container id as text, or an external id. */
export function nodeKeyOf(id) {
  if (id.startsWith('job:')) return jobKey(id.slice(4));
  if (/^\d+$/.test(id)) return containerKey(id);
  return id;
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
    this.frontier = new Map();
    this.isPartial = false;
    this.diff = null;
    /** Wide layers folded into group nodes: group key → `{ key, members, side, distance, parent }`. */
    this.groups = new Map();
    /** Member node key → its group's key (for the groups that are closed). */
    this.hidden = new Map();
  }

  /** Starts over from a `lineageGraph` answer around node `centreKey` (`c<id>` or `j<id>`). */
  reset(graph, centreKey) {
    this.clear();
    this.centre = centreKey;
    for (const n of graph.nodes) this.nodes.set(containerKey(n.id), nodeOf(n));
    for (const n of graph.externalNodes ?? []) this.nodes.set(n.id, externalOf(n));
    for (const e of [...graph.edges, ...(graph.externalEdges ?? [])]) {
      const edge = edgeOf(e);
      if (this.nodes.has(edge.source) && this.nodes.has(edge.target)) this.edges.set(edge.key, edge);
    }
    this.frontier = new Map();
    for (const f of graph.frontier ?? []) {
      const k = containerKey(f.id);
      const was = this.frontier.get(k);
      this.frontier.set(k, { reason: f.reason, beyond: (was?.beyond ?? 0) + f.beyond, side: was && was.side !== f.side ? 'BOTH' : f.side, distance: f.distance });
    }
    this.isPartial = Boolean(graph.isPartial);
    this.addJobs(graph);
  }

  /** The jobs between the drawn nodes (`includeJobs`): a job node each, an edge from each input
   * to its job and from the job to each output. A container edge that a drawn job carries
   * (from one of its inputs to one of its outputs) is left out: the job stands for it. */
  addJobs(graph) {
    const jobs = graph.jobs ?? [];
    if (!jobs.length) return;
    for (const j of jobs) if (!this.nodes.has(jobKey(j.id))) this.nodes.set(jobKey(j.id), jobOf(j));
    const ins = new Map();
    const outs = new Map();
    for (const je of graph.jobEdges ?? []) {
      const source = nodeKeyOf(je.sourceNodeId);
      const target = nodeKeyOf(je.targetNodeId);
      if (!this.nodes.has(source) || !this.nodes.has(target)) continue;
      const key = `je:${source}>${target}`;
      this.edges.set(key, { key, id: null, source, target, kind: 'job', label: '', retired: false, sourceType: 'job', operation: je.kind });
      const job = jobKey(je.jobId);
      const map = je.kind === 'INPUT' ? ins : outs;
      if (!map.has(job)) map.set(job, new Set());
      map.get(job).add(je.kind === 'INPUT' ? source : target);
    }
    for (const [k, e] of this.edges) {
      if (e.kind === 'job') continue;
      for (const [job, inputs] of ins) {
        if (inputs.has(e.source) && outs.get(job)?.has(e.target)) {
          this.edges.delete(k);
          break;
        }
      }
    }
  }

  /** Marks what a `lineageDiff` says: appeared edges and nodes, retired ones (added, with their
   * ends when those are no longer drawn), the rest unchanged. */
  applyDiff(diff) {
    this.diff = diff;
    const appearedEdges = new Set(diff.appearedEdges.map((c) => edgeKey(c.edge.id)));
    const appearedNodes = new Set(diff.appearedNodes.map((n) => (n.containerId != null ? containerKey(n.containerId) : n.externalId)).filter(Boolean));
    for (const n of diff.retiredNodes) {
      if (n.containerId == null || this.nodes.has(containerKey(n.containerId))) continue;
      const c = n.container ?? { id: n.containerId };
      this.nodes.set(containerKey(n.containerId), { ...nodeOf({ ...c, id: n.containerId }), change: 'retired' });
    }
    for (const c of diff.retiredEdges) {
      const edge = { ...edgeOf(c.edge), retired: true, change: 'retired', at: c.at };
      for (const [end, container] of [[edge.source, c.edge.sourceContainer], [edge.target, c.edge.targetContainer]]) {
        if (end && !this.nodes.has(end) && container) this.nodes.set(end, { ...nodeOf(container), change: 'retired' });
      }
      if (this.nodes.has(edge.source) && this.nodes.has(edge.target)) this.edges.set(edge.key, edge);
    }
    for (const e of this.edges.values()) if (!e.change) e.change = appearedEdges.has(e.key) ? 'appeared' : 'unchanged';
    for (const n of this.nodes.values()) if (!n.change) n.change = appearedNodes.has(n.key) ? 'appeared' : 'unchanged';
  }

  /** Names drawn more than once: those nodes are labelled with their qualified name. */
  ambiguous() {
    const seen = new Map();
    for (const n of this.nodes.values()) {
      if (n.kind !== 'container') continue;
      const name = n.displayName || n.name;
      seen.set(name, (seen.get(name) ?? 0) + 1);
    }
    return new Set([...seen].filter(([, c]) => c > 1).map(([name]) => name));
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

  /** The tables drawn FAILED or STALE, by key. */
  unhealthy() {
    return new Map([...this.nodes.values()].filter((n) => n.kind === 'container' && n.health).map((n) => [n.key, n.health]));
  }

  /** Nodes whose lineage goes on beyond what is drawn. */
  cut() {
    return [...this.nodes.values()].filter((n) => n.up || n.down);
  }
}

/**
 * Folds every layer wider than `threshold` (the nodes first reached at one distance on one side
 * of the centre) into group nodes, one per node of the layer before that feeds them (downstream)
 * or that they feed (upstream), so that a 1 -> 30 -> 900 fan-out draws as 1 -> 30 -> 30 groups:
 * which of the 30 feeds which group stays visible. Groups in `open` stay unfolded.
 */
export function groupWide(model, threshold, open = []) {
  model.groups = new Map();
  model.hidden = new Map();
  const openSet = new Set(open);
  const out = new Map();
  const inn = new Map();
  for (const e of model.edges.values()) {
    if (e.source === e.target) continue;
    if (!out.has(e.source)) out.set(e.source, []);
    if (!inn.has(e.target)) inn.set(e.target, []);
    out.get(e.source).push(e.target);
    inn.get(e.target).push(e.source);
  }
  for (const [side, next] of [['d', out], ['u', inn]]) {
    const dist = new Map([[model.centre, 0]]);
    let layer = [model.centre];
    for (let d = 1; layer.length; d++) {
      const found = [];
      const parentOf = new Map();
      for (const k of layer) {
        for (const m of next.get(k) ?? []) {
          if (dist.has(m) || !model.nodes.has(m)) continue;
          dist.set(m, d);
          parentOf.set(m, k);
          found.push(m);
        }
      }
      if (found.length > threshold) {
        const byParent = new Map();
        for (const m of found) {
          const p = parentOf.get(m);
          if (!byParent.has(p)) byParent.set(p, []);
          byParent.get(p).push(m);
        }
        for (const [parent, members] of byParent) {
          const key = `g${side}:${parent}`;
          if (members.length < 2 || openSet.has(key)) continue;
          model.groups.set(key, { key, kind: 'group', side, distance: d, parent, members: members.sort(), name: `+ ${members.length} ${members.length === 1 ? 'table' : 'tables'}`, up: false, down: false });
          for (const m of members) model.hidden.set(m, key);
        }
      }
      layer = found;
    }
  }
  // A node reached from a hidden one stays drawn: only the members themselves fold.
}

/** What is drawn: the nodes not folded into a group, the groups, and the edges between what is
 * drawn (an edge to a folded node goes to its group; parallel ones merge, counted). */
export function visible(model) {
  const nodes = [];
  for (const n of model.nodes.values()) if (!model.hidden.has(n.key)) nodes.push(n);
  for (const g of model.groups.values()) nodes.push(g);
  const edges = [];
  const merged = new Map();
  for (const e of model.edges.values()) {
    const s = model.hidden.get(e.source) ?? e.source;
    const t = model.hidden.get(e.target) ?? e.target;
    if (s === e.source && t === e.target) {
      edges.push(e);
      continue;
    }
    if (s === t) continue;
    const key = `ge:${s}>${t}`;
    const m = merged.get(key);
    if (m) m.count++;
    else merged.set(key, { key, id: null, source: s, target: t, kind: 'group', count: 1, retired: false, label: '' });
  }
  for (const m of merged.values()) {
    m.label = m.count > 1 ? `${m.count} edges` : '';
    edges.push(m);
  }
  return { nodes, edges };
}
