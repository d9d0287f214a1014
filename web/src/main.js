// The lineage explorer at /ui: a thin client of the public GraphQL API. It draws the lineage
// graph around one container (one `lineageGraph` request per draw), expands nodes in place (one
// request each), explains a node in the side panel, and keeps its state in the URL, so that a
// view can be reloaded, bookmarked and sent on.
import { ApiError, getToken, gql, kindOf, onTokenNeeded, setToken } from './api.js';
import { EXPLAIN, FIELD_PATH, FIRST_RECORD, GRAPH, JOB_GRAPH } from './queries.js';
import { DEFAULT_MAX_NODES, clampDepth, format, graphSide, parse } from './state.js';
import { GraphModel, containerKey, groupWide, visible } from './model.js';
import { Home } from './home.js';
import { drawColumns } from './columns.js';
import { GraphView } from './graph.js';
import { ListView } from './listview.js';
import { Panel } from './panel.js';
import { Search } from './search.js';

/* global __LAYOUT_WORKER_URL__ */

const $ = (id) => document.getElementById(id);
/** Past this many nodes the page asks before drawing. */
const CONFIRM_NODES = 5000;
/** A layer (the nodes first reached at one distance on one side) wider than this is folded into
 * group nodes, one per node feeding it. */
const WIDE_LAYER = 40;

let state = parse(location.search);
const model = new GraphModel();
let drawSeq = 0;
let fieldPath = null;
let lastGraph = null;
let lastPositions = {};
let lastDirection = 'LR';
/** When the store's history starts (its first change), once asked. */
let firstRecord;

// What tests and the benchmark script read: the last draw's timings and the viewport.
const probe = {
  draws: 0,
  lastDraw: null,
  viewport: () => (view.cy ? { zoom: view.cy.zoom(), pan: { ...view.cy.pan() } } : null),
  /** Where a node is drawn, in CSS pixels from the canvas's top left (null when not drawn). */
  /** Model positions of every drawn node (expansions must leave the others where they were). */
  positions: () => Object.fromEntries((view.cy?.nodes() ?? []).map((n) => [n.id(), { ...n.position() }])),
  panBy: (d) => {
    view.cy?.panBy(d);
  },
  /** Puts a node in the middle of the canvas. */
  centre: (key) => {
    view.cy?.center(view.cy.getElementById(key));
  },
  /** The canvas classes of a node or edge, and an edge's line colour (for the diff's colours). */
  classes: (key) => view.cy?.getElementById(key).classes() ?? [],
  lineColour: (key) => view.cy?.getElementById(key).style('line-color') ?? null,
  nodePosition: (key) => {
    const n = view.cy?.getElementById(key);
    return n?.nonempty() ? n.renderedPosition() : null;
  },
  /** A node's or edge's box on the canvas, in CSS pixels from the canvas's top left. */
  renderedBox: (key) => {
    const n = view.cy?.getElementById(key);
    return n?.nonempty() ? n.renderedBoundingBox({ includeLabels: false }) : null;
  },
  /** Each drawn node's label font size on screen (the canvas zoom times its font size) and
   * whether the label is drawn at all. */
  labelSizes: () =>
    (view.cy?.nodes() ?? []).map((n) => ({ key: n.id(), px: parseFloat(n.renderedStyle('font-size')), label: n.data('label'), shown: n.visible() && n.style('label') !== '' })),
  /** The layout's direction (LR or TB), whether Fit had to stop at the legible zoom. */
  fit: () => ({ direction: view.direction, floored: Boolean(view.floored), fitted: view.fitted, width: view.cy?.width(), height: view.cy?.height() }),
  /** The label colour and background of a node (for the contrast checks). */
  nodeColours: (key) => {
    const n = view.cy?.getElementById(key);
    return n?.nonempty() ? { fg: n.style('color'), bg: n.style('background-color'), border: n.style('border-color') } : null;
  },
};
window.__tributary = probe;

function setBusy(what) {
  document.body.dataset.state = what;
}

// ---------------------------------------------------------------- status and errors

function status(text) {
  $('status').textContent = text;
}

function clearAlert() {
  const a = $('alert');
  a.hidden = true;
  a.replaceChildren();
  a.classList.remove('info');
  delete a.dataset.kind;
  delete a.dataset.more;
}

function alertWith(kind, text, actions = []) {
  const a = $('alert');
  a.classList.remove('info');
  a.dataset.kind = kind;
  a.replaceChildren(document.createTextNode(text));
  for (const [label, fn] of actions) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = label;
    b.addEventListener('click', fn);
    a.append(' ', b);
  }
  a.hidden = false;
}

function showError(e, retry) {
  const kind = e instanceof ApiError ? e.kind : 'internal';
  const again = retry ? [['Retry', retry]] : [];
  switch (kind) {
    case 'unauthenticated':
      return alertWith(kind, `Not signed in: this Tributary needs an API token (401). ${e.message}`, [
        [
          'Enter token',
          () =>
            askToken('Enter an API token.', true).then((t) => {
              if (!t) return;
              setToken(t);
              clearAlert();
              retry?.();
            }),
        ],
      ]);
    case 'forbidden':
      return alertWith(kind, `Not allowed (403): ${e.message}`);
    case 'unavailable':
      return alertWith(kind, `The store is unavailable or too slow (UNAVAILABLE); try again in a moment. ${e.message}`, again);
    case 'not_found':
      return alertWith(kind, `${e.message}.`);
    case 'network':
      return alertWith(kind, e.message, again);
    default:
      return alertWith(kind, `Error: ${e.message}`, again);
  }
}

// ---------------------------------------------------------------- token

let declined = false;
function askToken(reason, force = false) {
  if (declined && !force) return Promise.resolve(null);
  const dialog = $('token-dialog');
  $('token-reason').textContent = reason;
  $('token-input').value = '';
  $('token-forget').hidden = !getToken();
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        const value = $('token-input').value.trim();
        if (dialog.returnValue === 'ok' && value) {
          declined = false;
          resolve(value);
        } else {
          if (dialog.returnValue === 'forget') setToken(null);
          declined = true;
          resolve(null);
        }
      },
      { once: true },
    );
    dialog.returnValue = '';
    dialog.showModal();
    $('token-input').focus();
  });
}
onTokenNeeded((reason) => askToken(reason));
$('token-button').addEventListener('click', () =>
  askToken(getToken() ? 'Replace or forget the token this tab uses.' : 'Enter an API token for this tab.', true).then((t) => {
    if (t) {
      setToken(t);
      clearAlert();
      if (hasGraph()) draw();
      else home.show();
    }
  }),
);

// ---------------------------------------------------------------- layout worker

const worker = new Worker(__LAYOUT_WORKER_URL__);
const pendingLayouts = new Map();
let layoutSeq = 0;
worker.onmessage = (e) => {
  const p = pendingLayouts.get(e.data.id);
  if (!p) return;
  pendingLayouts.delete(e.data.id);
  if (e.data.error) p.reject(new Error(`layout failed: ${e.data.error}`));
  else p.resolve(e.data);
};
/** The canvas the drawing will have: the stage, less the side panel when one is about to open
 * beside it (the layout is chosen for the room it will be shown in). */
function canvasSize(panelOpening) {
  const stage = $('stage');
  let width = stage.clientWidth;
  if (panelOpening && $('panel').hidden && window.innerWidth > 760) width -= Math.min(460, window.innerWidth * 0.46) + 1;
  // Less the toolbar's strip at the top and the legend's at the bottom (GraphView.room).
  const bars = ($('stage').querySelector('.toolbar')?.offsetHeight ?? 0) + ($('stage').querySelector('.legend')?.offsetHeight ?? 0) + 24;
  return { width: Math.max(200, width), height: Math.max(200, stage.clientHeight - bars) };
}

function layoutInWorker(view) {
  const id = ++layoutSeq;
  const shown = visible(model);
  const nodes = shown.nodes.map((n) => ({ key: n.key }));
  const edges = shown.edges.map((e) => ({ key: e.key, source: e.source, target: e.target }));
  return new Promise((resolve, reject) => {
    pendingLayouts.set(id, { resolve, reject });
    worker.postMessage({ id, nodes, edges, view });
  });
}

// ---------------------------------------------------------------- views

const view = new GraphView($('cy'), $('minimap'), {
  select: (key) => select(key),
  expand: (key) => (model.groups.has(key) ? openGroup(key) : expand(key)),
});
const list = new ListView($('graph-text'), {
  select: (key, opts) => select(key, opts),
  expand: (key, side) => expand(key, side),
  collapse: (key) => collapse(key),
  openGroup: (key) => openGroup(key),
});
const panel = new Panel($('panel'), {
  close: () => {
    const key = state.sel;
    select(null);
    // Back to where the keyboard was: the node's entry in the list.
    if (key) document.querySelector(`#node-list li[data-node="${CSS.escape(key)}"] button`)?.focus();
  },
  expand: (key, side) => expand(key, side),
  collapse: (key) => collapse(key),
  recentre: (key) => {
    const n = model.nodes.get(key);
    if (n?.kind === 'job') navigate({ ...state, container: null, job: n.id, sel: key, field: null, expansions: [], open: [] });
    else if (n) navigate({ ...state, container: n.id, job: null, sel: key, field: null, expansions: [], open: [] });
  },
  openGroup: (key) => openGroup(key),
  explainFrom: (key) => {
    model.explainFrom = model.explainFrom === key ? null : key;
    const n = nodeOf(key);
    if (n) panel.show(n, model);
    status(model.explainFrom ? `Explaining from ${n.name}: select another table, then “How does ${n.name} feed this?”.` : describe());
  },
  explain: (key) => explain(model.explainFrom, key),
  field: (id) => showField(id),
  select: (key) => select(key, { focusPanel: true }),
  retired: (edges) => showRetired(edges),
  loaded: (key) => {
    if (state.field != null && key === state.sel) showField(state.field, { push: false });
    $('panel').dataset.loaded = 'true';
  },
});
const search = new Search($('search'), $('suggestions'), {
  onPick: (c) => navigate({ ...state, container: c.id, job: null, sel: null, field: null, expansions: [], open: [] }),
  onError: (e) => showError(e),
});
const home = new Home($('home'), { onError: (e) => showError(e) });

const hasGraph = () => state.container != null || state.job != null;
/** A drawn node or group by its key. */
const nodeOf = (key) => model.nodes.get(key) ?? model.groups.get(key);

window.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', () => view.restyle());

// ---------------------------------------------------------------- URL

function writeUrl(push) {
  const url = `${location.pathname}${format(state)}`;
  if (url === `${location.pathname}${location.search}`) return;
  if (push) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}

function navigate(next) {
  state = { ...next, expansions: [...(next.expansions ?? [])] };
  writeUrl(true);
  draw();
}

window.addEventListener('popstate', () => {
  const next = parse(location.search);
  const redraw =
    next.container !== state.container ||
    next.job !== state.job ||
    next.depth !== state.depth ||
    next.side !== state.side ||
    next.jobs !== state.jobs ||
    next.asOf !== state.asOf ||
    next.since !== state.since ||
    next.flat !== state.flat ||
    next.open.join() !== state.open.join() ||
    format({ expansions: next.expansions }) !== format({ expansions: state.expansions });
  state = next;
  syncControls();
  applyView();
  if (!hasGraph()) start();
  else if (redraw) draw();
  else restoreSelection();
});

const localTime = (iso) => (iso ? iso.slice(0, 19) : '');
function syncControls() {
  $('depth').value = String(state.depth);
  $('side').value = state.side ?? '';
  $('jobs-toggle').checked = state.jobs || state.job != null;
  $('jobs-toggle').disabled = state.job != null;
  $('timebar').hidden = state.container == null;
  $('as-of').value = localTime(state.asOf);
  $('since').value = localTime(state.since);
}

// ---------------------------------------------------------------- drawing

function describe() {
  const centre = model.nodes.get(model.centre);
  const cut = model.cut().length;
  const externals = [...model.nodes.values()].filter((n) => n.kind === 'external').length;
  const way = state.side === 'up' ? 'upstream' : state.side === 'down' ? 'downstream' : 'upstream and downstream';
  const jobs = [...model.nodes.values()].filter((n) => n.kind === 'job').length;
  const lineage = [...model.edges.values()].filter((e) => e.kind !== 'job').length;
  let text = `${centre?.name ?? 'Graph'}: ${model.nodes.size - jobs} node${model.nodes.size - jobs === 1 ? '' : 's'} (${externals} external), ${lineage} edge${lineage === 1 ? '' : 's'}`;
  if (jobs) text += `, ${jobs} job${jobs === 1 ? '' : 's'}`;
  text += `, ${way} to depth ${state.depth}`;
  if (state.asOf) text += `, as of ${state.asOf}`;
  if (model.expansions.length) text += `, ${model.expansions.length} expanded in place`;
  text += '.';
  if (model.groups.size) text += ` ${model.hidden.size} nodes of wide layers folded into ${model.groups.size} groups (select one to list it, double-click to open it).`;
  const reasons = {};
  for (const f of model.frontier.values()) reasons[f.reason] = (reasons[f.reason] ?? 0) + 1;
  // A cut with no frontier to tell (a job's graph) says nothing rather than "Cut ()".
  if (model.isPartial && Object.keys(reasons).length) {
    text += ` Cut (${Object.entries(reasons).map(([r, n]) => `${n} at ${r === 'DEPTH' ? 'the depth' : r === 'BUDGET' ? `the ${state.max ?? DEFAULT_MAX_NODES}-node budget` : 'the limit'}`).join(', ')}).`;
  }
  if (cut) text += ` ${cut} node${cut === 1 ? ' has' : 's have'} more lineage beyond what is drawn (◂ ▸): double-click or use the list to expand ${cut === 1 ? 'it' : 'them'}.`;
  return text;
}

/** Offers the next depth, only when it would draw more tables, saying how many. */
function showCutActions() {
  const cut = model.cut().length;
  if ($('alert').dataset.kind === 'cut') clearAlert();
  if (!cut || state.depth >= 20 || !$('alert').hidden) return;
  const next = lastGraph?.summary;
  // The summary counts containers as lineageGraph returns them: compare like with like.
  const now = lastGraph?.nodes?.length ?? 0;
  const more = next ? next.nodes - now : 0;
  if (!next || more <= 0) return;
  const budget = [...model.frontier.values()].filter((f) => f.reason === 'BUDGET').length;
  alertWith(
    'cut',
    `${cut} table${cut === 1 ? '' : 's'} lead${cut === 1 ? 's' : ''} beyond ${budget ? 'what was drawn' : `depth ${state.depth}`}: depth ${state.depth + 1} adds ${next.isPartial ? 'at least ' : ''}${more} table${more === 1 ? '' : 's'} (${next.nodes} in all).`,
    [
      [`Draw depth ${state.depth + 1}`, () => navigate({ ...state, depth: state.depth + 1, expansions: [] })],
      ['Dismiss', clearAlert],
    ],
  );
  $('alert').classList.add('info');
  $('alert').dataset.more = String(more);
}

/** The notes on the drawing: as of an instant, what is today's rather than the instant's. */
function showNotes(graph) {
  const note = $('drawing-note');
  const today = state.asOf ? (graph.asOf?.notReconstructed ?? []).find((t) => /\bjobs\b/.test(t)) : null;
  if (!today) {
    note.hidden = true;
    note.replaceChildren();
    return;
  }
  note.hidden = false;
  note.dataset.kind = 'as-of-jobs';
  note.replaceChildren(
    Object.assign(document.createElement('strong'), { textContent: `As of ${state.asOf.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}: ` }),
    'the lineage as it was then. Jobs, runs and health are today’s, not the instant’s: the store does not rebuild them for the past yet, so no table is marked failed or stale here.',
  );
}

/** The FAILED and STALE tables drawn, in the health bar above the drawing: each named, the
 * failed ones with the job whose run failed, and the “what is stale” highlight. */
function showHealth() {
  const bar = $('healthbar');
  const unhealthy = model.unhealthy();
  view.setHealth(model, unhealthy);
  list.render(model);
  list.select(state.sel);
  if (!unhealthy.size) {
    bar.hidden = true;
    bar.replaceChildren();
    return;
  }
  const failed = [...unhealthy].filter(([, s]) => s === 'FAILED').map(([k]) => model.nodes.get(k));
  const stale = [...unhealthy].filter(([, s]) => s === 'STALE').map(([k]) => model.nodes.get(k));
  const incidents = lastGraph?.incidents ?? [];
  const node = (n) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'link';
    b.dataset.node = n.key;
    b.textContent = n.displayName || n.name;
    b.title = [n.database, n.schema, n.name].filter(Boolean).join('.');
    b.addEventListener('click', () => select(n.key, { focusPanel: true }));
    return b;
  };
  const parts = [];
  const span = (cls, text) => Object.assign(document.createElement('span'), { className: cls, textContent: text });
  if (failed.length) {
    const p = document.createElement('span');
    p.dataset.health = 'FAILED';
    p.append(span('state state-FAILED', 'FAILED'), ' ');
    failed.forEach((n, i) => {
      if (i) p.append('; ');
      p.append(node(n));
      const by = incidents.filter((x) => x.job && (x.job.outputs ?? []).some((o) => o.container && `c${o.container.id}` === n.key));
      for (const x of by) {
        const a = document.createElement('a');
        a.href = `/ui?job=${x.job.id}&depth=2&sel=j${x.job.id}`;
        a.dataset.job = x.job.id;
        a.textContent = x.job.restricted ? `job ${x.job.id}` : `${x.job.namespace}/${x.job.name}`;
        p.append(' — its job ', a, ` ${x.state === 'ABORT' ? 'aborted' : 'failed'}${x.at ? ` ${x.at.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}` : ''}`);
      }
    });
    parts.push(p);
  }
  if (stale.length) {
    const p = document.createElement('span');
    p.dataset.health = 'STALE';
    p.append(span('state state-STALE', 'STALE'), ` ${stale.length} downstream: `);
    stale.forEach((n, i) => {
      if (i) p.append(', ');
      p.append(node(n));
    });
    parts.push(p);
  }
  const toggle = document.createElement('button');
  toggle.type = 'button';
  toggle.id = 'stale-toggle';
  toggle.setAttribute('aria-pressed', String(state.hl === 'stale'));
  toggle.textContent = 'Highlight what is stale';
  toggle.addEventListener('click', () => {
    state.hl = state.hl === 'stale' ? null : 'stale';
    writeUrl(false);
    showStale(state.hl === 'stale');
  });
  bar.replaceChildren(...parts, toggle);
  bar.hidden = false;
}

/** Highlights the FAILED and STALE tables and the edges between them (dims the rest). */
function showStale(on) {
  $('stale-toggle')?.setAttribute('aria-pressed', String(on));
  if (!on) return highlight(null);
  const keys = new Set(model.unhealthy().keys());
  if (keys.size) highlight(keys);
}

/** Clamps an instant to the store's first record (an instant before it shows nothing); says so. */
async function clampTimes() {
  if (!state.asOf && !state.since) return;
  if (firstRecord === undefined) {
    const { data } = await gql(FIRST_RECORD);
    const at = data.edges.items[0]?.created ?? null;
    // The store keeps microseconds, a Date milliseconds: round up, so as not to land before it.
    firstRecord = at ? new Date(Date.parse(at) + (/\.\d{4,}/.test(at) ? 1 : 0)).toISOString() : null;
  }
  const notes = [];
  for (const k of ['asOf', 'since']) {
    if (state[k] && firstRecord && Date.parse(state[k]) < Date.parse(firstRecord)) {
      notes.push(`${k === 'asOf' ? 'As of' : 'Changed since'} ${state[k]} is before the store’s first record, ${firstRecord}: shown from there instead.`);
      state[k] = firstRecord;
    }
  }
  $('time-note').textContent = notes.join(' ');
  if (notes.length) {
    writeUrl(false);
    syncControls();
  }
}

async function draw({ confirmed = false } = {}) {
  if (!hasGraph()) return;
  home.hide();
  const seq = ++drawSeq;
  syncControls();
  clearAlert();
  setBusy('loading');
  $('time-note').textContent = '';
  status(state.job != null ? `Loading the lineage of job ${state.job}…` : `Loading the lineage of container ${state.container}…`);
  const started = performance.now();
  let graph;
  try {
    await clampTimes();
    if (state.job != null) {
      const { data } = await gql(JOB_GRAPH, { job: state.job, depth: state.depth, side: graphSide(state.side), health: true, incidents: true });
      graph = { ...data.jobLineageGraph, incidents: data.incidents?.items ?? [] };
    } else {
      const vars = {
        id: state.container,
        depth: state.depth,
        side: graphSide(state.side),
        asOf: state.asOf,
        max: state.max ?? DEFAULT_MAX_NODES,
        jobs: state.jobs,
        sum: state.depth < 20 && !state.since,
        next: Math.min(20, state.depth + 1),
        diff: Boolean(state.since),
        // Health is the instant's in an as-of view; the failed runs that name a FAILED table's
        // job are today's, so they are asked only today.
        health: true,
        incidents: !state.asOf,
      };
      if (state.since) vars.since = state.since;
      const { data, errors } = await gql(GRAPH, vars);
      const failed = errors.find((e) => e.path?.[0] === 'lineageGraph' || e.path?.[0] === 'diff');
      if (failed || !data.lineageGraph) throw new ApiError(kindOf(failed), failed?.message ?? 'No graph in the answer.', errors);
      graph = { ...data.lineageGraph, summary: data.summary ?? null, diff: data.diff ?? null, incidents: data.incidents?.items ?? [] };
    }
  } catch (e) {
    if (seq !== drawSeq) return;
    setBusy('error');
    status('No graph drawn.');
    return showError(e, () => draw());
  }
  if (seq !== drawSeq) return;
  const fetched = performance.now();
  const size = graph.nodes.length + graph.externalNodes.length;
  if (size > CONFIRM_NODES && !confirmed) {
    setBusy('confirm');
    status(`The answer has ${size} nodes and ${graph.edges.length + graph.externalEdges.length} edges.`);
    return alertWith('large', `This answer has ${size} nodes: drawing it takes a while.`, [
      ['Draw anyway', () => draw({ confirmed: true })],
      ...(state.depth > 1 ? [[`Draw depth ${state.depth - 1}`, () => navigate({ ...state, depth: state.depth - 1, expansions: [] })]] : []),
    ]);
  }
  lastGraph = graph;
  await render(seq, started, fetched);
}

/** Draws `lastGraph` (after a request, or again when a group opens): the model, the folding of
 * wide layers, the layout, the canvas, the list. */
async function render(seq, started = performance.now(), fetched = started) {
  const graph = lastGraph;
  model.reset(graph, state.job != null ? `j${state.job}` : containerKey(state.container));
  if (graph.diff) model.applyDiff(graph.diff);
  model.ambiguousNames = model.ambiguous();
  if (!state.flat && !state.jobs && state.job == null) groupWide(model, WIDE_LAYER, state.open);
  status(`Laying out ${model.nodes.size} nodes…`);
  showNotes(graph);
  let layout;
  try {
    layout = await layoutInWorker(canvasSize(Boolean(state.sel || graph.diff)));
  } catch (e) {
    setBusy('error');
    return showError(e);
  }
  if (seq !== drawSeq) return;
  const laidOut = performance.now();
  lastPositions = layout.positions;
  lastDirection = layout.direction;
  const changed = graph.diff ? [...model.edges.values()].filter((e) => e.change === 'appeared' || e.change === 'retired').flatMap((e) => [e.source, e.target]) : null;
  await view.draw(model, layout.positions, visible(model), { direction: layout.direction, focus: changed?.length ? [...new Set(changed)] : null });
  if (seq !== drawSeq) return;
  const drawn = performance.now();
  probe.draws++;
  probe.lastDraw = {
    nodes: model.nodes.size,
    drawnNodes: visible(model).nodes.length,
    groups: model.groups.size,
    edges: model.edges.size,
    requestMs: Math.round(fetched - started),
    layoutMs: Math.round(laidOut - fetched),
    layoutWorkerMs: layout.ms,
    renderMs: Math.round(drawn - laidOut),
    totalMs: Math.round(drawn - started),
  };
  const centre = model.nodes.get(model.centre);
  if (centre && centre.kind === 'container') search.show(centre.displayName || centre.name, centre);
  // Expansions from the URL, replayed in place in their order: the view of before.
  const expansions = state.expansions;
  state.expansions = [];
  for (const x of expansions) {
    if (seq !== drawSeq) return;
    await expand(containerKey(x.id), x.side, { push: false, render: false });
  }
  list.render(model);
  showHealth();
  status(describe());
  showCutActions();
  applyView();
  writeUrl(false);
  setBusy('drawn');
  applyView();
  if (graph.diff && !state.sel) panel.showDiff(graph.diff, model);
  else restoreSelection();
  if (state.hl === 'stale') showStale(true);
}

/** Opens a folded group on the graph: its tables are laid out with the rest (no request). */
async function openGroup(key) {
  if (!model.groups.has(key) || !lastGraph) return;
  state.open = [...state.open, key];
  state.sel = null;
  writeUrl(true);
  setBusy('loading');
  await render(++drawSeq);
}

/** "How does A feed B": the paths of `explainLineage`, highlighted, each hop's evidence listed. */
async function explain(fromKey, toKey) {
  const from = model.nodes.get(fromKey);
  const to = model.nodes.get(toKey);
  if (!from || !to) return;
  try {
    const { data } = await gql(EXPLAIN, { from: from.id, to: to.id, asOf: state.asOf });
    const answer = data.explainLineage;
    const nodes = new Set();
    const edges = new Set();
    for (const p of answer.paths) {
      for (const id of p.nodeIds) nodes.add(containerKey(id));
      for (const h of p.hops) edges.add(`e${h.edge.id}`);
    }
    highlight(nodes.size ? nodes : null, edges);
    panel.showExplain({ from: from.name, to: to.name, answer, names: (id) => model.nodes.get(containerKey(id))?.name ?? `container ${id}` });
    status(`${answer.paths.length} path${answer.paths.length === 1 ? '' : 's'} from ${from.name} to ${to.name}, highlighted.`);
    $('graph-text').dataset.explained = String(answer.paths.length);
  } catch (e) {
    panel.showExplain({ error: e.message });
  }
}

function restoreSelection() {
  const key = state.sel && nodeOf(state.sel) ? state.sel : null;
  if (key) select(key, { push: false, keepField: true });
  else {
    panel.close();
    view.select(null);
    list.select(null);
    highlight(null);
  }
}

async function expand(key, side, { push = true, render = true } = {}) {
  const node = model.nodes.get(key);
  if (!node || node.kind !== 'container') return;
  const want = side ?? (node.up && node.down ? 'b' : node.up ? 'u' : node.down ? 'd' : null);
  if (!want) return status(`${node.name} has no more lineage to expand.`);
  setBusy('loading');
  let graph;
  try {
    const { data } = await gql(GRAPH, { id: node.id, depth: 1, side: want === 'u' ? 'UPSTREAM' : want === 'd' ? 'DOWNSTREAM' : null, asOf: state.asOf, health: true });
    graph = data.lineageGraph;
  } catch (e) {
    setBusy('error');
    return showError(e, () => expand(key, side));
  }
  const added = model.merge(graph, key, want);
  view.add(model, key, want, added.nodes, added.edges);
  view.update(model, key);
  if (added.nodes.some((k) => model.nodes.get(k)?.health)) showHealth();
  state.expansions.push({ id: node.id, side: want });
  if (render) {
    list.render(model);
    list.select(state.sel);
    if (fieldPath) highlight(fieldPath.keys);
    status(`${describe()} Expanded ${node.name}: ${added.nodes.length} node${added.nodes.length === 1 ? '' : 's'} added.`);
    showCutActions();
    writeUrl(push);
    if (state.sel === key) panel.show(node, model);
    setBusy('drawn');
  }
}

function collapse(key) {
  const node = model.nodes.get(key);
  if (!node) return;
  const removed = model.collapse(key);
  view.remove([...removed.edges, ...removed.nodes]);
  view.update(model, key);
  state.expansions = model.expansions.map((x) => ({ id: model.nodes.get(x.key).id, side: x.side }));
  if (state.sel && !model.nodes.has(state.sel)) state.sel = null;
  list.render(model);
  list.select(state.sel);
  if (fieldPath) highlight(fieldPath.keys);
  status(`${describe()} Collapsed ${node.name}: ${removed.nodes.length} node${removed.nodes.length === 1 ? '' : 's'} removed.`);
  showCutActions();
  writeUrl(true);
  if (state.sel === key) panel.show(node, model);
  else if (!state.sel) panel.close();
}

function select(key, { push = false, focusPanel = false, keepField = false } = {}) {
  const changed = key !== state.sel;
  state.sel = key;
  if (!keepField && changed) {
    state.field = null;
    highlight(null);
  }
  view.select(key);
  list.select(key);
  writeUrl(push);
  if (!key) return panel.close();
  delete $('panel').dataset.loaded;
  const node = nodeOf(key);
  if (!node) return panel.close();
  panel.show(node, model, { focus: focusPanel });
  // The panel took room from the canvas: the canvas re-fits into what is left (see
  // GraphView.resized) and keeps the node in sight.
  requestAnimationFrame(() => view.reveal(key));
}

function highlight(keys, edgeKeys = null) {
  fieldPath = keys ? { ...(fieldPath ?? {}), keys } : null;
  view.highlight(keys, edgeKeys);
  list.highlight(keys);
  for (const li of document.querySelectorAll('#edge-list li')) li.dataset.highlighted = edgeKeys?.has(li.dataset.edge) ? 'true' : 'false';
}

async function showField(id, { push = false } = {}) {
  if (id == null) {
    state.field = null;
    highlight(null);
    panel.showFieldPath(null);
    return writeUrl(push);
  }
  state.field = id;
  writeUrl(push);
  try {
    const { data } = await gql(FIELD_PATH, { f: id });
    if (state.field !== id) return;
    if (!data.field) return panel.showFieldPath({ error: `Field ${id} not found.` });
    const ids = new Set([data.field.containerId, ...data.fieldConnections.fields.map((f) => f.containerId)]);
    const keys = new Set([...ids].map(containerKey));
    highlight(keys);
    const drawn = [...keys].filter((k) => model.nodes.has(k)).length;
    panel.showFieldPath({
      field: data.field,
      containers: [...ids],
      connections: data.fieldConnections.fields.length,
      down: data.down,
      up: data.up,
    });
    status(`Column lineage of ${data.field.container?.name}.${data.field.name}: ${ids.size} container${ids.size === 1 ? '' : 's'}, ${drawn} of them drawn (highlighted).`);
  } catch (e) {
    panel.showFieldPath({ error: e.message });
  }
}

function showRetired(edges) {
  const removed = model.removeRetired();
  view.remove(removed);
  if (edges) {
    const added = model.addRetired(edges);
    view.addEdges(model, added);
    const missing = edges.length - added.length;
    status(`${added.length} retired edge${added.length === 1 ? '' : 's'} drawn dashed${missing ? `; ${missing} join nodes not drawn` : ''}.`);
  }
  list.render(model);
  list.select(state.sel);
}

// ---------------------------------------------------------------- controls

function applyView() {
  const columnsMode = state.view === 'columns';
  $('columns-toggle').setAttribute('aria-pressed', String(columnsMode));
  $('columns-view').hidden = !columnsMode || !hasGraph();
  $('stage').classList.toggle('columns-mode', columnsMode && hasGraph());
  if (columnsMode && hasGraph() && document.body.dataset.state === 'drawn' && $('columns-view').dataset.for !== format(state)) {
    $('columns-view').dataset.for = format(state);
    delete $('columns-view').dataset.edges;
    drawColumns($('columns-view'), model, lastPositions, lastDirection).catch((e) => showError(e));
  }
  const listMode = state.view === 'list';
  $('stage').classList.toggle('list-mode', listMode);
  $('graph-text').classList.toggle('visually-hidden', !listMode);
  $('view-toggle').setAttribute('aria-pressed', String(listMode));
  $('view-toggle').textContent = listMode ? 'Graph view' : 'List view';
  if (!listMode) view.cy?.resize();
}

$('view-toggle').addEventListener('click', () => {
  state.view = state.view === 'list' ? 'graph' : 'list';
  writeUrl(false);
  applyView();
});
$('columns-toggle').addEventListener('click', () => {
  state.view = state.view === 'columns' ? 'graph' : 'columns';
  writeUrl(false);
  applyView();
});
$('jobs-toggle').addEventListener('change', () => {
  if (state.container == null) return;
  navigate({ ...state, jobs: $('jobs-toggle').checked, expansions: [], open: [] });
});
const fromLocal = (v) => (v ? new Date(`${v.length === 16 ? `${v}:00` : v}Z`).toISOString() : null);
$('as-of').addEventListener('change', () => navigate({ ...state, asOf: fromLocal($('as-of').value), expansions: [] }));
$('since').addEventListener('change', () => navigate({ ...state, since: fromLocal($('since').value), sel: null, expansions: [] }));
$('as-of-now').addEventListener('click', () => navigate({ ...state, asOf: null, expansions: [] }));
$('since-clear').addEventListener('click', () => navigate({ ...state, since: null, expansions: [] }));
document.addEventListener('keydown', (e) => {
  const typing = /^(INPUT|SELECT|TEXTAREA)$/.test(document.activeElement?.tagName ?? '');
  if ((e.key === 'k' && (e.ctrlKey || e.metaKey)) || (e.key === '/' && !typing)) {
    e.preventDefault();
    $('search').focus();
  }
});
$('fit').addEventListener('click', () => view.fit());
$('zoom-in').addEventListener('click', () => view.zoomBy(1.25));
$('zoom-out').addEventListener('click', () => view.zoomBy(0.8));

function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
const exportName = (ext) => `lineage-${(model.nodes.get(model.centre)?.name ?? 'graph').replace(/[^A-Za-z0-9_.-]+/g, '_')}-d${state.depth}.${ext}`;
$('export-png').addEventListener('click', () => {
  const blob = view.png();
  if (blob) download(blob, exportName('png'));
});
$('export-svg').addEventListener('click', () => {
  const svg = view.svg();
  if (svg) download(new Blob([svg], { type: 'image/svg+xml' }), exportName('svg'));
});

$('controls').addEventListener('submit', async (e) => {
  e.preventDefault();
  const depth = clampDepth($('depth').value);
  const side = $('side').value || null;
  let id = search.picked?.id ?? null;
  const text = $('search').value.trim();
  if (id == null && text) {
    try {
      const { data } = await gql('query Pick($n: String!) { search(query: $n, kinds: [CONTAINER], first: 2) { containerId match } }', { n: text });
      const hits = data.search;
      // The one exact match, or the only match.
      const exact = hits.filter((h) => h.match === 'EXACT');
      id = exact.length === 1 ? exact[0].containerId : hits.length === 1 ? hits[0].containerId : null;
    } catch (err) {
      return showError(err);
    }
  }
  if (id == null) {
    if (state.container != null && !text) id = state.container;
    else return status(text ? `No single container is called “${text}”: pick one from the suggestions.` : 'Type a container name first.');
  }
  const same = id === state.container;
  navigate({ ...state, container: id, job: null, open: same ? state.open : [], depth, side, sel: same ? state.sel : null, field: same ? state.field : null, expansions: same && depth === state.depth && side === state.side ? state.expansions : [] });
});

for (const id of ['side', 'depth']) {
  $(id).addEventListener('change', () => {
    if (!hasGraph()) return;
    const depth = clampDepth($('depth').value);
    const side = $('side').value || null;
    if (depth === state.depth && side === state.side) return;
    navigate({ ...state, depth, side, expansions: [] });
  });
}

// ---------------------------------------------------------------- start

function start() {
  if (hasGraph()) return draw();
  drawSeq++;
  view.cy?.destroy();
  view.cy = null;
  model.clear();
  panel.close();
  for (const id of ['healthbar', 'drawing-note']) $(id).hidden = true;
  setBusy('idle');
  status('Find a table by name above, or start from what changed and what broke below.');
  home.show();
  $('search').focus();
}

syncControls();
applyView();
start();
