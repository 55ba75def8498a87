import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import type { NewRecording, RecordingJob } from '../recordings/types.js';
import { RETENTION_MS } from '../recordings/types.js';
import type { DownloadClaims, ExpiredEvent, FailedEvent, SavedEvent } from './download-manager.js';
import { DownloadManager, partPathFor } from './download-manager.js';
import { downloadFile } from '../download/fetch-file.js';
import { HttpStatusError } from '../download/errors.js';
import { MemoryJobStore } from '../../../tests/support/pipeline/memory-job-store.js';
import { TestServer } from '../../../tests/support/download/file-server.js';

const KiB = 1024;

let server: TestServer;
let dir: string;
let store: MemoryJobStore;
let policy: DownloadOriginPolicy;
let managers: DownloadManager[] = [];
let counter = 0;

beforeAll(async () => {
  server = await TestServer.start();
  policy = new DownloadOriginPolicy([server.origin]);
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-mgr-'));
  store = new MemoryJobStore();
});
afterEach(async () => {
  await Promise.all(managers.map((m) => m.stop()));
  managers = [];
  server.setFaults(null);
  server.releasePaused();
  await fsp.rm(dir, { recursive: true, force: true });
});

function manager(extra: Partial<ConstructorParameters<typeof DownloadManager>[0]> = {}): DownloadManager {
  const m = new DownloadManager({
    store,
    folder: dir,
    policy,
    retryBaseMs: 5,
    retryMaxMs: 20,
    random: () => 0.5,
    ...extra,
  });
  managers.push(m);
  return m;
}

function recording(channelId: string, size: number, extra: Partial<NewRecording> = {}) {
  counter += 1;
  const urlPath = `/svc/r${counter}/${encodeURIComponent(channelId)}.mp4`;
  const file = server.addFile(urlPath, { size });
  const rec: NewRecording = {
    channelId,
    url: server.url(urlPath),
    announcedBytes: size,
    duration: null,
    thumbnail: null,
    shape: 'json',
    ...extra,
  };
  return { file, rec, urlPath };
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function nextEvent<T>(emitter: DownloadManager, event: 'saved' | 'failed' | 'expired', key?: string): Promise<T> {
  return new Promise((resolve) => {
    const listener = (payload: { job: RecordingJob }): void => {
      if (key && payload.job.key !== key) return;
      emitter.off(event, listener);
      resolve(payload as T);
    };
    emitter.on(event, listener);
  });
}

async function savedAll(m: DownloadManager, count: number): Promise<SavedEvent[]> {
  const events: SavedEvent[] = [];
  return new Promise((resolve) => {
    m.on('saved', (e) => {
      events.push(e);
      if (events.length === count) resolve(events);
    });
  });
}

describe('DownloadManager', () => {
  it('downloads a new job, persists the states and emits saved', async () => {
    const m = manager();
    m.start();
    const { file, rec } = recording('1581324488053_Dc5aQ', 200 * KiB);
    const saved = nextEvent<SavedEvent>(m, 'saved');
    const { job } = await store.add(rec);
    const event = await saved;

    expect(event.path).toBe(path.join(dir, '1581324488053_Dc5aQ.mp4'));
    expect(await sha256File(event.path)).toBe(file.sha256());
    const final = store.get(job.key);
    expect(final).toMatchObject({ state: 'saved', path: event.path, bytes: file.size, attempts: 1, error: null });
    const states = store.updates
      .filter(([k]) => k === job.key)
      .map(([, p]) => p.state)
      .filter(Boolean);
    expect(states).toEqual(['downloading', 'saved']);
    // The commit record is gone once the store knows the path.
    expect((await fsp.readdir(dir)).sort()).toEqual(['1581324488053_Dc5aQ.mp4']);
  });

  it('never runs more downloads at once than the concurrency limit (seen by the server)', async () => {
    server.setFaults({ rateBytesPerSec: 2 * 1024 * 1024 });
    server.maxActive = 0;
    const m = manager({ concurrency: 2 });
    m.start();
    const all = savedAll(m, 5);
    for (let i = 0; i < 5; i += 1) await store.add(recording(`conc-${i}`, 150 * KiB).rec);
    const events = await all;
    expect(events).toHaveLength(5);
    expect(server.maxActive).toBe(2);
  });

  it('retries transient errors with backoff, then succeeds', async () => {
    const m = manager();
    m.start();
    const { file, rec } = recording('flaky', 64 * KiB);
    server.setFaults({ status: 503, times: 2 });
    const failures: FailedEvent[] = [];
    m.on('failed', (e) => failures.push(e));
    const saved = nextEvent<SavedEvent>(m, 'saved');
    const { job } = await store.add(rec);
    const event = await saved;

    expect(failures).toHaveLength(2);
    expect(failures.every((f) => f.willRetry && f.nextAttemptAt !== null)).toBe(true);
    expect(failures[0]?.job.state).toBe('pending');
    expect(failures[0]?.job.error).toContain('503');
    expect(store.get(job.key)).toMatchObject({ state: 'saved', attempts: 3, error: null });
    expect(await sha256File(event.path)).toBe(file.sha256());
  });

  it('retries a 404 before the deadline (the file may not be published yet)', async () => {
    const m = manager();
    m.start();
    const { rec } = recording('early', 10 * KiB);
    server.setFaults({ status: 404, times: 1 });
    const failed = nextEvent<FailedEvent>(m, 'failed');
    const saved = nextEvent<SavedEvent>(m, 'saved');
    await store.add(rec);
    const first = await failed;
    expect(first.willRetry).toBe(true);
    // Shown as gone while it waits, never as a countdown to the deadline.
    expect(first.job).toMatchObject({ state: 'gone' });
    expect(first.job.error).toMatch(/^The service does not have this recording \(404 NoSuchKey\)/);
    await saved;
  });

  it('expires a job whose file is gone after the deadline, with a clear reason', async () => {
    const now = Date.now();
    const m = manager({ now: () => now });
    const { rec } = recording('too-late', 10 * KiB);
    server.setFaults({ status: 404 });
    const receivedAt = new Date(now - RETENTION_MS - 60_000).toISOString();
    const { job } = await store.add(rec, { receivedAt, deadline: new Date(now - 60_000).toISOString() });
    const expired = nextEvent<ExpiredEvent>(m, 'expired');
    m.start();
    const event = await expired;
    expect(event.reason).toContain('The service deleted the recording 6 hours after the broadcast ended (at ');
    expect(store.get(job.key)).toMatchObject({ state: 'expired', error: event.reason, attempts: 1 });
  });

  it("names a deletion time the service's own clock has reached, even when the local clock ran ahead", async () => {
    // The local clock is 7 hours ahead of the origin's (a step): the stored deadline is in the origin's future.
    const m = manager({ now: () => Date.now() + 7 * 60 * 60 * 1000 });
    const { rec } = recording('clock-ahead', 10 * KiB);
    server.setFaults({ status: 404 });
    await store.add(rec, { deadline: new Date(Date.now() + 60 * 60 * 1000).toISOString() });
    const expired = nextEvent<ExpiredEvent>(m, 'expired');
    m.start();
    const event = await expired;
    const at = /\(at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\)/.exec(event.reason)?.[1];
    // The origin's Date header has a resolution of one second.
    expect(Date.parse(`${at?.replace(' ', 'T')}Z`)).toBeLessThanOrEqual(Date.now());
  });

  it('judges the 6 hours by the service deadline it learned before a restart, not a stored deadline a step moved', async () => {
    // Before the restart the origin dated an answer: the deadline on its own clock is an hour away. The stored
    // (local) deadline says a minute ago: the local clock stepped forward while Tally was stopped.
    const m = manager({ retryBaseMs: 5, retryMaxMs: 5, goneRecheckMs: 5 });
    const { rec } = recording('stepped-while-stopped', 10 * KiB);
    server.setFaults({ status: 404 });
    const { job } = await store.add(rec, {
      deadline: new Date(Date.now() - 60_000).toISOString(),
      serviceDeadline: new Date(Date.now() + 60 * 60 * 1000).toISOString(),
    });
    let expired = false;
    m.on('expired', () => (expired = true));
    const looks: string[] = [];
    const thirdLook = new Promise<void>((resolve) =>
      m.on('failed', (e) => {
        looks.push(e.job.state);
        if (looks.length === 3) resolve();
      }),
    );
    m.start();
    await thirdLook;
    // Still the service's to delete: looked at again, never expired, its part never released.
    expect(expired).toBe(false);
    expect(looks).toEqual(['gone', 'gone', 'gone']);
    expect(store.get(job.key)?.state).toBe('gone');
  });

  it("sets the deadline right by the service's clock when a step it could not see moved the journal's", async () => {
    // The journal's deadline says a minute ago (the clock stepped +7 h on another boot); the service's deadline,
    // learned before, says an hour from now on its clock (the origin's clock is this machine's here).
    const m = manager({ retryBaseMs: 5, retryMaxMs: 5 });
    const { rec } = recording('stepped-boot', 10 * KiB);
    server.setFaults({ status: 503, times: 1 });
    const serviceDeadline = Date.now() + 60 * 60 * 1000;
    const { job } = await store.add(rec, {
      deadline: new Date(Date.now() - 60_000).toISOString(),
      serviceDeadline: new Date(serviceDeadline).toISOString(),
    });
    const failed = nextEvent<FailedEvent>(m, 'failed', job.key);
    const saved = nextEvent<SavedEvent>(m, 'saved', job.key);
    m.start();
    const first = await failed;
    // The countdown and the pace of retries name the moment the service deletes the file: its Date counts whole
    // seconds, so the deadline read from it lies up to a second (and the answer's way) after.
    const moved = Date.parse(first.job.deadline) - serviceDeadline;
    expect(moved).toBeGreaterThanOrEqual(-50);
    expect(moved).toBeLessThan(5_000);
    expect(Math.abs(Date.parse(m.deadlineAt(job.key) ?? '') - Date.parse(first.job.deadline))).toBeLessThan(50);
    await saved;
  });

  it("remembers the service's deadline from its first dated answer, for a restart", async () => {
    const m = manager({ retryBaseMs: 5, retryMaxMs: 5 });
    const { rec } = recording('dated', 10 * KiB);
    server.setFaults({ status: 503 });
    const deadline = Date.now() + 60 * 60 * 1000;
    const { job } = await store.add(rec, { deadline: new Date(deadline).toISOString() });
    const failed = nextEvent(m, 'failed', job.key);
    m.start();
    await failed;
    const learned = Date.parse(store.get(job.key)?.serviceDeadline ?? '');
    // The origin's clock is this machine's here: the same moment, to the Date header's second.
    expect(Math.abs(learned - deadline)).toBeLessThan(2_000);
  });

  it("learns the service's deadline from an answer that serves the file, before any error answer", async () => {
    // The first attempt is cut mid-body (a stop, a lost link): no error answer dated anything, the 200 did.
    const m = manager();
    const { rec } = recording('served-dated', 64 * KiB);
    server.setFaults({ resetAfterBytes: 16 * KiB, times: 1 });
    const deadline = Date.now() + 60 * 60 * 1000;
    const { job } = await store.add(rec, { deadline: new Date(deadline).toISOString() });
    const failed = nextEvent<FailedEvent>(m, 'failed', job.key);
    m.start();
    const cut = await failed;
    expect(cut.error).not.toBeInstanceOf(HttpStatusError);
    const learned = Date.parse(store.get(job.key)?.serviceDeadline ?? '');
    expect(Math.abs(learned - deadline)).toBeLessThan(2_000);
  });

  it('falls back to the monotonic deadline when the origin gives no Date, or one that cannot be read', async () => {
    for (const date of [null, 'soon']) {
      const m = manager({ retryBaseMs: 5, retryMaxMs: 5, goneRecheckMs: 5 });
      const { rec } = recording(`undated-${String(date)}`, 10 * KiB);
      server.setFaults({ status: 404, date });
      // The service's deadline says an hour from now, but this answer carries no time of the service's to judge it
      // by: the monotonic deadline (a minute ago) decides.
      const { job } = await store.add(rec, {
        deadline: new Date(Date.now() - 60_000).toISOString(),
        serviceDeadline: new Date(Date.now() + 60 * 60 * 1000).toISOString(),
      });
      const expired = nextEvent<ExpiredEvent>(m, 'expired', job.key);
      m.start();
      await expired;
      expect(store.get(job.key)?.state).toBe('expired');
      await m.stop();
    }
  });

  it('keeps looking at a persisting 404 until the deadline passes, then expires', async () => {
    const m = manager({ retryBaseMs: 5, retryMaxMs: 5, goneRecheckMs: 5 });
    const { rec } = recording('gone', 10 * KiB);
    server.setFaults({ status: 404 });
    const { job } = await store.add(rec, { deadline: new Date(Date.now() + 1_500).toISOString() });
    const expired = nextEvent<ExpiredEvent>(m, 'expired');
    let failures = 0;
    m.on('failed', (e) => {
      failures += 1;
      expect(e.job.state).toBe('gone');
    });
    m.start();
    await expired;
    expect(failures).toBeGreaterThan(1);
    expect(store.get(job.key)?.state).toBe('expired');
    expect(store.get(job.key)?.error).toContain('The service deleted the recording 6 hours after');
  });

  it('does not retry a download the policy refuses', async () => {
    const m = manager();
    m.start();
    const failed = nextEvent<FailedEvent>(m, 'failed');
    const { job } = await store.add({
      channelId: 'evil',
      url: 'http://169.254.169.254/latest/meta-data',
      announcedBytes: null,
      duration: null,
      thumbnail: null,
      shape: 'json',
    });
    const event = await failed;
    expect(event.willRetry).toBe(false);
    expect(store.get(job.key)).toMatchObject({ state: 'failed', attempts: 1 });
    expect(store.get(job.key)?.error).toContain('link-local');
  });

  it('retries a corrupt download from scratch', async () => {
    const m = manager();
    m.start();
    const { file, rec, urlPath } = recording('corrupt', 100 * KiB);
    // Same URL, other bytes, but the ETag of the real file: the MD5 check must catch it.
    server.addFile(urlPath, { size: file.size, seed: 77, etag: file.etag });
    const failed = nextEvent<FailedEvent>(m, 'failed');
    const saved = nextEvent<SavedEvent>(m, 'saved');
    await store.add(rec);
    const failure = await failed;
    expect(failure.error.name).toBe('VerificationError');
    server.addFile(urlPath, { size: file.size });
    const event = await saved;
    expect(await sha256File(event.path)).toBe(file.sha256());
  });

  it('stops trusting an announced size that is wrong twice the same way', async () => {
    const m = manager();
    m.start();
    const { file, rec } = recording('odd-size', 30 * KiB, { announcedBytes: 30 });
    const saved = nextEvent<SavedEvent>(m, 'saved');
    const { job } = await store.add(rec);
    const event = await saved;
    expect(event.bytes).toBe(file.size);
    expect(store.get(job.key)?.attempts).toBe(3);
  });

  it('waits for disk space: DiskFullError is retried and the part kept', async () => {
    let full = true;
    const m = manager({
      fs: { statfs: async () => ({ bavail: full ? 1 : 1_000_000, bsize: 4096 }) },
    });
    m.start();
    const { file, rec } = recording('big', 100 * KiB);
    const failed = nextEvent<FailedEvent>(m, 'failed');
    const saved = nextEvent<SavedEvent>(m, 'saved');
    const { job } = await store.add(rec);
    const failure = await failed;
    expect(failure.willRetry).toBe(true);
    expect(failure.error.name).toBe('DiskFullError');
    expect(failure.job).toMatchObject({ state: 'pending' });
    expect(failure.job.error).toMatch(/^Waiting for disk space in .*: 100\.0 KiB needed, 0 bytes free/);
    full = false;
    const event = await saved;
    expect(await sha256File(event.path)).toBe(file.sha256());
    expect(store.get(job.key)?.state).toBe('saved');
  });

  it('gives two recordings of the same channel two files, never overwriting', async () => {
    const m = manager();
    m.start();
    const a = recording('same', 40 * KiB);
    const b = recording('same', 50 * KiB);
    const existing = path.join(dir, 'same.mp4');
    await fsp.writeFile(existing, 'not a recording');
    const all = savedAll(m, 2);
    await store.add(a.rec);
    await store.add(b.rec);
    const events = await all;
    const paths = events.map((e) => e.path).sort();
    expect(paths).toEqual([path.join(dir, 'same (2).mp4'), path.join(dir, 'same (3).mp4')]);
    expect(await fsp.readFile(existing, 'utf8')).toBe('not a recording');
    const hashes = await Promise.all(paths.map(sha256File));
    expect(hashes.sort()).toEqual([a.file.sha256(), b.file.sha256()].sort());
  });

  it('keeps hostile channel IDs inside the folder', async () => {
    const m = manager();
    m.start();
    const ids = ['../../etc/passwd', 'CON', 'a/b\\c', 'x'.repeat(1024), 'live\u202Egnp.exe', '🎥 show'];
    const all = savedAll(m, ids.length);
    for (const id of ids) await store.add(recording(id, 1000).rec);
    const events = await all;
    for (const e of events) {
      expect(path.dirname(e.path)).toBe(dir);
      expect(Buffer.byteLength(path.basename(e.path))).toBeLessThanOrEqual(210);
    }
    expect(await fsp.readdir(dir)).toHaveLength(ids.length);
  });

  it('resumes a job a crash left in "downloading" from its part file', async () => {
    const { file, rec, urlPath } = recording('crashed', 600 * KiB);
    const { job } = await store.add(rec);
    // What a crashed run leaves: a part and its sidecar at the job's part path, and the state 'downloading'.
    server.setFaults({ pauseAfterBytes: 250_000, times: 1 });
    const controller = new AbortController();
    await downloadFile({
      url: rec.url,
      dest: path.join(dir, 'unused.mp4'),
      partPath: partPathFor(dir, job),
      policy,
      signal: controller.signal,
      progressIntervalMs: 0,
      onProgress: (p) => p.bytes >= 250_000 && controller.abort(),
    }).catch(() => undefined);
    await store.update(job.key, { state: 'downloading', attempts: 1 });

    const m = manager();
    const saved = nextEvent<SavedEvent>(m, 'saved');
    m.start();
    const event = await saved;
    expect(server.fileRequests(urlPath).at(-1)?.range).toBe('bytes=250000-');
    expect(await sha256File(event.path)).toBe(file.sha256());
    expect(store.get(job.key)).toMatchObject({ state: 'saved', attempts: 2 });
  });

  it('recognises a file saved just before a crash (no second copy, no request)', async () => {
    const { rec, urlPath } = recording('saved-then-crashed', 20 * KiB);
    const { job } = await store.add(rec);
    const first = await downloadFile({
      url: rec.url,
      dest: path.join(dir, 'saved-then-crashed.mp4'),
      partPath: partPathFor(dir, job),
      policy,
      keepCommitRecord: true,
    });
    await store.update(job.key, { state: 'downloading', attempts: 1 });
    const requests = server.fileRequests(urlPath).length;

    const m = manager();
    const saved = nextEvent<SavedEvent>(m, 'saved');
    m.start();
    const event = await saved;
    expect(event.path).toBe(first.path);
    expect(server.fileRequests(urlPath).length).toBe(requests);
    expect(await fsp.readdir(dir)).toEqual(['saved-then-crashed.mp4']);
  });

  it('when the store cannot record "saved", retries later without downloading a second copy', async () => {
    const m = manager({ retryMaxMs: 5 });
    m.start();
    const { file, rec, urlPath } = recording('store-full', 30 * KiB);
    store.failUpdates = (patch) => patch.state === 'saved';
    const failed = nextEvent<FailedEvent>(m, 'failed');
    const saved = nextEvent<SavedEvent>(m, 'saved');
    const { job } = await store.add(rec);
    const failure = await failed;
    expect(failure.willRetry).toBe(true);
    const requests = server.fileRequests(urlPath).length;
    store.failUpdates = null;
    const event = await saved;
    expect(server.fileRequests(urlPath).length).toBe(requests);
    expect(await fsp.readdir(dir)).toEqual(['store-full.mp4']);
    expect(await sha256File(event.path)).toBe(file.sha256());
    expect(store.get(job.key)).toMatchObject({ state: 'saved', path: event.path });
  });

  it('never downloads a saved job again after a restart', async () => {
    const { rec, urlPath } = recording('done', 10 * KiB);
    await store.add(rec, { state: 'saved', path: path.join(dir, 'done.mp4'), bytes: 10 * KiB });
    const m = manager();
    m.start();
    // A new job goes through the same queue: once it is saved, the saved one would have been tried already.
    const saved = nextEvent<SavedEvent>(m, 'saved');
    await store.add(recording('other', 1000).rec);
    await saved;
    expect(server.fileRequests(urlPath)).toHaveLength(0);
  });

  it('stop() aborts running downloads, keeps the part and leaves the job pending', async () => {
    const { rec } = recording('stopped', 500 * KiB);
    server.setFaults({ pauseAfterBytes: 100_000, times: 1 });
    const m = manager({ progressIntervalMs: 0 });
    m.start();
    const reached = new Promise<void>((resolve) =>
      m.on('progress', (p) => {
        if (p.bytes >= 100_000) resolve();
      }),
    );
    const { job } = await store.add(rec);
    await reached;
    await m.stop();
    expect(store.get(job.key)?.state).toBe('pending');
    expect((await fsp.stat(partPathFor(dir, job))).size).toBe(100_000);
    expect(m.active).toEqual([]);
  });

  it('setFolder sends new downloads to the new folder; setConcurrency raises the limit', async () => {
    const m = manager({ concurrency: 1 });
    m.start();
    const other = path.join(dir, 'elsewhere');
    m.setFolder(other);
    m.setConcurrency(4);
    const saved = nextEvent<SavedEvent>(m, 'saved');
    await store.add(recording('moved', 2000).rec);
    expect(path.dirname((await saved).path)).toBe(other);
    expect(m.folder).toBe(other);
  });

  it('manual retry restarts a failed job', async () => {
    const m = manager();
    const { file, rec } = recording('manual', 5 * KiB);
    const { job } = await store.add(rec, { state: 'failed', error: 'refused earlier', attempts: 1 });
    m.start();
    const saved = nextEvent<SavedEvent>(m, 'saved');
    await m.retry(job.key);
    const event = await saved;
    expect(await sha256File(event.path)).toBe(file.sha256());
    expect(store.get(job.key)).toMatchObject({ state: 'saved', attempts: 2 });
  });
});

describe('acknowledgements first (acksFirst)', () => {
  /** A stand-in for the webhook receiver's busy/quiet signal, switched by the test. */
  function gate(initiallyBusy: boolean) {
    let busy = initiallyBusy;
    const listeners = new Set<() => void>();
    return {
      gate: {
        busy: () => busy,
        onQuiet: (listener: () => void) => {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
      },
      quiet(): void {
        busy = false;
        for (const listener of listeners) listener();
      },
      burst(): void {
        busy = true;
      },
      listeners,
    };
  }

  it('holds queued downloads while webhooks wait for their answer and starts them when the receiver is quiet', async () => {
    const g = gate(true);
    const m = manager({ acksFirst: g.gate, acksFirstMaxHoldMs: 60_000 });
    m.start();
    const { rec, urlPath, file } = recording('held-for-acks', 64 * KiB);
    const { job } = await store.add(rec);
    expect(m.active).toEqual([]);
    expect(server.fileRequests(urlPath)).toHaveLength(0);
    const saved = nextEvent<SavedEvent>(m, 'saved', job.key);
    g.quiet();
    expect(m.active).toEqual([job.key]);
    expect(await sha256File((await saved).path)).toBe(file.sha256());
  });

  it('never holds a download longer than acksFirstMaxHoldMs, however long webhooks keep coming', async () => {
    const g = gate(true);
    const m = manager({ acksFirst: g.gate, acksFirstMaxHoldMs: 40 });
    m.start();
    const { rec } = recording('flooded', 64 * KiB);
    const heldAt = performance.now();
    const { job } = await store.add(rec);
    expect(m.active).toEqual([]);
    await nextEvent<SavedEvent>(m, 'saved', job.key);
    expect(performance.now() - heldAt).toBeGreaterThanOrEqual(35);
  });

  it('runs the downloads of a burst longer than the cap beside it, and holds the next burst anew', async () => {
    const g = gate(true);
    const m = manager({ acksFirst: g.gate, acksFirstMaxHoldMs: 40 });
    m.start();
    const first = await store.add(recording('long-burst-1', 64 * KiB).rec);
    await nextEvent<SavedEvent>(m, 'saved', first.job.key);
    // The same burst goes on: its later recordings are not held a second time.
    const second = await store.add(recording('long-burst-2', 64 * KiB).rec);
    expect(m.active).toEqual([second.job.key]);
    await nextEvent<SavedEvent>(m, 'saved', second.job.key);
    // Quiet, then a new burst: held again (a hold that ran out once was never reset in the first version).
    g.quiet();
    g.burst();
    const { job } = await store.add(recording('next-burst', 64 * KiB).rec);
    expect(m.active).toEqual([]);
    const saved = nextEvent<SavedEvent>(m, 'saved', job.key);
    g.quiet();
    await saved;
  });

  it('stops listening to the receiver when stopped, and listens again when started', async () => {
    const g = gate(false);
    const m = manager({ acksFirst: g.gate });
    m.start();
    expect(g.listeners.size).toBe(1);
    await m.stop();
    expect(g.listeners.size).toBe(0);
    m.start();
    expect(g.listeners.size).toBe(1);
  });
});

describe('one origin download per recording per studio (DownloadClaims)', () => {
  /**
   * A stand-in for the studio's claims (studio/download-claims.ts, run for real against nats-server and nginx in
   * tests/studio-download-race.spec.ts): every recording is another receiver's, and `settled` is the test's.
   */
  function anotherReceiversClaims() {
    const asked: string[] = [];
    const settles = new Map<string, (copy: { path: string; bytes: number } | null) => void>();
    const claims: DownloadClaims = {
      claim: async (job) => {
        asked.push(job.key);
        return { go: 'wait', settled: new Promise((resolve) => settles.set(job.key, resolve)) };
      },
      release: () => undefined,
    };
    return { claims, asked, settles };
  }

  /** Resolves with the first job update from now on that `ok` accepts. */
  function updateWhen(ok: (job: RecordingJob) => boolean): Promise<RecordingJob> {
    return new Promise((resolve) => {
      const check = (job: RecordingJob) => {
        if (!ok(job)) return;
        store.off('updated', check);
        resolve(job);
      };
      store.on('updated', check);
    });
  }

  it('waits, pending with the reason, without downloading, and is saved by the claimant’s copy', async () => {
    const f = anotherReceiversClaims();
    const m = manager({ claims: f.claims, concurrency: 1 });
    m.start();
    const { rec, urlPath } = recording('cam-claimed', 64 * KiB);
    const reason = updateWhen(
      (j) => j.channelId === 'cam-claimed' && /Another receiver of the studio/.test(j.error ?? ''),
    );
    await store.add(rec);
    const waiting = await reason;
    expect(waiting.state).toBe('pending');
    // Its slot is free meanwhile: another recording downloads beside the wait.
    const other = recording('cam-other', 32 * KiB);
    f.claims.claim = async () => ({ go: 'download' });
    const { job: otherJob } = await store.add(other.rec);
    await nextEvent<SavedEvent>(m, 'saved', otherJob.key);

    const copy = path.join(dir, 'cam-claimed.mp4');
    await fsp.writeFile(copy, Buffer.alloc(64 * KiB, 1));
    const saved = nextEvent<SavedEvent>(m, 'saved', waiting.key);
    f.settles.get(waiting.key)!({ path: copy, bytes: 64 * KiB });
    expect(await saved).toMatchObject({ path: copy, bytes: 64 * KiB });
    expect(store.get(waiting.key)).toMatchObject({ state: 'saved', path: copy, error: null });
    expect(server.fileRequests(urlPath)).toEqual([]);
  });

  it('downloads it here when the claim lapses, and when half the time before the deadline went by waiting', async () => {
    const f = anotherReceiversClaims();
    const m = manager({ claims: f.claims });
    m.start();
    // The claimant died: its claim lapsed, so this receiver downloads it.
    const lapsed = recording('cam-lapsed', 64 * KiB);
    const waitingNow = updateWhen((j) => j.channelId === 'cam-lapsed' && j.error !== null);
    const { job: lapsedJob } = await store.add(lapsed.rec);
    await waitingNow;
    const lapsedSaved = nextEvent<SavedEvent>(m, 'saved', lapsedJob.key);
    f.claims.claim = async () => ({ go: 'download' });
    f.settles.get(lapsedJob.key)!(null);
    await lapsedSaved;
    expect(server.fileRequests(lapsed.urlPath).length).toBeGreaterThan(0);

    // A claimant that holds its claim and never publishes: downloaded here once half the time left is gone.
    const asked = anotherReceiversClaims();
    f.claims.claim = asked.claims.claim;
    const held = recording('cam-held', 64 * KiB);
    const { job } = await store.add(held.rec, {
      receivedAt: new Date().toISOString(),
      deadline: new Date(Date.now() + 400).toISOString(),
    });
    const saved = await nextEvent<SavedEvent>(m, 'saved', job.key);
    expect(asked.asked).toEqual([job.key]);
    expect(await fsp.readFile(saved.path)).toHaveLength(64 * KiB);
  });
});
