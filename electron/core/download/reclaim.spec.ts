import { PerformanceObserver, constants } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import {
  MAJOR_EVERY,
  MAJOR_GROWTH_BYTES,
  MajorCollectionRule,
  RECLAIM_ABOVE_BYTES,
  RECLAIM_EVERY_BYTES,
  noteWritten,
} from './reclaim.js';

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

describe('reclaim: full collections only while what young ones leave keeps growing (issue 22)', () => {
  const MiB = 1024 * 1024;

  it('starts none for a fast download, whose reads die young', () => {
    // After each young collection of a 1 GiB download at full speed: what is in flight, 0.3-1.0 MB, never more.
    const rule = new MajorCollectionRule();
    const started = Array.from({ length: 10 * MAJOR_EVERY }, (_, i) => rule.afterYoung((0.3 + (i % 8) / 10) * MiB));
    expect(started.filter(Boolean)).toHaveLength(0);
  });

  it('starts one when promoted reads pile up, at most every MAJOR_EVERY young collections', () => {
    // Four throttled connections: reads wait long enough to outlive two collections, and the pile grows.
    const rule = new MajorCollectionRule();
    const started: number[] = [];
    for (let i = 0; i < 4 * MAJOR_EVERY; i += 1) {
      if (rule.afterYoung(1 * MiB + (i % MAJOR_EVERY) * 0.25 * MiB)) started.push(i);
    }
    expect(started).toEqual([MAJOR_EVERY - 1, 2 * MAJOR_EVERY - 1, 3 * MAJOR_EVERY - 1, 4 * MAJOR_EVERY - 1]);
  });

  it('measures growth from the least left since the last full collection, not from zero', () => {
    // Webhooks hold their own buffers (a high but steady level): that alone is no reason for a full collection.
    const rule = new MajorCollectionRule();
    const steady = Array.from({ length: 3 * MAJOR_EVERY }, (_, i) => rule.afterYoung(6 * MiB + (i % 2) * 0.5 * MiB));
    expect(steady.filter(Boolean)).toHaveLength(0);
    expect(rule.afterYoung(6 * MiB + MAJOR_GROWTH_BYTES)).toBe(true);
  });
});
