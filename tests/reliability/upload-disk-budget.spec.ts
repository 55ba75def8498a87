/**
 * One disk budget for everything written (issue 32, finding 1), on a real 48 MiB disk (a tmpfs, see
 * tests/support/tmpfs.ts) that holds both the recordings folder and the state folder, a laptop's default: a web
 * client upload sized to the free space, declared or chunked, is refused with 507 before it writes into the free
 * space kept for the journal, the health says uploads are refused for space, and 40 webhooks sent after it are
 * all acknowledged and journalled.
 */
import { statfs } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../support/download/file-server.js';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';
import { floorFor, type DiskStatus } from '../../electron/core/pipeline/disk-budget.js';
import { RecordingPipeline } from '../../electron/core/pipeline/pipeline.js';
import { ReceiveService } from '../../electron/core/receive/receive-service.js';
import { openPaused } from '../support/receive-pipeline.js';
import { canMountSmallDisks, mountSmallDisk, type SmallDisk } from '../support/tmpfs.js';

const MiB = 1024 * 1024;
const mountable = await canMountSmallDisks('upload-disk-budget.spec');

let server: TestServer;
const disks: SmallDisk[] = [];
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await TestServer.start();
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  for (const disk of disks.splice(0)) await disk.close();
});

async function free(dir: string): Promise<{ free: number; total: number }> {
  const s = await statfs(dir);
  return { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
}

/**
 * Sends `size` bytes of body (declared, or chunked when `declared` is false) in 64 KiB writes until the server
 * answers or closes; after every MiB written it notes the free space of `dir`. Resolves with the answer and the
 * least free space seen.
 */
function upload(
  url: string,
  size: number,
  declared: boolean,
  dir: string,
): Promise<{ status: number; body: string; leastFree: number }> {
  return new Promise((resolve, reject) => {
    let leastFree = Infinity;
    let answered = false;
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          'Content-Type': 'audio/webm',
          'X-FILENAME': 'svc.big-1LL.ogg',
          ...(declared ? { 'Content-Length': String(size) } : {}),
        },
      },
      (res) => {
        answered = true;
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          void free(dir).then((f) =>
            resolve({ status: res.statusCode ?? 0, body, leastFree: Math.min(leastFree, f.free) }),
          );
        });
      },
    );
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    void (async () => {
      const block = Buffer.alloc(64 * 1024, 1);
      for (let sent = 0; sent < size && !answered && !req.destroyed; sent += block.length) {
        const piece = block.subarray(0, Math.min(block.length, size - sent));
        if (!req.write(piece)) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              req.off('drain', done).off('close', done);
              resolve();
            };
            req.on('drain', done).on('close', done);
          });
        }
        if ((sent + piece.length) % MiB === 0) leastFree = Math.min(leastFree, (await free(dir)).free);
      }
      if (!answered && !req.destroyed) req.end();
    })();
  });
}

describe.skipIf(!mountable)('one disk budget for uploads and downloads (48 MiB tmpfs, folder and state on it)', () => {
  for (const declared of [true, false]) {
    it(`refuses a ${declared ? 'declared' : 'chunked'} upload sized to the free space with 507 before the reserve is touched, and then acknowledges 40 webhooks`, async () => {
      const mounted = await mountSmallDisk(48 * MiB);
      if (!mounted) throw new Error('could not mount a tmpfs');
      disks.push(mounted);
      const root = mounted.dir;
      const pipeline = await RecordingPipeline.open({
        stateDir: join(root, 'state'),
        folder: join(root, 'recordings'),
        policy: new DownloadOriginPolicy([server.origin]),
        // No Origin header below: a client that is not a browser, holding the token (it sits in the web page).
        uploads: { allowedOrigins: () => [] },
      });
      stops.push(() => pipeline.stop());
      const ready = await pipeline.start();
      const disk: DiskStatus[] = [];
      pipeline.on('disk', (status) => disk.push(status));

      const before = await free(root);
      const floor = floorFor(before.total);
      // As in the report: the free space less 8 KiB.
      const answer = await upload(ready.localUploadUrl as string, before.free - 8 * 1024, declared, root);
      expect(answer.status, answer.body).toBe(507);
      const reason = (JSON.parse(answer.body) as { error: string }).error;
      expect(reason).toMatch(/^Not enough disk space in .+ kept for the journal; it was not saved/);
      expect(reason).not.toContain('\n');
      // Never below the journal's reserve, while it streamed or after.
      expect(answer.leastFree).toBeGreaterThanOrEqual(floor);
      if (declared) expect(answer.leastFree).toBeGreaterThan(before.free - MiB);

      // The health says uploads are refused for space (the pipeline announced it on its `disk` event).
      expect(pipeline.diskStatus?.uploadsRefused).not.toBeNull();
      expect(disk.at(-1)?.uploadsRefused?.neededBytes).toBeGreaterThan(0);

      // 40 webhooks after it: every one acknowledged and in the journal.
      const answers = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          server.addFile(`/svc/r${i}/after-${i}.mp4`, { size: 1000, seed: i });
          const url = server.url(`/svc/r${i}/after-${i}.mp4`);
          const res = await fetch(pipeline.receiver.localUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ id: `after-${i}`, url, filesize: '1000' }),
          });
          return res.status;
        }),
      );
      expect(answers).toEqual(Array(40).fill(200));
      expect(pipeline.inbox.keys().length).toBe(40);
    }, 60_000);
  }

  it('the receive service health (tray, tally status) says uploads are refused for space, in one line', async () => {
    const mounted = await mountSmallDisk(48 * MiB);
    if (!mounted) throw new Error('could not mount a tmpfs');
    disks.push(mounted);
    const root = mounted.dir;
    const service = new ReceiveService({ face: 'listen', home: join(root, 'state'), log: () => undefined });
    stops.push(() => service.close());
    const { pipeline } = await openPaused(service, root, { uploads: { allowedOrigins: () => [] } });
    const url = `${pipeline.receiver.origin}${pipeline.receiver.routePath('uploads')}`;
    const before = await free(root);
    const answer = await upload(url, before.free, true, root);
    expect(answer.status, answer.body).toBe(507);
    const view = await service.refresh();
    expect(view.state).toBe('error');
    const disk = view.components.find((c) => c.id === 'disk');
    expect(disk?.state).toBe('error');
    expect(disk?.reason).toMatch(
      /^Web client uploads are refused for space in .+: the last one needed [\d.]+ MiB, [\d.]+ MiB is free above the reserve kept for the journal\.$/,
    );
  }, 60_000);

  it('takes an upload that fits beside the reserve, chunked, and counts it against the same budget', async () => {
    const mounted = await mountSmallDisk(48 * MiB);
    if (!mounted) throw new Error('could not mount a tmpfs');
    disks.push(mounted);
    const root = mounted.dir;
    const pipeline = await RecordingPipeline.open({
      stateDir: join(root, 'state'),
      folder: join(root, 'recordings'),
      policy: new DownloadOriginPolicy([server.origin]),
      uploads: { allowedOrigins: () => [] },
    });
    stops.push(() => pipeline.stop());
    const ready = await pipeline.start();
    const before = await free(root);
    const size = before.free - floorFor(before.total) - 4 * MiB;
    const answer = await upload(ready.localUploadUrl as string, size, false, root);
    expect(answer.status, answer.body).toBe(201);
    expect(answer.leastFree).toBeGreaterThanOrEqual(floorFor(before.total));
    // Its reservation ended with it: nothing is held for an upload that is over.
    expect(pipeline.downloads.diskBudget.reservedBy(pipeline.downloads.folder)).toBe(0);
    expect(pipeline.diskStatus?.uploadsRefused ?? null).toBeNull();
  }, 60_000);
});
