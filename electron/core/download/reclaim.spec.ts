import { PerformanceObserver, constants } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import {
  MAJOR_EVERY,
  MAJOR_GROWTH_BYTES,
  MajorCollectionRule,
  RECLAIM_ABOVE_BYTES,
  RECLAIM_EVERY_BYTES,
  SpacedReclaim,
  forcedCollections,
  forcedFullCollections,
  holdBuffers,
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

  it('forces no collection for buffers other work declared it keeps alive (issue 22: a team receiver)', () => {
    // A team receiver's puts in flight: several MiB of live buffers beside the download. A collection frees
    // none of them, and promotes them to the old generation.
    const kept = Array.from({ length: 8 }, () => Buffer.alloc(1024 * 1024, 1));
    const release = holdBuffers(8 * 1024 * 1024);
    const before = forcedCollections();
    for (let i = 0; i < 64; i += 1) noteWritten(RECLAIM_EVERY_BYTES);
    expect(forcedCollections()).toBe(before);
    // Garbage above them is still collected.
    let dropped = 0;
    while (dropped < 4 * RECLAIM_ABOVE_BYTES) dropped += Buffer.allocUnsafeSlow(64 * 1024).length;
    noteWritten(RECLAIM_EVERY_BYTES);
    expect(forcedCollections()).toBe(before + 1);
    // Once given back, the threshold is the usual one again (released twice: counted once).
    release();
    release();
    noteWritten(RECLAIM_EVERY_BYTES);
    expect(forcedCollections()).toBe(before + 2);
    expect(kept.every((b) => b[0] === 1)).toBe(true);
  });

  it('starts no full collection while other work holds buffers on purpose (issue 22: a team receiver)', () => {
    // A burst of clips: puts come and go (their buffers alive and declared) while the downloads leave garbage
    // above them. What young collections leave then rises and falls with the puts, and the rule read that as
    // promoted reads: a full collection every MAJOR_EVERY young ones, 10-12 per 300 recordings.
    const young = forcedCollections();
    const full = forcedFullCollections();
    const kept: Buffer[] = [];
    const releases: (() => void)[] = [];
    for (let i = 0; i < 3 * MAJOR_EVERY; i += 1) {
      if (i % 8 === 0) {
        kept.push(Buffer.alloc(1024 * 1024, 1));
        releases.push(holdBuffers(1024 * 1024));
      }
      let dropped = 0;
      while (dropped < 2 * RECLAIM_ABOVE_BYTES) dropped += Buffer.allocUnsafeSlow(64 * 1024).length;
      noteWritten(RECLAIM_EVERY_BYTES);
    }
    for (const release of releases) release();
    expect(forcedCollections()).toBeGreaterThan(young); // the garbage above them is still collected
    expect(forcedFullCollections()).toBe(full);
    expect(kept.every((b) => b[0] === 1)).toBe(true);
  });

  it('still starts full collections for promoted reads while only buffers kept for good are declared', () => {
    // A team receiver that put a clip keeps spare pieces for good: if they counted as work in flight, its later
    // downloads (four throttled connections, whose reads wait long enough to be promoted) would never get the
    // full collections that keep them near 80 MB.
    const pool = Array.from({ length: 2 }, () => Buffer.alloc(1024 * 1024, 1));
    const releasePool = holdBuffers(2 * 1024 * 1024, true);
    const full = forcedFullCollections();
    const promoted: Buffer[] = [];
    for (let i = 0; i < 2 * MAJOR_EVERY + 2; i += 1) {
      promoted.push(Buffer.alloc(256 * 1024, 2));
      let dropped = 0;
      while (dropped < 2 * RECLAIM_ABOVE_BYTES) dropped += Buffer.allocUnsafeSlow(64 * 1024).length;
      noteWritten(RECLAIM_EVERY_BYTES);
    }
    releasePool();
    expect(forcedFullCollections()).toBeGreaterThan(full);
    expect(pool.every((b) => b[0] === 1) && promoted.every((b) => b[0] === 2)).toBe(true);
  });

  it("collects a mirror's pieces once per span they live, never with a full collection (issue 22)", () => {
    // A member's chunks live for their batch and one more chunk: a collection in between would promote the
    // ones still waiting, and V8 followed with a full collection after nearly every one.
    const span = 1536 * 1024;
    const reclaim = new SpacedReclaim(span, 3 * 1024 * 1024);
    const young = forcedCollections();
    const full = forcedFullCollections();
    const garbage = () => {
      let dropped = 0;
      while (dropped < 6 * RECLAIM_ABOVE_BYTES) dropped += Buffer.allocUnsafeSlow(64 * 1024).length;
    };
    garbage();
    reclaim.written(span - 1);
    expect(forcedCollections()).toBe(young); // within the span: the chunks written may still be alive
    reclaim.written(1);
    expect(forcedCollections()).toBe(young + 1);
    for (let i = 0; i < 40; i += 1) {
      garbage();
      reclaim.written(span);
    }
    expect(forcedCollections()).toBe(young + 41);
    expect(forcedFullCollections()).toBe(full);
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
