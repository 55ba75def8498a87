/**
 * Progress restarts the backoff (issue 30, item 3). A link cut every 256 KiB, ten minutes before the service's
 * deadline: each attempt writes bytes, so each wait starts again from the first step instead of doubling towards
 * five minutes (12 connections, 1.5 of 6 MiB, expired and deleted, before). And a retry is never put off past the
 * last moment the rest could still be fetched at the rate seen.
 *
 * Real parts: a Range-capable origin on 127.0.0.1 that ends every response after 256 KiB, real files. Time is
 * scaled by 1/100 (2 s first step → 20 ms, 5 min cap → 3 s, 10 min → 6 s); waits are on the monotonic clock.
 */
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import type { FailedEvent, SavedEvent } from './download-manager.js';
import { DownloadManager } from './download-manager.js';
import { MemoryJobStore } from '../../../tests/support/pipeline/memory-job-store.js';
import { TestServer } from '../../../tests/support/download/file-server.js';

const KiB = 1024;
const MiB = 1024 * KiB;

let server: TestServer;
let dir: string;
let policy: DownloadOriginPolicy;
let managers: DownloadManager[] = [];

beforeAll(async () => {
  server = await TestServer.start();
  policy = new DownloadOriginPolicy([server.origin]);
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-cuts-'));
});
afterEach(async () => {
  await Promise.all(managers.map((m) => m.stop()));
  managers = [];
  server.setFaults(null);
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('a link cut every 256 KiB', () => {
  it('saves a 6 MiB recording ten minutes (scaled) before the deadline: every cut restarts the backoff', async () => {
    const store = new MemoryJobStore();
    const m = new DownloadManager({
      store,
      folder: dir,
      policy,
      retryBaseMs: 20,
      retryMaxMs: 3_000,
      // The middle of each jittered wait, every time (the doubling, not luck, decides).
      random: () => 0.5,
    });
    managers.push(m);
    const file = server.addFile('/svc/cut/link-cut.mp4', { size: 6 * MiB });
    server.setFaults({ resetAfterBytes: 256 * KiB });
    const deadlineMs = 6_000;
    const { job } = await store.add(
      {
        channelId: 'link-cut',
        url: server.url('/svc/cut/link-cut.mp4'),
        announcedBytes: 6 * MiB,
        duration: null,
        thumbnail: null,
        shape: 'json',
      },
      { deadline: new Date(Date.now() + deadlineMs).toISOString() },
    );
    const waits: number[] = [];
    m.on('failed', (e: FailedEvent) => {
      if (e.nextAttemptAt) waits.push(Date.parse(e.nextAttemptAt) - Date.now());
    });
    const began = performance.now();
    const saved = new Promise<SavedEvent>((resolve, reject) => {
      m.once('saved', resolve);
      m.once('expired', (e) => reject(new Error(`expired: ${e.reason}`)));
    });
    m.start();
    const event = await saved;
    const took = performance.now() - began;

    expect(event.bytes).toBe(6 * MiB);
    expect(store.get(job.key)?.state).toBe('saved');
    // 24 connections of 256 KiB: 23 cuts, each followed by a wait from the first step (10 ms at this jitter).
    expect(waits.length).toBeGreaterThanOrEqual(23);
    expect(Math.max(...waits)).toBeLessThan(100);
    expect(took).toBeLessThan(deadlineMs);
    expect((await fsp.stat(event.path)).size).toBe(file.size);
  }, 20_000);

  it('never waits past the last moment the rest can still be fetched at the rate seen', async () => {
    const store = new MemoryJobStore();
    const m = new DownloadManager({
      store,
      folder: dir,
      policy,
      // A backoff whose first step alone is longer than the time left.
      retryBaseMs: 60_000,
      retryMaxMs: 60_000,
      random: () => 0.99,
    });
    managers.push(m);
    server.addFile('/svc/cut/slow-rest.mp4', { size: 512 * KiB });
    // 256 KiB/s: the first attempt writes 128 KiB in about half a second, then the link is cut.
    server.setFaults({ rateBytesPerSec: 256 * KiB, resetAfterBytes: 128 * KiB, times: 1 });
    const deadlineMs = 4_000;
    const began = performance.now();
    await store.add(
      {
        channelId: 'slow-rest',
        url: server.url('/svc/cut/slow-rest.mp4'),
        announcedBytes: 512 * KiB,
        duration: null,
        thumbnail: null,
        shape: 'json',
      },
      { deadline: new Date(Date.now() + deadlineMs).toISOString() },
    );
    const failed = new Promise<FailedEvent>((resolve) => m.once('failed', resolve));
    m.start();
    const first = await failed;
    // The rest (384 KiB) needs about 1.5 s at 256 KiB/s: the retry comes with time for it (and a margin), not in
    // 60 s nor at the deadline itself.
    server.setFaults({ rateBytesPerSec: 256 * KiB });
    const nextIn = Date.parse(first.nextAttemptAt ?? '') - Date.now();
    expect(nextIn).toBeLessThan(deadlineMs - (performance.now() - began) - 1_500);
    const saved = await new Promise<SavedEvent>((resolve) => m.once('saved', resolve));
    expect(saved.bytes).toBe(512 * KiB);
    expect(performance.now() - began).toBeLessThan(deadlineMs);
  }, 20_000);

  it('once that last moment has passed, a failure waits the plain backoff, not a millisecond', async () => {
    // Commit 13e4a92: the wait was cut to that moment even when it lay behind, so an origin that kept failing was
    // asked again every millisecond until the deadline, the journal written at each failure.
    const store = new MemoryJobStore();
    const m = new DownloadManager({ store, folder: dir, policy, retryBaseMs: 200, retryMaxMs: 200, random: () => 0.5 });
    managers.push(m);
    server.addFile('/svc/cut/too-slow.mp4', { size: 4 * MiB });
    // 256 KiB/s, cut after 64 KiB: the rest (almost 4 MiB) would take about 15 s at that pace, and 10 s are left.
    server.setFaults({ rateBytesPerSec: 256 * KiB, resetAfterBytes: 64 * KiB, times: 1 });
    const { job } = await store.add(
      {
        channelId: 'too-slow',
        url: server.url('/svc/cut/too-slow.mp4'),
        announcedBytes: 4 * MiB,
        duration: null,
        thumbnail: null,
        shape: 'json',
      },
      { deadline: new Date(Date.now() + 10_000).toISOString() },
    );
    const waits: number[] = [];
    const failures = new Promise<void>((resolve) => {
      m.on('failed', (e: FailedEvent) => {
        // From the cut on, the origin answers 503 to every request.
        if (waits.length === 0) server.setFaults({ status: 503 });
        // Measured from the failure's own time (written with it), so a busy machine's late event changes nothing.
        waits.push(Date.parse(e.nextAttemptAt ?? '') - Date.parse(e.job.updatedAt));
        if (waits.length === 4) resolve();
      });
    });
    m.start();
    await failures;
    await m.stop();
    expect(store.get(job.key)?.bytes ?? 0).toBeLessThan(4 * MiB);
    // Half of each 200 ms step at this jitter, never 1 ms.
    expect(Math.min(...waits)).toBeGreaterThan(50);
  }, 20_000);
});
