import { PerformanceObserver, constants } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { RECLAIM_ABOVE_BYTES, RECLAIM_EVERY_BYTES, noteWritten } from './reclaim.js';

describe('reclaim: written download buffers are given back early (issue 10, tally listen memory)', () => {
  it('runs a young-generation collection once buffers written to disk pile up past RECLAIM_ABOVE_BYTES', async () => {
    // What a fast download leaves behind: 64 KiB socket reads, written and dropped, not yet collected.
    let held = 0;
    while (process.memoryUsage().arrayBuffers < RECLAIM_ABOVE_BYTES * 1.5) {
      held += Buffer.allocUnsafeSlow(64 * 1024).length;
      if (held > 8 * RECLAIM_ABOVE_BYTES) break; // a GC ran meanwhile by itself: the pile is there anyway
    }
    // GC entries arrive a little later than the collection itself: wait for the one we asked for.
    const minor = new Promise<void>((resolve) => {
      const observer = new PerformanceObserver((list) => {
        const kinds = list.getEntries().map((entry) => (entry as unknown as { detail: { kind: number } }).detail.kind);
        if (kinds.includes(constants.NODE_PERFORMANCE_GC_MINOR)) {
          observer.disconnect();
          resolve();
        }
      });
      observer.observe({ entryTypes: ['gc'] });
    });
    noteWritten(RECLAIM_EVERY_BYTES);
    await minor;
  });

  it('leaves the global gc alone (the collector lives in its own context)', () => {
    noteWritten(RECLAIM_EVERY_BYTES);
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});
