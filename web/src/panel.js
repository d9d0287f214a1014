// The side panel of a node: for a container, its datastore and attributes, its fields with their
// column lineage (and the derived flag), its downstream impact, its metadata with the effective
// value and who asserted it, and its incoming edges with their evidence; for an external asset,
// its edges. Requests: the panel (one), the metadata (one, as it needs REPORTER), and the field
// edges (one per 40 fields with lineage). A refusal in one section is said there; the rest shows.
import { ApiError, errorsAt, gql } from './api.js';
import { qualifiedName } from './graph.js';
import { breakable } from './home.js';
import { FIELD_EDGES_PER_REQUEST, IMPACT_LIMIT, JOB_PANEL, METADATA, PANEL, PANEL_EDGES, fieldEdges } from './queries.js';

const RANK = { REPORTER: 1, VIEWER: 2, EDITOR: 3 };
const LIST_SHOWN = 200;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    // Long names may wrap after a / . _ and nowhere else inside a word.
    if (k === 'text') node.append(breakable(v));
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}

function section(name, title) {
  const s = el('section', { 'data-section': name, 'aria-labelledby': `panel-${name}` });
  s.append(el('h3', { id: `panel-${name}`, text: title }));
  const body = el('div', { class: 'section-body' }, el('p', { class: 'loading', text: 'Loading…' }));
  s.append(body);
  return { section: s, body };
}

function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  const sec = Math.round(ms / 1000);
  if (sec < 120) return `${sec} s`;
  const min = Math.floor(sec / 60);
  return min < 120 ? `${min} min ${sec % 60} s` : `${Math.floor(min / 60)} h ${min % 60} min`;
}

function time(t) {
  return t ? t.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '';
}

function message(e) {
  if (e instanceof ApiError) {
    const what = {
      unauthenticated: 'Not signed in (401)',
      forbidden: 'Not allowed (403)',
      unavailable: 'The store is unavailable or too slow (503); try again',
      not_found: 'Not found',
      network: 'The server cannot be reached',
    }[e.kind];
    return what ? `${what}: ${e.message}` : e.message;
  }
  return String(e?.message ?? e);
}

function refusal(errors) {
  const e = errors[0];
  if (!e) return null;
  const code = e.extensions?.code;
  if (code === 'FORBIDDEN') return `Not allowed (403): ${e.message}`;
  if (code === 'UNAVAILABLE') return `The store is unavailable or too slow (503): ${e.message}`;
  return `${code ?? 'Error'}: ${e.message}`;
}

export class Panel {
  constructor(root, handlers) {
    this.root = root;
    this.handlers = handlers;
    this.seq = 0;
    this.key = null;
    root.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        this.handlers.close();
      }
    });
    root.addEventListener('click', (e) => {
      const b = e.target.closest('button[data-action]');
      if (!b) return;
      const a = b.dataset.action;
      if (a === 'close') this.handlers.close();
      else if (a === 'expand') this.handlers.expand(this.key, b.dataset.side);
      else if (a === 'collapse') this.handlers.collapse(this.key);
      else if (a === 'recentre') this.handlers.recentre(this.key);
      else if (a === 'field') this.handlers.field(Number(b.dataset.fieldId));
      else if (a === 'clear-field') this.handlers.field(null);
      else if (a === 'node') this.handlers.select(b.dataset.node);
      else if (a === 'retired') this.toggleRetired(b);
      else if (a === 'more') this.showAll(b);
      else if (a === 'open-group') this.handlers.openGroup(this.key);
      else if (a === 'explain-from') this.handlers.explainFrom(this.key);
      else if (a === 'explain-to') this.handlers.explain(this.key);
    });
  }

  close() {
    this.seq++;
    this.key = null;
    this.root.hidden = true;
    this.root.replaceChildren();
  }

  header(node, model) {
    const title = node.kind === 'external' ? node.fqn : node.displayName || node.name;
    const head = el(
      'header',
      { class: 'panel-head' },
      el('h2', { id: 'panel-title', tabindex: '-1', text: title }),
      el('button', { type: 'button', class: 'close', 'data-action': 'close', 'aria-label': 'Close details', text: '×' }),
    );
    const qualified = qualifiedName(node);
    const full = qualified && qualified !== title ? el('p', { class: 'qualified', 'data-qualified': qualified, text: qualified }) : null;
    const actions = el('div', { class: 'actions' });
    if (node.up) actions.append(el('button', { type: 'button', 'data-action': 'expand', 'data-side': 'u', text: 'Expand upstream' }));
    if (node.down) actions.append(el('button', { type: 'button', 'data-action': 'expand', 'data-side': 'd', text: 'Expand downstream' }));
    if (model.expanded(node.key)) actions.append(el('button', { type: 'button', 'data-action': 'collapse', text: 'Collapse' }));
    if ((node.kind === 'container' || node.kind === 'job') && node.key !== model.centre) actions.append(el('button', { type: 'button', 'data-action': 'recentre', text: 'Centre here' }));
    if (node.kind === 'container') {
      const from = model.explainFrom ? model.nodes.get(model.explainFrom) : null;
      if (from && from.key !== node.key) actions.append(el('button', { type: 'button', 'data-action': 'explain-to', class: 'primary', text: `How does ${from.name} feed this?` }));
      actions.append(el('button', { type: 'button', 'data-action': 'explain-from', 'aria-pressed': String(model.explainFrom === node.key), text: model.explainFrom === node.key ? 'Explaining from here: select another node' : 'Explain from here' }));
    }
    if (node.kind === 'group') actions.append(el('button', { type: 'button', 'data-action': 'open-group', class: 'primary', text: `Open the ${node.members.length} tables on the graph` }));
    return [head, full, actions].filter(Boolean);
  }

  /** Opens the panel on `node`; `focus` moves the keyboard focus into it. */
  async show(node, model, { focus = false } = {}) {
    const seq = ++this.seq;
    this.key = node.key;
    this.root.hidden = false;
    this.root.dataset.node = node.key;
    this.root.replaceChildren(...this.header(node, model));
    if (focus) this.root.querySelector('#panel-title').focus();
    if (node.kind === 'external') return this.showExternal(node, model);
    if (node.kind === 'group') return this.showGroup(node, model);
    if (node.kind === 'job') return this.showJob(node, seq);
    const parts = {
      attributes: section('attributes', 'Datastore and attributes'),
      health: section('health', 'Health, producers and consumers'),
      columns: section('columns', 'Fields and column lineage'),
      impact: section('impact', 'Downstream impact'),
      metadata: section('metadata', 'Metadata'),
      evidence: section('evidence', 'Incoming edges and evidence'),
    };
    for (const p of Object.values(parts)) this.root.append(p.section);
    const panel = gql(PANEL, { id: node.id });
    const metadata = gql(METADATA, { id: node.id });
    // Read below unless the panel moved on first; a refusal must not go unhandled then.
    metadata.catch(() => {});
    let answer;
    try {
      answer = await panel;
    } catch (e) {
      if (seq !== this.seq) return;
      for (const p of Object.values(parts)) p.body.replaceChildren(el('p', { class: 'error', text: message(e) }));
      return;
    }
    if (seq !== this.seq) return;
    const { data, errors } = answer;
    this.renderAttributes(parts.attributes.body, data.container);
    this.renderHealth(parts.health.body, data.container, errorsAt(errors, 'container'));
    this.renderImpact(parts.impact.body, data.impact, errorsAt(errors, 'impact'));
    this.renderEvidence(parts.evidence.body, node, data.edges, data.me, data.container);
    this.renderMetadata(parts.metadata.body, metadata, seq, data.containerFields?.items ?? []);
    await this.renderColumns(parts.columns.body, node, data.containerFields, seq);
    this.handlers.loaded?.(node.key);
  }

  /** A folded layer: its tables, each a link that selects it once the group is opened. */
  showGroup(node, model) {
    const s = section('members', 'Tables in this group');
    const parent = model.nodes.get(node.parent);
    const ul = el('ul', { class: 'plain', 'data-members': node.members.length });
    node.members.forEach((k, i) => {
      const n = model.nodes.get(k);
      ul.append(el('li', { 'data-node': k, hidden: i >= LIST_SHOWN }, n?.displayName || n?.name || k, n?.datastore ? el('span', { class: 'sub', text: ` ${n.datastore.name}` }) : null));
    });
    s.body.replaceChildren(
      el('p', { text: `${node.members.length} tables ${node.side === 'd' ? 'fed by' : 'feeding'} ${parent?.name ?? node.parent}, at distance ${node.distance} ${node.side === 'd' ? 'downstream' : 'upstream'}. Its layer is too wide to draw one by one, so the tables are folded by the node they hang from.` }),
      ul,
    );
    if (node.members.length > LIST_SHOWN) s.body.append(el('button', { type: 'button', 'data-action': 'more', text: `Show all ${node.members.length}` }));
    this.root.append(s.section);
    this.handlers.loaded?.(node.key);
  }

  /** A job: what it is, its run history (state, start, duration, error), inputs and outputs. */
  async showJob(node, seq) {
    const about = section('job', 'Job');
    const runs = section('runs', 'Run history');
    const io = section('io', 'Inputs and outputs');
    this.root.append(about.section, runs.section, io.section);
    let job;
    try {
      job = (await gql(JOB_PANEL, { id: node.id })).data.job;
    } catch (e) {
      if (seq !== this.seq) return;
      for (const p of [about, runs, io]) p.body.replaceChildren(el('p', { class: 'error', text: message(e) }));
      return;
    }
    if (seq !== this.seq) return;
    if (!job) return about.body.replaceChildren(el('p', { class: 'error', text: 'This job no longer exists.' }));
    if (job.restricted) {
      for (const p of [about, runs, io]) p.body.replaceChildren(el('p', { class: 'notice', text: 'Restricted: this job reads or writes a datastore you have no VIEWER permission on, so only its id is shown.' }));
      return this.handlers.loaded?.(node.key);
    }
    const rows = [
      ['Namespace', job.namespace],
      ['Name', job.name],
      ['Type', [job.processingType, job.jobType, job.integration].filter(Boolean).join(', ')],
      ['Description', job.description],
      ['Owners', job.owners?.join(', ')],
      ['Parent', job.parent ? `${job.parent.namespace}/${job.parent.name}` : null],
      ['Source code', job.sourceCodeLocation?.url ?? null],
      ['First seen', time(job.firstSeenAt)],
      ['Last seen', time(job.lastSeenAt)],
    ];
    const dl = el('dl');
    for (const [k, v] of rows) if (v) dl.append(el('dt', { text: k }), el('dd', { text: String(v) }));
    // replaceChildren would write a null out as the text "null": only what there is.
    about.body.replaceChildren(...[dl, job.sql ? el('pre', { class: 'sql', text: job.sql }) : null].filter(Boolean));
    const table = el('table', { class: 'grid runs' });
    table.append(el('thead', {}, el('tr', {}, ...['State', 'Started', 'Duration', 'Error'].map((h) => el('th', { scope: 'col', text: h })))));
    const tbody = el('tbody');
    for (const r of job.runs.items) {
      tbody.append(
        el(
          'tr',
          { 'data-run-id': r.runId, 'data-state': r.state },
          el('td', {}, el('span', { class: `state state-${r.state}`, text: r.state ?? '?' })),
          el('td', { text: time(r.startedAt) }),
          el('td', { text: r.durationMs != null ? duration(r.durationMs) : '' }),
          el('td', { class: r.errorMessage ? 'error' : '', text: r.errorMessage ?? '' }),
        ),
      );
    }
    table.append(tbody);
    runs.body.replaceChildren(el('p', { class: 'count', text: `${job.runs.total} run${job.runs.total === 1 ? '' : 's'}${job.runs.total > job.runs.items.length ? `, the latest ${job.runs.items.length} shown` : ''}.` }), table);
    const list = (title, items, side) => {
      const ul = el('ul', { class: 'plain', 'data-io': side });
      for (const d of items) {
        const key = d.container ? `c${d.container.id}` : d.nodeId;
        ul.append(el('li', { 'data-node': key }, el('button', { type: 'button', class: 'link', 'data-action': 'node', 'data-node': key, text: d.container?.name ?? `${d.namespace}/${d.name}` }), el('span', { class: 'sub', text: ` ${side === 'in' ? 'read' : 'written'} ${time(d.at)}` })));
      }
      return [el('h4', { text: `${title}: ${items.length}` }), ul];
    };
    io.body.replaceChildren(...list('Inputs', job.inputs, 'in'), ...list('Outputs', job.outputs, 'out'));
    this.handlers.loaded?.(node.key);
  }

  renderHealth(body, c, errors) {
    if (!c) return body.replaceChildren(el('p', { class: 'error', text: refusal(errors) ?? 'No answer.' }));
    const h = c.health;
    const parts = [];
    if (h) {
      parts.push(
        el('p', { 'data-health': h.state }, el('span', { class: `state state-${h.state}`, text: h.state }), h.lastWrittenAt ? ` last written completely ${time(h.lastWrittenAt)}` : ' never written completely by a job'),
      );
      if (h.lastRun) parts.push(el('p', { class: 'sub', text: `Latest run of a job writing it: ${h.lastRun.job?.name ?? '?'} ${h.lastRun.state ?? ''} ${time(h.lastRun.endedAt)}` }));
      if (h.causes.length) {
        const ul = el('ul', { class: 'plain', 'data-causes': h.causes.length });
        for (const r of h.causes) {
          ul.append(
            el(
              'li',
              { 'data-run-id': r.runId },
              el('span', { class: `state state-${r.state}`, text: r.state }),
              r.job ? el('a', { href: `/ui?job=${r.job.id}&depth=2&sel=j${r.job.id}`, text: `${r.job.namespace}/${r.job.name}` }) : 'a run',
              ` ${time(r.endedAt)}`,
              r.errorMessage ? el('div', { class: 'error', text: r.errorMessage }) : null,
            ),
          );
        }
        parts.push(el('h4', { text: 'Caused by' }), ul);
      }
    }
    const jobs = (title, list, side) => {
      const ul = el('ul', { class: 'plain', 'data-jobs': side });
      for (const j of list) {
        ul.append(
          el(
            'li',
            { 'data-job-id': j.id },
            el('span', { class: `state state-${j.latestRun?.state ?? 'NONE'}`, text: j.latestRun?.state ?? 'no run' }),
            el('a', { href: `/ui?job=${j.id}&depth=2&sel=j${j.id}`, text: j.restricted ? `job ${j.id} (restricted)` : `${j.namespace}/${j.name}` }),
          ),
        );
      }
      return [el('h4', { text: `${title}: ${list.length}` }), list.length ? ul : el('p', { class: 'sub', text: 'none recorded' })];
    };
    parts.push(...jobs('Producers (jobs writing it)', c.producers ?? [], 'producers'), ...jobs('Consumers (jobs reading it)', c.consumers ?? [], 'consumers'));
    body.replaceChildren(...parts);
  }

  /** The answer of "how does A feed B": each path, each hop with its evidence. */
  showExplain(result) {
    let box = this.root.querySelector('[data-section=explain]');
    if (!box) {
      const s = section('explain', 'How it feeds');
      this.root.querySelector('.actions')?.after(s.section);
      box = s.section;
    }
    const body = box.querySelector('.section-body');
    if (result.error) return body.replaceChildren(el('p', { class: 'error', text: result.error }));
    const { from, to, answer, names } = result;
    if (!answer.paths.length) {
      return body.replaceChildren(el('p', { 'data-paths': 0, text: answer.reason === 'ENDS_HIDDEN' ? `You have no permission on ${from} or ${to}.` : `${from} does not feed ${to} within 20 hops.` }));
    }
    const parts = [el('p', { 'data-paths': answer.paths.length, text: `${answer.paths.length} path${answer.paths.length === 1 ? '' : 's'} from ${from} to ${to}${answer.isPartial ? ' (more exist)' : ''}, highlighted on the graph:` })];
    answer.paths.forEach((p, i) => {
      const ol = el('ol');
      for (const h of p.hops) {
        const ev = h.evidence.map((e) => [e.provider, e.evidenceType, e.jobName ? `job ${e.jobName}` : null, e.runId ? `run ${e.runId}` : null, e.observedAt ? `observed ${time(e.observedAt)}` : null].filter(Boolean).join(', '));
        ol.append(
          el(
            'li',
            { 'data-edge-id': h.edge.id },
            `${h.edge.sourceContainer?.name ?? names(h.edge.sourceContainerId)} → ${h.edge.targetContainer?.name ?? names(h.edge.targetContainerId)} `,
            el('span', { class: 'tag', text: h.operation || h.sourceType }),
            el('div', { class: 'sub', text: `first seen ${time(h.firstObserved)}${h.lastObserved ? `, last asserted ${time(h.lastObserved)}` : ''}` }),
            ...(ev.length ? ev.map((t) => el('div', { class: 'sub', text: `evidence: ${t}` })) : [el('div', { class: 'sub', text: 'no evidence recorded (a manual or catalog edge)' })]),
          ),
        );
      }
      parts.push(el('div', { class: 'path', 'data-path': i }, el('strong', { text: `Path ${i + 1}: ${p.length} hop${p.length === 1 ? '' : 's'}` }), ol));
    });
    body.replaceChildren(...parts);
  }

  /** What changed since the diff's `from`: each appeared and retired edge with its evidence. */
  showDiff(diff, model) {
    const s = section('diff', `Changed since ${time(diff.from)}`);
    const list = (title, items, kind) => {
      const ul = el('ul', { class: 'edges', 'data-diff': kind });
      for (const c of items) {
        const e = c.edge;
        const name = (id, ext) => model.nodes.get(`c${id}`)?.name ?? ext ?? (id != null ? `container ${id}` : '?');
        ul.append(
          el(
            'li',
            { 'data-edge-id': e.id },
            el('div', { class: 'edge-title' }, `${e.sourceContainer?.name ?? name(e.sourceContainerId, e.sourceExternalFqn)} → ${e.targetContainer?.name ?? name(e.targetContainerId, e.targetExternalFqn)} `, el('span', { class: 'tag', text: e.operation || e.sourceType })),
            el('div', { class: 'sub', text: `${kind} ${time(c.at)}` }),
            ...e.evidence.map((ev) => el('div', { class: 'sub', text: `evidence: ${[ev.provider, ev.authorship, ev.jobName ? `job ${ev.jobName}` : null, ev.runId ? `run ${ev.runId}` : null].filter(Boolean).join(', ')}` })),
          ),
        );
      }
      return [el('h4', { text: `${title}: ${items.length}` }), items.length ? ul : el('p', { class: 'sub', text: 'none' })];
    };
    s.body.replaceChildren(
      el('p', { class: 'sub', text: `Appeared in green, retired dashed in red, unchanged dimmed; ${diff.appearedNodes.length} node${diff.appearedNodes.length === 1 ? '' : 's'} appeared, ${diff.retiredNodes.length} retired.` }),
      ...list('Appeared edges', diff.appearedEdges, 'appeared'),
      ...list('Retired edges', diff.retiredEdges, 'retired'),
    );
    this.seq++;
    this.key = null;
    this.root.hidden = false;
    this.root.dataset.node = 'diff';
    this.root.replaceChildren(
      el('header', { class: 'panel-head' }, el('h2', { id: 'panel-title', tabindex: '-1', text: 'What changed' }), el('button', { type: 'button', class: 'close', 'data-action': 'close', 'aria-label': 'Close details', text: '×' })),
      s.section,
    );
  }

  showExternal(node, model) {
    const s = section('edges', 'Edges');
    const list = el('ul', { class: 'plain' });
    for (const e of model.edges.values()) {
      if (e.source !== node.key && e.target !== node.key) continue;
      const other = model.nodes.get(e.source === node.key ? e.target : e.source);
      list.append(el('li', {}, `${e.source === node.key ? 'to' : 'from'} `, el('button', { type: 'button', class: 'link', 'data-action': 'node', 'data-node': other?.key, text: other?.name ?? '?' }), el('span', { class: 'tag', text: e.label })));
    }
    s.body.replaceChildren(
      el('p', { text: `An asset outside the catalog, known from ${node.sourceType} lineage. It has no fields or metadata in Tributary.` }),
      el('dl', {}, el('dt', { text: 'Name' }), el('dd', { text: node.fqn }), el('dt', { text: 'Source type' }), el('dd', { text: node.sourceType })),
      list,
    );
    this.root.append(s.section);
    this.handlers.loaded?.(node.key);
  }

  renderAttributes(body, c) {
    if (!c) return body.replaceChildren(el('p', { class: 'error', text: 'This container no longer exists.' }));
    const rows = [
      ['Datastore', c.datastore ? `${c.datastore.name} (${[c.datastore.type, c.datastore.storeType].filter(Boolean).join(', ')})` : c.datastoreId],
      ['Name', [c.database, c.schema, c.name].filter(Boolean).join('.')],
      ['Id', c.id],
      ['Type', [c.containerType, c.tableType].filter(Boolean).join(', ')],
      ['Display name', c.displayName],
      ['Purpose', c.purpose],
      ['Fields', `${c.fieldCount} (${c.linkedFieldCount} with column lineage)`],
      ['Active anomalies', c.activeAnomalyCount],
    ];
    const dl = el('dl');
    for (const [k, v] of rows) if (v != null && v !== '') dl.append(el('dt', { text: k }), el('dd', { text: String(v) }));
    body.replaceChildren(dl);
  }

  renderImpact(body, impact, errors) {
    if (!impact) return body.replaceChildren(el('p', { class: 'error', text: refusal(errors) ?? 'No answer.' }));
    const n = impact.containers.length;
    const count = el('p', { class: 'count', 'data-impact-count': n, 'data-partial': impact.isPartial ? 'true' : 'false' });
    count.textContent = n === 0 ? 'Nothing downstream.' : `${impact.isPartial ? 'At least ' : ''}${n} container${n === 1 ? '' : 's'} downstream${impact.isPartial ? ` (the answer was cut at depth 20 or at ${IMPACT_LIMIT} containers)` : ''}.`;
    const list = el('ol', { class: 'impact' });
    impact.containers.forEach((x, i) => {
      const li = el(
        'li',
        { 'data-container-id': x.container?.id, 'data-distance': x.distance, hidden: i >= LIST_SHOWN },
        el('button', { type: 'button', class: 'link', 'data-action': 'node', 'data-node': x.container ? `c${x.container.id}` : null, text: x.container?.name ?? '(deleted)' }),
        el('span', { class: 'sub', text: ` distance ${x.distance}${x.via?.operation || x.via?.sourceType ? `, via ${x.via.operation || x.via.sourceType}` : ''}` }),
      );
      list.append(li);
    });
    body.replaceChildren(count, list);
    if (n > LIST_SHOWN) body.append(el('button', { type: 'button', 'data-action': 'more', text: `Show all ${n}` }));
    // Assets outside the catalog (files, datasets no datastore lists) the lineage reaches.
    const externals = impact.externals ?? [];
    if (externals.length === 0) return;
    const heading = el('p', { class: 'count', 'data-impact-externals': externals.length });
    heading.textContent = `${externals.length} external asset${externals.length === 1 ? '' : 's'} outside the catalog:`;
    const ext = el('ol', { class: 'impact impact-externals' });
    for (const x of externals) {
      ext.append(
        el(
          'li',
          { 'data-external-id': x.external.id, 'data-distance': x.distance },
          el('button', { type: 'button', class: 'link', 'data-action': 'node', 'data-node': x.external.id, text: x.external.fqn }),
          el('span', { class: 'sub', text: ` distance ${x.distance}${x.via?.operation || x.via?.sourceType ? `, via ${x.via.operation || x.via.sourceType}` : ''}` }),
        ),
      );
    }
    body.append(heading, ext);
  }

  showAll(button) {
    for (const li of button.parentElement.querySelectorAll('li[hidden]')) li.hidden = false;
    button.remove();
  }

  async renderMetadata(body, request, seq, fields) {
    let answer;
    try {
      answer = await request;
    } catch (e) {
      if (seq !== this.seq) return;
      return body.replaceChildren(el('p', { class: e.kind === 'forbidden' ? 'notice' : 'error', 'data-refused': e.kind, text: e.kind === 'forbidden' ? `Hidden: ${message(e)}` : message(e) }));
    }
    if (seq !== this.seq) return;
    const list = answer.data.metadataAssertions;
    if (!list.length) return body.replaceChildren(el('p', { text: 'No metadata asserted.' }));
    const fieldName = new Map(fields.map((f) => [f.id, f.name]));
    const ul = el('ul', { class: 'assertions' });
    for (const m of list) {
      const value = typeof m.value === 'string' ? m.value : JSON.stringify(m.value);
      const of = m.fieldId != null ? `${fieldName.get(m.fieldId) ?? `field ${m.fieldId}`}: ` : '';
      ul.append(
        el(
          'li',
          { 'data-effective': m.effective ? 'true' : 'false', 'data-attribute': m.attribute, 'data-source': m.source, 'data-provider': m.provider },
          el('div', {}, el('strong', { text: `${of}${m.attribute}` }), m.effective ? el('span', { class: 'tag effective', text: 'effective' }) : null),
          el('div', { class: m.effective ? 'value' : 'value superseded', text: value }),
          el('div', { class: 'sub', text: `asserted by ${m.provider} (${m.source}), ${time(m.assertedAt)}` }),
        ),
      );
    }
    body.replaceChildren(el('p', { class: 'sub', text: 'A user’s own value wins; otherwise the most recently asserted. The value shown for each attribute is marked effective.' }), ul);
  }

  renderEvidence(body, node, edges, me, container) {
    if (!edges) return body.replaceChildren(el('p', { class: 'error', text: 'No answer.' }));
    const perms = new Map((me?.permissions ?? []).map((p) => [p.datastoreId, RANK[p.permission] ?? 0]));
    const canView = (dsId) => me?.unrestrictedAdmin || dsId == null || (perms.get(dsId) ?? 0) >= RANK.VIEWER;
    const incoming = edges.items.filter((e) => e.targetContainerId === node.id && e.sourceFieldId == null);
    this.retiredEdges = edges.items.filter((e) => e.retiredAt && e.sourceFieldId == null && e.targetFieldId == null);
    const live = incoming.filter((e) => !e.retiredAt);
    const retired = incoming.filter((e) => e.retiredAt);
    const parts = [];
    parts.push(el('p', { class: 'count', text: `${live.length} live incoming edge${live.length === 1 ? '' : 's'}, ${retired.length} retired${edges.total > edges.items.length ? ` (first ${PANEL_EDGES} of ${edges.total} edges read)` : ''}.` }));
    if (this.retiredEdges.length) {
      parts.push(el('button', { type: 'button', 'data-action': 'retired', 'aria-pressed': 'false', text: `Draw this node’s ${this.retiredEdges.length} retired edge${this.retiredEdges.length === 1 ? '' : 's'}` }));
    }
    const list = el('ul', { class: 'edges' });
    for (const e of [...live, ...retired]) {
      const from = e.sourceContainer?.name ?? e.sourceNodeId ?? `container ${e.sourceContainerId}`;
      const visible = canView(e.sourceContainer?.datastoreId) && canView(container?.datastore?.id ?? e.targetContainer?.datastoreId);
      const li = el('li', { 'data-edge-id': e.id, 'data-retired': e.retiredAt ? 'true' : 'false' });
      li.append(
        el('div', { class: 'edge-title' }, el('strong', { text: from }), ` → ${node.name} `, el('span', { class: 'tag', text: e.operation || e.sourceType }), e.retiredAt ? el('span', { class: 'tag retired', text: `retired ${time(e.retiredAt)}` }) : null),
        el('div', { class: 'sub', text: [`${e.sourceType}`, e.description, `created ${time(e.created)}`, e.lastAssertedAt ? `last asserted ${time(e.lastAssertedAt)}` : null].filter(Boolean).join(' · ') }),
      );
      if (!e.evidence.length) li.append(el('div', { class: 'sub', text: 'No evidence recorded (a manual or catalog edge).' }));
      for (const ev of e.evidence) li.append(this.evidence(ev, visible));
      list.append(li);
    }
    if (!incoming.length) parts.push(el('p', { text: 'No incoming edges: this is a source.' }));
    body.replaceChildren(...parts, list);
  }

  evidence(ev, visible) {
    const box = el('div', { class: 'evidence', 'data-visible': visible && ev.details != null ? 'true' : 'false' });
    const facts = [
      ['Provider', ev.provider],
      ['Kind', `${ev.evidenceType} (${ev.authorship})`],
      ['Observed', time(ev.observedAt)],
      ['Operations', ev.firstObservedOperationId != null ? `${ev.firstObservedOperationId} … ${ev.lastObservedOperationId ?? ''}` : null],
      ['Retired', time(ev.retiredAt)],
    ];
    const d = ev.details;
    if (d) {
      if (d.job) facts.push(['Job', `${d.job.namespace}/${d.job.name}`]);
      if (d.runId) facts.push(['Run', `${d.runId}${d.runState ? ` (${d.runState})` : ''}`]);
      if (d.submittedBy) facts.push(['Submitted by', d.submittedBy]);
      if (d.operation) facts.push(['SQL operation', d.operation]);
    }
    const dl = el('dl', { class: 'compact' });
    for (const [k, v] of facts) if (v) dl.append(el('dt', { text: k }), el('dd', { text: String(v) }));
    box.append(dl);
    if (d?.sql) box.append(el('pre', { class: 'sql', text: typeof d.sql === 'string' ? d.sql : JSON.stringify(d.sql, null, 2) }));
    if (d) {
      box.append(el('details', {}, el('summary', { text: 'All details' }), el('pre', { text: JSON.stringify(d, null, 2) })));
    } else if (!visible) {
      box.append(el('p', { class: 'notice', 'data-hidden-evidence': 'true', text: 'Details hidden (403): they need the VIEWER permission on the datastores of both ends.' }));
    }
    return box;
  }

  toggleRetired(button) {
    const on = button.getAttribute('aria-pressed') !== 'true';
    button.setAttribute('aria-pressed', String(on));
    this.handlers.retired(on ? this.retiredEdges : null);
  }

  async renderColumns(body, node, fieldsPage, seq) {
    const fields = fieldsPage?.items ?? [];
    if (!fields.length) return body.replaceChildren(el('p', { text: 'No fields recorded.' }));
    const withLineage = fields.filter((f) => f.hasLineage).map((f) => f.id);
    const edgesByField = new Map();
    let failure = null;
    for (let i = 0; i < withLineage.length; i += FIELD_EDGES_PER_REQUEST) {
      const ids = withLineage.slice(i, i + FIELD_EDGES_PER_REQUEST);
      const vars = Object.fromEntries(ids.map((id, j) => [`f${j}`, id]));
      try {
        const { data } = await gql(fieldEdges(ids), vars);
        ids.forEach((id, j) => edgesByField.set(id, data[`f${j}`]));
      } catch (e) {
        failure = message(e);
        break;
      }
      if (seq !== this.seq) return;
    }
    if (seq !== this.seq) return;
    const table = el('table', { class: 'grid columns' });
    table.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Field' }), el('th', { scope: 'col', text: 'Column lineage' }))));
    const tbody = el('tbody');
    for (const f of fields) {
      const page = edgesByField.get(f.id);
      const items = page?.items ?? [];
      const from = items.filter((e) => e.targetFieldId === f.id);
      const to = items.filter((e) => e.sourceFieldId === f.id);
      const ends = (list, side) => {
        const ul = el('ul', { class: 'plain', 'data-side': side });
        for (const e of list) {
          const other = side === 'from' ? e.sourceField : e.targetField;
          const name = other ? `${other.container?.name ?? `container ${other.containerId}`}.${other.name}` : '?';
          ul.append(
            el(
              'li',
              { 'data-edge-id': e.id, 'data-other-field': other?.id, 'data-derived': e.derived ? 'true' : 'false' },
              side === 'from' ? '← ' : '→ ',
              name,
              el('span', { class: e.derived ? 'tag derived' : 'tag', text: e.derived ? 'derived' : 'copy' }),
              e.operation || e.sourceType ? el('span', { class: 'sub', text: ` ${e.operation || e.sourceType}` }) : null,
            ),
          );
        }
        return ul;
      };
      const cell = el('td');
      if (from.length) cell.append(ends(from, 'from'));
      if (to.length) cell.append(ends(to, 'to'));
      if (page && page.total > page.items.length) cell.append(el('p', { class: 'sub', text: `(${page.items.length} of ${page.total} edges shown)` }));
      if (!from.length && !to.length) cell.append(el('span', { class: 'sub', text: 'none' }));
      tbody.append(
        el(
          'tr',
          { 'data-field-id': f.id, 'data-field-name': f.name },
          el('th', { scope: 'row' }, el('button', { type: 'button', class: 'link', 'data-action': 'field', 'data-field-id': f.id, title: 'Draw this field’s column lineage', text: f.name }), el('div', { class: 'sub', text: f.type ?? '' })),
          cell,
        ),
      );
    }
    table.append(tbody);
    const note = el('p', { class: 'sub', text: `${fields.length}${fieldsPage.total > fields.length ? ` of ${fieldsPage.total}` : ''} fields, ${withLineage.length} with column lineage. “derived”: the value passed through a transformation; “copy”: a plain copy. Pick a field to draw its path.` });
    body.replaceChildren(note, ...(failure ? [el('p', { class: 'error', text: `Column lineage: ${failure}` })] : []), el('div', { id: 'field-path' }), table);
  }

  /** The field-path box: what `fieldConnections` and `piiFlow` said about one field. */
  showFieldPath(path) {
    const box = this.root.querySelector('#field-path');
    if (!box) return;
    if (!path) return box.replaceChildren();
    if (path.error) return box.replaceChildren(el('p', { class: 'error', text: path.error }));
    const { field, containers, connections, down, up } = path;
    const flow = (title, flow, name) => {
      const ul = el('ul', { class: 'plain', 'data-flow': name, 'data-partial': flow.isPartial ? 'true' : 'false' });
      for (const x of flow.fields) {
        ul.append(el('li', { 'data-field-id': x.field?.id, 'data-distance': x.distance, 'data-derived': x.derived ? 'true' : 'false' }, `${x.field?.container?.name ?? '?'}.${x.field?.name ?? '?'}`, el('span', { class: 'sub', text: ` distance ${x.distance}` }), x.derived ? el('span', { class: 'tag derived', text: 'derived' }) : null));
      }
      return [el('h4', { text: `${title}: ${flow.fields.length}${flow.isPartial ? '+ (cut)' : ''}` }), flow.fields.length ? ul : el('p', { class: 'sub', text: 'none' })];
    };
    box.replaceChildren(
      el(
        'div',
        { class: 'field-path', 'data-field-id': field.id },
        el('p', {}, el('strong', { text: `${field.container?.name}.${field.name}` }), ` passes through ${containers.length} container${containers.length === 1 ? '' : 's'} (${connections} connected field${connections === 1 ? '' : 's'}), highlighted on the graph. `, el('button', { type: 'button', 'data-action': 'clear-field', text: 'Clear' })),
        ...flow('PII flow downstream (where the value goes)', down, 'down'),
        ...flow('Upstream (where it comes from)', up, 'up'),
      ),
    );
  }
}
