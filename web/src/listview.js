// The graph as text: every drawn node and edge as a list item, in the page's DOM. A canvas is
// invisible to screen readers, to find-in-page and to tests; this list is not. It is visually
// hidden behind the canvas, or shown instead of it in the list view, and its buttons are the
// keyboard's way to select and expand nodes.

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}

import { visible } from './model.js';

function nodeName(n) {
  return n.kind === 'external' ? n.fqn : n.displayName || n.name;
}

function subOf(n) {
  if (n.kind === 'external') return `external asset · ${n.sourceType}`;
  if (n.kind === 'job') return `job${n.namespace ? ` · ${n.namespace}` : ''} · latest run ${n.state ?? 'none'}`;
  if (n.kind === 'group') return `${n.side === 'd' ? 'downstream' : 'upstream'} distance ${n.distance}`;
  return [n.datastore?.name, n.containerType].filter(Boolean).join(' · ');
}

export class ListView {
  constructor(root, handlers) {
    this.root = root;
    this.handlers = handlers;
    this.nodeList = root.querySelector('#node-list');
    this.edgeList = root.querySelector('#edge-list');
    this.nodesHeading = root.querySelector('#nodes-heading');
    this.edgesHeading = root.querySelector('#edges-heading');
    root.addEventListener('click', (e) => {
      const button = e.target.closest('button[data-action]');
      if (!button) return;
      const key = button.closest('li').dataset.node;
      if (button.dataset.action === 'select') this.handlers.select(key, { focusPanel: true });
      else if (button.dataset.action === 'expand') this.handlers.expand(key, button.dataset.side);
      else if (button.dataset.action === 'collapse') this.handlers.collapse(key);
      else if (button.dataset.action === 'open-group') this.handlers.openGroup(key);
    });
  }

  /** Rebuilds both lists from the model (sorted by name, the centre first). */
  render(model) {
    const shown = visible(model);
    const nodes = shown.nodes.sort((a, b) => {
      if (a.key === model.centre) return -1;
      if (b.key === model.centre) return 1;
      return nodeName(a).localeCompare(nodeName(b)) || a.key.localeCompare(b.key);
    });
    const nodeItems = document.createDocumentFragment();
    for (const n of nodes) nodeItems.append(this.nodeItem(model, n));
    this.nodeList.replaceChildren(nodeItems);
    const edges = shown.edges.sort((a, b) => (a.id ?? Infinity) - (b.id ?? Infinity) || a.key.localeCompare(b.key));
    const edgeItems = document.createDocumentFragment();
    for (const e of edges) {
      const s = model.nodes.get(e.source);
      const t = model.nodes.get(e.target);
      edgeItems.append(
        el(
          'li',
          { 'data-edge': e.key, 'data-kind': e.kind ?? 'lineage', 'data-source': e.source, 'data-target': e.target, 'data-label': e.label, 'data-retired': e.retired ? 'true' : 'false', 'data-change': e.change ?? null },
          `${s ? nodeName(s) : model.groups.get(e.source)?.name ?? e.source} → ${t ? nodeName(t) : model.groups.get(e.target)?.name ?? e.target}`,
          e.change && e.change !== 'unchanged' ? el('span', { class: `tag ${e.change}`, text: e.change }) : null,
          el('span', { class: 'tag', text: e.label }),
          e.retired ? el('span', { class: 'tag retired', text: 'retired' }) : null,
        ),
      );
    }
    this.edgeList.replaceChildren(edgeItems);
    this.nodesHeading.textContent = `Nodes (${shown.nodes.length} drawn${model.groups.size ? `, ${model.hidden.size} of them folded into ${model.groups.size} groups` : ''})`;
    this.edgesHeading.textContent = `Edges (${shown.edges.length})`;
  }

  nodeItem(model, n) {
    const sub = subOf(n);
    const ambiguous = n.kind === 'container' && model.ambiguousNames?.has(nodeName(n));
    const f = model.frontier?.get(n.key);
    const li = el(
      'li',
      {
        'data-node': n.key,
        'data-kind': n.kind,
        'data-name': nodeName(n),
        'data-centre': n.key === model.centre ? 'true' : 'false',
        'data-has-upstream': n.up ? 'true' : 'false',
        'data-has-downstream': n.down ? 'true' : 'false',
        'data-highlighted': 'false',
        'data-run-state': n.kind === 'job' ? n.state ?? 'NONE' : null,
        'data-health': n.health ?? null,
        'data-change': n.change ?? null,
        'data-qualified': ambiguous ? [n.database, n.schema, n.name].filter(Boolean).join('.') : null,
        'data-beyond': f ? f.beyond : null,
        'data-cut-reason': f ? f.reason : null,
      },
      el('button', { type: 'button', class: 'link', 'data-action': 'select', text: ambiguous ? [n.database, n.schema, n.name].filter(Boolean).join('.') : nodeName(n) }),
      n.health ? el('span', { class: `state state-${n.health}`, text: n.health }) : null,
      sub ? el('span', { class: 'sub', text: ` ${sub}` }) : null,
      n.key === model.centre ? el('span', { class: 'tag', text: 'centre' }) : null,
      f ? el('span', { class: 'tag', text: `${f.beyond} more beyond (${f.reason.toLowerCase()})` }) : null,
    );
    if (n.kind === 'group') {
      li.append(el('button', { type: 'button', 'data-action': 'open-group', text: 'open on the graph' }));
      const ul = el('ul', { class: 'members' });
      for (const k of n.members) {
        const m = model.nodes.get(k);
        if (m) ul.append(el('li', { 'data-node': k, 'data-kind': m.kind, 'data-name': nodeName(m), 'data-group': n.key, 'data-has-upstream': m.up ? 'true' : 'false', 'data-has-downstream': m.down ? 'true' : 'false', 'data-highlighted': 'false' }, nodeName(m)));
      }
      li.append(ul);
    }
    if (n.up) li.append(el('button', { type: 'button', 'data-action': 'expand', 'data-side': 'u', text: 'expand upstream' }));
    if (n.down) li.append(el('button', { type: 'button', 'data-action': 'expand', 'data-side': 'd', text: 'expand downstream' }));
    if (model.expanded(n.key)) li.append(el('button', { type: 'button', 'data-action': 'collapse', text: 'collapse' }));
    return li;
  }

  /** Marks the items of `keys` highlighted and the others dimmed; null clears. */
  highlight(keys) {
    for (const li of this.nodeList.children) {
      li.dataset.highlighted = keys && keys.has(li.dataset.node) ? 'true' : 'false';
      li.dataset.dimmed = keys && !keys.has(li.dataset.node) ? 'true' : 'false';
    }
  }

  select(key) {
    for (const li of this.nodeList.querySelectorAll('[aria-current]')) li.removeAttribute('aria-current');
    if (key) this.nodeList.querySelector(`li[data-node="${CSS.escape(key)}"]`)?.setAttribute('aria-current', 'true');
  }
}
