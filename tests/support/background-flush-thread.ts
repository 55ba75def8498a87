/**
 * A worker thread for flush-priority.spec.ts, standing where the download engine's worker stands: it builds its
 * flush order on the count of urgent flushes it was started with (shared memory, `workerData.count`), asks for
 * one background flush, and says 'asked' when it asked and 'ran' when the flush ran. It answers 'ping' with
 * 'pong': messages keep their order, so a 'pong' before any 'ran' shows the flush is still held.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FlushPriority } from '../../electron/core/flush-priority.js';

const port = parentPort;
if (!port) throw new Error('background-flush-thread.ts runs only as a worker thread');
const order = new FlushPriority(60_000, (workerData as { count: Int32Array }).count);
port.on('message', () => port.postMessage('pong'));
port.postMessage('asked');
await order.background(async () => {
  port.postMessage('ran');
});
