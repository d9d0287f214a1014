// The layout worker: receives `{ id, nodes, edges }`, answers `{ id, positions, ms }` (or
// `{ id, error }`). Only layout.js runs here; the page keeps the canvas responsive meanwhile.
import { layout } from './layout.js';

self.onmessage = (event) => {
  const { id, nodes, edges } = event.data;
  const started = performance.now();
  try {
    const positions = layout(nodes, edges);
    self.postMessage({ id, positions, ms: Math.round(performance.now() - started) });
  } catch (e) {
    self.postMessage({ id, error: String(e?.message ?? e) });
  }
};
