/**
 * Issue 20 case 3, against a raw-socket origin: headers trickled a byte at a time get a timeout (the idle timer
 * alone never trips), and a body trickled below the stall rule's rate yields its slot, so a normal recording
 * queued behind it is saved instead of waiting until the service deletes it.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StallError, TimeoutError } from '../download/errors.js';
import { downloadFile } from '../download/fetch-file.js';
import { RawOrigin } from '../../../tests/support/download/raw-origin.js';
import { TestServer } from '../../../tests/support/download/file-server.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import type { FailedEvent, SavedEvent } from './download-manager.js';
import { DownloadManager } from './download-manager.js';
import { MemoryJobStore } from '../../../tests/support/pipeline/memory-job-store.js';

let raw: RawOrigin;
let server: TestServer;
let policy: DownloadOriginPolicy;
let dir: string;
const managers: DownloadManager[] = [];

beforeAll(async () => {
  server = await TestServer.start();
  raw = await RawOrigin.start((head, socket) => {
    if (head.startsWith('GET /headers')) {
      // A status line and headers that never end, one byte every 20 ms.
      raw.trickle(socket, Buffer.from(`HTTP/1.1 200 OK\r\n${'X-Slow: y\r\n'.repeat(1000)}`), 20);
      return;
    }
    // Honest headers, then a body of one byte every 20 ms.
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\nContent-Type: video/mp4\r\n\r\n');
    raw.trickle(socket, () => Buffer.from('x'), 20);
  });
  policy = new DownloadOriginPolicy([raw.origin, server.origin]);
});
afterAll(async () => {
  await raw.close();
  await server.close();
});
afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('trickling origins', () => {
  it('times out headers that trickle in a byte at a time', async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-trickle-'));
    const started = Date.now();
    const error = await downloadFile({
      url: raw.url('/headers/a.mp4'),
      dest: join(dir, 'a.mp4'),
      partPath: join(dir, 'a.mp4.part'),
      policy,
      timeoutMs: 400,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeLessThan(3000);
  }, 5000);

  it('stops a download that cannot finish before the deadline at its rate (the part is kept)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-trickle-'));
    const partPath = join(dir, 'late.mp4.part');
    const error = await downloadFile({
      url: raw.url('/body/late.mp4'),
      dest: join(dir, 'late.mp4'),
      partPath,
      policy,
      // 50 bytes/s passes a minimum of 1 byte/s, but 1,000,000 bytes need hours: the deadline is in 2 s.
      stallRule: { bytesPerSec: 1, windowMs: 300, deadlineAt: performance.now() + 2000 },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StallError);
    expect((error as StallError).why).toBe('late');
    expect((error as Error).message).toMatch(/cannot finish before the service deletes the file/);
    expect((await stat(partPath)).size).toBeGreaterThan(0);
  }, 5000);

  it('a body under the stall rule yields its slot: the recording queued behind it is saved', async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-trickle-'));
    const store = new MemoryJobStore();
    const m = new DownloadManager({
      store,
      folder: dir,
      policy,
      concurrency: 1,
      retryBaseMs: 1000,
      retryMaxMs: 1000,
      random: () => 0.99,
      stallRule: { bytesPerSec: 16 * 1024, windowMs: 300 },
    });
    managers.push(m);
    const failures: FailedEvent[] = [];
    m.on('failed', (e) => failures.push(e));
    const saved = new Promise<SavedEvent>((resolve) => m.once('saved', resolve));
    const normal = server.addFile('/svc/normal/ch.mp4', { size: 300_000 });
    await store.add({
      channelId: 'trickler',
      url: raw.url('/body/t.mp4'),
      announcedBytes: 1_000_000,
      duration: null,
      thumbnail: null,
      shape: 'json',
    });
    await store.add({
      channelId: 'normal',
      url: server.url('/svc/normal/ch.mp4'),
      announcedBytes: 300_000,
      duration: null,
      thumbnail: null,
      shape: 'json',
    });
    m.start();
    const event = await saved;
    expect(event.job.channelId).toBe('normal');
    expect((await stat(event.path)).size).toBe(normal.size);
    const stalled = failures.find((f) => f.job.channelId === 'trickler');
    expect(stalled?.error).toBeInstanceOf(StallError);
    expect(stalled?.willRetry).toBe(true);
    expect(stalled?.job.error).toMatch(/too slow .*its slot goes to the next recording/);
  }, 10_000);
});
