import { PerformanceObserver, constants } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { RECLAIM_EVERY_BYTES, noteWritten } from './reclaim.js';

describe('reclaim: written download buffers are given back early (issue 10, tally listen memory)', () => {
  it('runs a young-generation collection once RECLAIM_EVERY_BYTES have been written', async () => {
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
