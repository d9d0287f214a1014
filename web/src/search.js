// The container search: a combobox (WAI-ARIA 1.2 pattern) whose suggestions come from
// `search(kinds: [CONTAINER])` as you type: a name, `database.schema.name`, `datastore:name` or an
// OpenLineage `namespace/name`, exact matches first, then prefixes, then the rest. Arrow keys move through the suggestions, Enter picks one,
// Escape closes them.
import { gql } from './api.js';
import { SEARCH, SEARCH_FIRST } from './queries.js';

const DEBOUNCE_MS = 150;

export class Search {
  constructor(input, list, { onPick, onError }) {
    this.input = input;
    this.list = list;
    this.onPick = onPick;
    this.onError = onError;
    this.items = [];
    this.active = -1;
    this.timer = 0;
    this.seq = 0;
    this.picked = null;
    input.addEventListener('input', () => {
      this.picked = null;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.suggest(), DEBOUNCE_MS);
    });
    input.addEventListener('keydown', (e) => this.key(e));
    input.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    list.addEventListener('mousedown', (e) => e.preventDefault());
    list.addEventListener('click', (e) => {
      const li = e.target.closest('li[data-index]');
      if (li) this.pick(Number(li.dataset.index));
    });
  }

  /** Shows `text` in the box without searching (the container drawn). */
  show(text, container) {
    this.input.value = text;
    this.picked = container;
  }

  async suggest() {
    const name = this.input.value.trim();
    if (!name) return this.close();
    const seq = ++this.seq;
    try {
      const { data } = await gql(SEARCH, { name });
      if (seq !== this.seq) return;
      this.items = data.search.map((hit) => hit.container).filter(Boolean);
      this.more = data.search.length >= SEARCH_FIRST;
      this.render();
      // Which text the list answers (an earlier, shorter text's list may have shown first).
      this.list.dataset.query = name;
    } catch (e) {
      if (seq === this.seq) this.onError(e);
    }
  }

  render() {
    this.list.replaceChildren();
    this.active = this.items.length ? 0 : -1;
    if (!this.items.length) {
      const li = document.createElement('li');
      li.className = 'empty';
      li.textContent = 'No container matches.';
      this.list.append(li);
    }
    this.items.forEach((c, i) => {
      const li = document.createElement('li');
      li.id = `suggestion-${i}`;
      li.setAttribute('role', 'option');
      li.dataset.index = String(i);
      li.dataset.id = String(c.id);
      const name = document.createElement('strong');
      name.textContent = c.displayName || c.name;
      const where = document.createElement('span');
      where.textContent = ` ${[c.datastore?.name, c.database, c.schema].filter(Boolean).join(' · ')} · ${c.containerType}`;
      li.append(name, where);
      this.list.append(li);
    });
    if (this.more) {
      const li = document.createElement('li');
      li.className = 'more';
      li.textContent = 'Maybe more: type more of the name.';
      this.list.append(li);
    }
    this.list.hidden = false;
    this.input.setAttribute('aria-expanded', 'true');
    this.mark();
  }

  mark() {
    for (const li of this.list.querySelectorAll('[role=option]')) li.setAttribute('aria-selected', String(Number(li.dataset.index) === this.active));
    if (this.active >= 0) this.input.setAttribute('aria-activedescendant', `suggestion-${this.active}`);
    else this.input.removeAttribute('aria-activedescendant');
    this.list.querySelector(`#suggestion-${this.active}`)?.scrollIntoView({ block: 'nearest' });
  }

  close() {
    this.list.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
  }

  key(e) {
    const open = !this.list.hidden && this.items.length > 0;
    if (e.key === 'ArrowDown' && open) {
      this.active = (this.active + 1) % this.items.length;
      this.mark();
      e.preventDefault();
    } else if (e.key === 'ArrowUp' && open) {
      this.active = (this.active - 1 + this.items.length) % this.items.length;
      this.mark();
      e.preventDefault();
    } else if (e.key === 'Enter' && open && this.active >= 0) {
      e.preventDefault();
      this.pick(this.active);
    } else if (e.key === 'Escape' && !this.list.hidden) {
      e.preventDefault();
      this.close();
    }
  }

  pick(index) {
    const c = this.items[index];
    if (!c) return;
    this.close();
    this.show(c.displayName || c.name, c);
    this.onPick(c);
  }
}
