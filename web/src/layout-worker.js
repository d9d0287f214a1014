// The layout worker: receives `{ id, nodes, edges, view }`, answers `{ id, positions, direction,
// ms }` (or `{ id, error }`). Only layout.js runs here; the page keeps the canvas responsive
// meanwhile.
import { layout } from './layout.js';

self.onmessage = (event) => {
  const { id, nodes, edges, view } = event.data;
  const started = performance.now();
  try {
    const { positions, direction } = layout(nodes, edges, view);
    self.postMessage({ id, positions, direction, ms: Math.round(performance.now() - started) });
  } catch (e) {
    self.postMessage({ id, error: String(e?.message ?? e) });
  }
};
