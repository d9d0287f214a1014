// The lineage explorer at /ui: a thin client of the public GraphQL API. It draws the lineage
// graph around one container (one `lineageGraph` request per draw), expands nodes in place (one
// request each), explains a node in the side panel, and keeps its state in the URL, so that a
// view can be reloaded, bookmarked and sent on.
import { ApiError, getToken, gql, onTokenNeeded, setToken } from './api.js';
import { FIELD_PATH, GRAPH } from './queries.js';
import { clampDepth, format, graphSide, parse } from './state.js';
import { GraphModel, containerKey } from './model.js';
import { GraphView } from './graph.js';
import { ListView } from './listview.js';
import { Panel } from './panel.js';
import { Search } from './search.js';

/* global __LAYOUT_WORKER_URL__ */

const $ = (id) => document.getElementById(id);
/** Past this many nodes the page asks before drawing. */
const CONFIRM_NODES = 5000;

let state = parse(location.search);
const model = new GraphModel();
let drawSeq = 0;
let fieldPath = null;

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
  nodePosition: (key) => {
    const n = view.cy?.getElementById(key);
    return n?.nonempty() ? n.renderedPosition() : null;
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
      if (state.container != null) draw();
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
function layoutInWorker() {
  const id = ++layoutSeq;
  const nodes = [...model.nodes.keys()].map((key) => ({ key }));
  const edges = [...model.edges.values()].map((e) => ({ key: e.key, source: e.source, target: e.target }));
  return new Promise((resolve, reject) => {
    pendingLayouts.set(id, { resolve, reject });
    worker.postMessage({ id, nodes, edges });
  });
}

// ---------------------------------------------------------------- views

const view = new GraphView($('cy'), $('minimap'), {
  select: (key) => select(key),
  expand: (key) => expand(key),
});
const list = new ListView($('graph-text'), {
  select: (key, opts) => select(key, opts),
  expand: (key, side) => expand(key, side),
  collapse: (key) => collapse(key),
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
    if (n) navigate({ ...state, container: n.id, sel: key, field: null, expansions: [] });
  },
  field: (id) => showField(id),
  select: (key) => select(key, { focusPanel: true }),
  retired: (edges) => showRetired(edges),
  loaded: (key) => {
    if (state.field != null && key === state.sel) showField(state.field, { push: false });
    $('panel').dataset.loaded = 'true';
  },
});
const search = new Search($('search'), $('suggestions'), {
  onPick: (c) => navigate({ ...state, container: c.id, sel: null, field: null, expansions: [] }),
  onError: (e) => showError(e),
});

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
    next.depth !== state.depth ||
    next.side !== state.side ||
    format({ expansions: next.expansions }) !== format({ expansions: state.expansions });
  state = next;
  syncControls();
  applyView();
  if (redraw) draw();
  else restoreSelection();
});

function syncControls() {
  $('depth').value = String(state.depth);
  $('side').value = state.side ?? '';
}

// ---------------------------------------------------------------- drawing

function describe() {
  const centre = model.nodes.get(model.centre);
  const cut = model.cut().length;
  const externals = [...model.nodes.values()].filter((n) => n.kind === 'external').length;
  const way = state.side === 'up' ? 'upstream' : state.side === 'down' ? 'downstream' : 'upstream and downstream';
  let text = `${centre?.name ?? 'Graph'}: ${model.nodes.size} node${model.nodes.size === 1 ? '' : 's'} (${externals} external), ${model.edges.size} edge${model.edges.size === 1 ? '' : 's'}, ${way} to depth ${state.depth}`;
  if (model.expansions.length) text += `, ${model.expansions.length} expanded in place`;
  text += '.';
  if (cut) text += ` ${cut} node${cut === 1 ? ' has' : 's have'} more lineage beyond what is drawn (◂ ▸): double-click or use the list to expand ${cut === 1 ? 'it' : 'them'}.`;
  return text;
}

function showCutActions() {
  const cut = model.cut().length;
  if ($('alert').dataset.kind === 'cut') clearAlert();
  if (!cut || state.depth >= 20 || !$('alert').hidden) return;
  alertWith('cut', `${cut} node${cut === 1 ? '' : 's'} reach${cut === 1 ? 'es' : ''} beyond depth ${state.depth}.`, [
    [`Draw depth ${state.depth + 1}`, () => navigate({ ...state, depth: state.depth + 1, expansions: [] })],
    ['Dismiss', clearAlert],
  ]);
  $('alert').classList.add('info');
}

async function draw({ confirmed = false } = {}) {
  if (state.container == null) return;
  const seq = ++drawSeq;
  syncControls();
  clearAlert();
  setBusy('loading');
  status(`Loading the lineage of container ${state.container}…`);
  const started = performance.now();
  let graph;
  try {
    const { data } = await gql(GRAPH, { id: state.container, depth: state.depth, side: graphSide(state.side) });
    graph = data.lineageGraph;
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
  model.reset(graph, state.container);
  status(`Laying out ${model.nodes.size} nodes…`);
  let layout;
  try {
    layout = await layoutInWorker();
  } catch (e) {
    setBusy('error');
    return showError(e);
  }
  if (seq !== drawSeq) return;
  const laidOut = performance.now();
  await view.draw(model, layout.positions);
  if (seq !== drawSeq) return;
  const drawn = performance.now();
  probe.draws++;
  probe.lastDraw = {
    nodes: model.nodes.size,
    edges: model.edges.size,
    requestMs: Math.round(fetched - started),
    layoutMs: Math.round(laidOut - fetched),
    layoutWorkerMs: layout.ms,
    renderMs: Math.round(drawn - laidOut),
    totalMs: Math.round(drawn - started),
  };
  const centre = model.nodes.get(model.centre);
  if (centre) search.show(centre.displayName || centre.name, centre);
  // Expansions from the URL, replayed in place in their order: the view of before.
  const expansions = state.expansions;
  state.expansions = [];
  for (const x of expansions) {
    if (seq !== drawSeq) return;
    await expand(containerKey(x.id), x.side, { push: false, render: false });
  }
  list.render(model);
  status(describe());
  showCutActions();
  applyView();
  writeUrl(false);
  setBusy('drawn');
  restoreSelection();
}

function restoreSelection() {
  const key = state.sel && model.nodes.has(state.sel) ? state.sel : null;
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
    const { data } = await gql(GRAPH, { id: node.id, depth: 1, side: want === 'u' ? 'UPSTREAM' : want === 'd' ? 'DOWNSTREAM' : null });
    graph = data.lineageGraph;
  } catch (e) {
    setBusy('error');
    return showError(e, () => expand(key, side));
  }
  const added = model.merge(graph, key, want);
  view.add(model, key, want, added.nodes, added.edges);
  view.update(model, key);
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
  panel.show(model.nodes.get(key), model, { focus: focusPanel });
  // The panel took room from the canvas: let it know, and keep the node in sight. Nothing
  // else moves (a second click of a double-click must find its node where it was).
  requestAnimationFrame(() => {
    view.cy?.resize();
    view.reveal(key);
  });
}

function highlight(keys) {
  fieldPath = keys ? { ...(fieldPath ?? {}), keys } : null;
  view.highlight(keys);
  list.highlight(keys);
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
  const listMode = state.view === 'list';
  $('stage').classList.toggle('list-mode', listMode);
  $('graph-text').classList.toggle('visually-hidden', !listMode);
  $('view-toggle').setAttribute('aria-pressed', String(listMode));
  $('view-toggle').textContent = listMode ? 'Graph view' : 'List view';
  if (!listMode) view.cy?.resize();
}

$('view-toggle').addEventListener('click', () => {
  state.view = state.view === 'list' ? 'graph' : 'list';
  applyView();
  writeUrl(false);
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
  navigate({ ...state, container: id, depth, side, sel: same ? state.sel : null, field: same ? state.field : null, expansions: same && depth === state.depth && side === state.side ? state.expansions : [] });
});

for (const id of ['side', 'depth']) {
  $(id).addEventListener('change', () => {
    if (state.container == null) return;
    const depth = clampDepth($('depth').value);
    const side = $('side').value || null;
    if (depth === state.depth && side === state.side) return;
    navigate({ ...state, depth, side, expansions: [] });
  });
}

// ---------------------------------------------------------------- start

syncControls();
applyView();
if (state.container != null) draw();
else {
  setBusy('idle');
  $('search').focus();
}
