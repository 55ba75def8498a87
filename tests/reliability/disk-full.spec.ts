/**
 * Full disks on a real small disk (a tmpfs; see tests/support/tmpfs.ts), issue 20 case 2: two recordings that
 * each fit but not together are both saved, one after the other, instead of each stopping half way and
 * retrying until the service deletes them; a download of unknown size pauses above the journal's floor, so a
 * webhook arriving meanwhile is still acknowledged; the part of an expired recording is released; and a
 * webhook the journal cannot take is refused with its channel and the cause.
 */
import { once } from 'node:events';
import { open, readdir, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../support/download/file-server.js';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';
import type { FailedEvent, SavedEvent } from '../../electron/core/pipeline/download-manager.js';
import { DownloadManager, partPathFor } from '../../electron/core/pipeline/download-manager.js';
import { MemoryJobStore } from '../support/pipeline/memory-job-store.js';
import { RecordingPipeline } from '../../electron/core/pipeline/pipeline.js';
import type { PipelineRejection } from '../../electron/core/pipeline/pipeline.js';
import { canMountSmallDisks, mountSmallDisk, type SmallDisk } from '../support/tmpfs.js';

const MiB = 1024 * 1024;
const mountable = await canMountSmallDisks('disk-full.spec');

let server: TestServer;
let policy: DownloadOriginPolicy;
const disks: SmallDisk[] = [];
const stops: (() => Promise<void>)[] = [];
let counter = 0;

beforeAll(async () => {
  server = await TestServer.start();
  policy = new DownloadOriginPolicy([server.origin]);
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  server.setFaults(null);
  for (const disk of disks.splice(0)) await disk.close();
});

async function disk(bytes: number): Promise<string> {
  const mounted = await mountSmallDisk(bytes);
  if (!mounted) throw new Error('could not mount a tmpfs');
  disks.push(mounted);
  return mounted.dir;
}

function publish(size: number, channelId: string) {
  counter += 1;
  const urlPath = `/svc/d${counter}/${channelId}.mp4`;
  const file = server.addFile(urlPath, { size, seed: counter });
  return {
    file,
    rec: {
      channelId,
      url: server.url(urlPath),
      announcedBytes: size,
      duration: null,
      thumbnail: null,
      shape: 'json' as const,
    },
  };
}

/** Fills the disk of `dir` with one file until the write fails (ENOSPC). */
async function fill(dir: string): Promise<void> {
  const handle = await open(join(dir, 'filler.bin'), 'w');
  try {
    // Big blocks, then pages, then bytes: not one byte is left.
    for (const size of [256 * 1024, 4096, 1]) {
      const block = Buffer.alloc(size, 7);
      try {
        for (;;) await handle.write(block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    await handle.close();
  }
}

describe.skipIf(!mountable)('a nearly full disk (tmpfs)', () => {
  it('saves the first of two recordings that do not fit together whole, and the second once there is room', async () => {
    const folder = await disk(30 * MiB);
    const store = new MemoryJobStore();
    const manager = new DownloadManager({
      store,
      folder,
      policy,
      concurrency: 2,
      retryBaseMs: 5,
      retryMaxMs: 50,
      diskRecheckMs: 100,
    });
    stops.push(() => manager.stop());
    // Slow enough that both would be half way before either finishes (what made them deadlock).
    server.setFaults({ rateBytesPerSec: 40 * MiB });
    const a = publish(20 * MiB, 'disk-a');
    const b = publish(20 * MiB, 'disk-b');
    const failures: FailedEvent[] = [];
    manager.on('failed', (e) => failures.push(e));
    const saved = (): Promise<SavedEvent> => once(manager, 'saved').then(([e]) => e as SavedEvent);
    const low = once(manager, 'disk');
    await store.add(a.rec);
    await store.add(b.rec);
    const first = saved();
    manager.start();
    const one = await first;
    expect((await stat(one.path)).size).toBe(20 * MiB);
    // The other one waits for space with the numbers; it never started into a disk it could not finish on.
    const [status] = (await low) as [NonNullable<typeof manager.diskStatus>];
    expect(status).toMatchObject({ state: 'low', waiting: 1, neededBytes: 20 * MiB });
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((f) => f.job.errorNotes?.[0]?.code === 'diskWait')).toBe(true);
    expect(failures[0]?.job.error).toMatch(/Waiting for disk space in .*: 20\.0 MiB needed, \d+\.\d MiB free/);
    const other = [a, b].find((r) => r.rec.channelId !== one.job.channelId);
    expect(store.get(store.keys().find((k) => store.get(k)?.channelId === other?.rec.channelId) ?? '')?.attempts).toBe(
      0,
    );

    // The producer moves the first one away: the second is saved, whole.
    const second = saved();
    await unlink(one.path);
    const two = await second;
    expect((await stat(two.path)).size).toBe(20 * MiB);
    expect(manager.diskStatus?.state).toBe('ok');
  }, 30_000);

  it('pauses a download of unknown size above the floor, so the journal on the same disk still takes webhooks', async () => {
    const root = await disk(24 * MiB);
    server.setFaults({ noContentLength: true, noRange: true, rateBytesPerSec: 40 * MiB });
    const big = publish(40 * MiB, 'endless');
    const pipeline = await RecordingPipeline.open({
      stateDir: join(root, 'state'),
      folder: join(root, 'recordings'),
      policy,
      retryBaseMs: 5,
    });
    stops.push(() => pipeline.stop());
    await pipeline.start();
    const post = (rec: object) =>
      fetch(pipeline.receiver.localUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(rec),
      });
    const paused = new Promise<FailedEvent>((resolve) => {
      pipeline.on('failed', (e) => {
        if (e.job.channelId === 'endless') resolve(e);
      });
    });
    const diskEvent = once(pipeline, 'disk');
    expect((await post({ id: 'endless', url: big.rec.url })).status).toBe(200);
    const pause = await paused;
    expect(pause.job.errorNotes?.[0]?.code).toBe('diskBelowFloor');
    const [status] = (await diskEvent) as [NonNullable<typeof pipeline.diskStatus>];
    expect(status.state).toBe('low');
    expect(status.floorBytes).toBeGreaterThan(0);
    expect(status.freeBytes).not.toBeNull();

    // Many webhooks later the journal still has room: every one is acknowledged.
    for (let i = 0; i < 50; i += 1) {
      const next = publish(1000, `after-${i}`);
      const res = await post({ id: next.rec.channelId, url: `${next.rec.url}?${'x'.repeat(2000)}` });
      expect(res.status).toBe(200);
    }
    expect(pipeline.inbox.keys().length).toBe(51);
  }, 30_000);

  it('releases the part of a recording the service deleted before it could be finished', async () => {
    const folder = await disk(8 * MiB);
    const store = new MemoryJobStore();
    const manager = new DownloadManager({ store, folder, policy, retryBaseMs: 5, goneRecheckMs: 5 });
    stops.push(() => manager.stop());
    server.setFaults({ resetAfterBytes: 2 * MiB });
    const rec = publish(4 * MiB, 'late');
    // The service deletes it a second from now; the first attempt leaves a part, then the origin says it is gone.
    const { job } = await store.add(rec.rec, { deadline: new Date(Date.now() + 1_000).toISOString() });
    manager.once('failed', () => server.setFaults({ status: 404 }));
    const expired = once(manager, 'expired');
    manager.start();
    const [event] = (await expired) as [{ reason: string }];
    expect(event.reason).toMatch(/partial copy \(2\.0 MiB\) was deleted to free the disk/);
    await expect(stat(partPathFor(folder, job))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await readdir(folder)).filter((f) => f.endsWith('.part'))).toEqual([]);
  }, 30_000);

  it('refuses a webhook its journal cannot take with the channel and the cause', async () => {
    const root = await disk(4 * MiB);
    const pipeline = await RecordingPipeline.open({
      stateDir: join(root, 'state'),
      folder: join(root, 'recordings'),
      policy,
    });
    stops.push(() => pipeline.stop());
    await pipeline.start();
    await fill(root);
    const rejected = once(pipeline, 'rejected');
    const rec = publish(1000, 'lost-channel');
    const res = await fetch(pipeline.receiver.localUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'lost-channel', url: rec.rec.url }),
    });
    expect(res.status).toBe(503);
    const [r] = (await rejected) as [PipelineRejection];
    expect(r.channelId).toBe('lost-channel');
    expect(r.reason).toMatch(/the disk of the state folder is full \(ENOSPC\)/);
    await writeFile(join(root, 'filler.bin'), '');
  }, 30_000);
});

describe.skipIf(!mountable)('parts left half way by an earlier run (tmpfs)', () => {
  it('frees the part of one waiting recording so the other can finish, instead of both waiting until they expire', async () => {
    const folder = await disk(30 * MiB);
    const store = new MemoryJobStore();
    const a = publish(20 * MiB, 'half-a');
    const b = publish(20 * MiB, 'half-b');
    const jobs = [(await store.add(a.rec)).job, (await store.add(b.rec)).job];
    // What the earlier run left: two parts of 13 MiB each (the right bytes), 4 MiB free.
    for (const [i, job] of jobs.entries()) {
      const file = i === 0 ? a.file : b.file;
      await writeFile(partPathFor(folder, job), file.content.slice(0, 13 * MiB));
    }
    const manager = new DownloadManager({
      store,
      folder,
      policy,
      concurrency: 2,
      retryBaseMs: 5,
      retryMaxMs: 50,
      diskRecheckMs: 100,
    });
    stops.push(() => manager.stop());
    const saved = (): Promise<SavedEvent> => once(manager, 'saved').then(([e]) => e as SavedEvent);
    const first = saved();
    manager.start();
    const one = await first;
    expect((await stat(one.path)).size).toBe(20 * MiB);
    const second = saved();
    await unlink(one.path);
    const two = await second;
    expect((await stat(two.path)).size).toBe(20 * MiB);
  }, 30_000);
});

describe.skipIf(!mountable)('a recording removed from the list (tmpfs)', () => {
  it('releases the part it left, when the service said it is gone', async () => {
    const folder = await disk(8 * MiB);
    const store = new MemoryJobStore();
    const manager = new DownloadManager({ store, folder, policy, retryBaseMs: 5, retryMaxMs: 10 });
    stops.push(() => manager.stop());
    const rec = publish(4 * MiB, 'removed');
    const { job } = await store.add(rec.rec);
    // A part of 2 MiB, then the service answers 404: the recording is gone (looked at again later).
    server.setFaults({ resetAfterBytes: 2 * MiB, times: 1 });
    manager.once('failed', () => server.setFaults({ status: 404 }));
    const gone = new Promise<void>((resolve) => {
      manager.on('failed', (e) => {
        if (e.job.state === 'gone') resolve();
      });
    });
    manager.start();
    await gone;
    expect((await stat(partPathFor(folder, job))).size).toBe(2 * MiB);
    expect(await manager.releasePart(job.key)).toBe(2 * MiB);
    await expect(stat(partPathFor(folder, job))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 30_000);
});
