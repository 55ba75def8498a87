/**
 * Origins that lie or never stop, over a raw socket (issue 20). Case 11: a body without a length that goes on
 * past the announcement is cut at the announcement on every attempt; the size Tally measured by cutting never
 * becomes "the server's size", so the 64 GiB cap is never what bounds it.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RawOrigin } from '../../../tests/support/download/raw-origin.js';
import { TestServer } from '../../../tests/support/download/file-server.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import type { FailedEvent, SavedEvent } from './download-manager.js';
import { DownloadManager } from './download-manager.js';
import { MemoryJobStore } from '../../../tests/support/pipeline/memory-job-store.js';

let raw: RawOrigin;
let policy: DownloadOriginPolicy;
let dir: string;
const managers: DownloadManager[] = [];

/** Writes 64 KiB chunks as fast as the socket takes them, until it closes. */
function endless(socket: Socket): void {
  const chunk = Buffer.alloc(64 * 1024, 0x42);
  const pump = (): void => {
    while (!socket.destroyed && socket.write(chunk));
    if (!socket.destroyed) socket.once('drain', pump);
  };
  pump();
}

beforeAll(async () => {
  raw = await RawOrigin.start((_head, socket) => {
    socket.write('HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nConnection: close\r\n\r\n');
    endless(socket);
  });
  policy = new DownloadOriginPolicy([raw.origin]);
});
afterAll(async () => {
  await raw.close();
});
afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('lying origins', () => {
  it('cuts an endless length-less body at the announcement on every attempt, never trusting the cut size', async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-lying-'));
    const announced = 200_000;
    const store = new MemoryJobStore();
    const m = new DownloadManager({ store, folder: dir, policy, retryBaseMs: 5, retryMaxMs: 10, random: () => 0.5 });
    managers.push(m);
    let most = 0;
    const failures: FailedEvent[] = [];
    const enough = new Promise<void>((resolve, reject) => {
      m.on('progress', (p) => {
        most = Math.max(most, p.bytes);
        if (p.bytes > announced + 1) reject(new Error(`wrote ${p.bytes} bytes past the announcement`));
      });
      m.on('failed', (e) => {
        failures.push(e);
        if (failures.length === 5) resolve();
      });
    });
    await store.add({
      channelId: 'endless',
      url: raw.url('/svc/endless.mp4'),
      announcedBytes: announced,
      duration: null,
      thumbnail: null,
      shape: 'json',
    });
    m.start();
    await enough;
    expect(most).toBeLessThanOrEqual(announced + 1);
    for (const f of failures) {
      expect(f.willRetry).toBe(true);
      expect(f.job.error).toMatch(/more than the 200000 bytes the service announced without saying how many/);
    }
  }, 15_000);
});

describe('an ETag that is not an MD5', () => {
  it('saves the file once two downloads agree byte for byte, labelled repeat-consistent', async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-lying-'));
    const server = await TestServer.start();
    try {
      // 32 hex digits, not the MD5 of the content (what S3 sends for SSE-KMS and SSE-C objects).
      const file = server.addFile('/svc/kms/ch.mp4', { size: 300_000, etag: '"0123456789abcdef0123456789abcdef"' });
      const store = new MemoryJobStore();
      const m = new DownloadManager({
        store,
        folder: dir,
        policy: new DownloadOriginPolicy([server.origin]),
        retryBaseMs: 5,
        retryMaxMs: 10,
        random: () => 0.5,
      });
      managers.push(m);
      const failures: FailedEvent[] = [];
      m.on('failed', (e) => failures.push(e));
      const saved = new Promise<SavedEvent>((resolve, reject) => {
        m.once('saved', resolve);
        m.on('failed', () => {
          if (failures.length > 3) reject(new Error('still looping on the MD5 mismatch'));
        });
      });
      await store.add({
        channelId: 'kms',
        url: server.url('/svc/kms/ch.mp4'),
        announcedBytes: 300_000,
        duration: null,
        thumbnail: null,
        shape: 'json',
      });
      m.start();
      const event = await saved;
      expect(failures.length).toBe(1);
      expect(event.job.checks).toEqual(['size', 'repeat']);
      expect(
        createHash('sha256')
          .update(await readFile(event.path))
          .digest('hex'),
      ).toBe(file.sha256());
    } finally {
      await server.close();
    }
  });
});

describe('a server that consistently serves another size than announced', () => {
  it('is believed in the end, but the file is never labelled as checked for size', async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-lying-'));
    const half = await RawOrigin.start((_head, socket) => {
      socket.end(`HTTP/1.1 200 OK\r\nContent-Length: 50000\r\nConnection: close\r\n\r\n${'h'.repeat(50_000)}`);
    });
    try {
      const store = new MemoryJobStore();
      const m = new DownloadManager({
        store,
        folder: dir,
        policy: new DownloadOriginPolicy([half.origin]),
        retryBaseMs: 5,
        retryMaxMs: 10,
        random: () => 0.5,
      });
      managers.push(m);
      const saved = new Promise<SavedEvent>((resolve) => m.once('saved', resolve));
      await store.add({
        channelId: 'half',
        url: half.url('/svc/half.mp4'),
        announcedBytes: 100_000,
        duration: null,
        thumbnail: null,
        shape: 'json',
      });
      const failures: FailedEvent[] = [];
      m.on('failed', (e) => failures.push(e));
      m.start();
      const event = await saved;
      expect(event.bytes).toBe(50_000);
      // Never "verified" or "size": labelled shorter than announced (issue 31).
      expect(event.job.checks).toEqual(['short']);
      // Before the strikes rule believed it, each attempt said what was wrong, and was retried.
      expect(failures.length).toBe(2);
      for (const f of failures) {
        expect(f.willRetry).toBe(true);
        expect(f.job.error).toMatch(/^The server sends less than announced \(50000 of 100000 bytes\)/);
        expect(f.job.errorNotes).toMatchObject([{ code: 'error', params: { note: 'downloadShort' } }]);
      }
    } finally {
      await half.close();
    }
  });
});

/**
 * Issue 31: the two short-file origins. Each announces (by the webhook) the whole 3 MiB file; neither is ever
 * saved as complete or "verified", and neither is said to have an ETag that is "not an MD5".
 */
describe('origins that serve less than the webhook announced', () => {
  const WHOLE = 3_145_728;
  const HALF = WHOLE / 2;
  const body = Buffer.alloc(WHOLE);
  for (let i = 0; i < WHOLE; i += 1) body[i] = (i * 131 + (i >> 9)) & 0xff;
  const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');

  async function saveFrom(respond: (socket: Socket) => void): Promise<{ saved: SavedEvent; failures: FailedEvent[] }> {
    dir = await mkdtemp(join(tmpdir(), 'tally-short-'));
    const origin = await RawOrigin.start((_head, socket) => respond(socket));
    try {
      const store = new MemoryJobStore();
      const m = new DownloadManager({
        store,
        folder: dir,
        policy: new DownloadOriginPolicy([origin.origin]),
        retryBaseMs: 5,
        retryMaxMs: 10,
        random: () => 0.5,
      });
      managers.push(m);
      const failures: FailedEvent[] = [];
      const saved = new Promise<SavedEvent>((resolve, reject) => {
        m.once('saved', resolve);
        m.on('failed', (e) => {
          failures.push(e);
          if (failures.length > 4) reject(new Error(`still failing: ${e.job.error ?? ''}`));
        });
      });
      await store.add({
        channelId: 'morning-show',
        url: origin.url('/svc/morning-show.mp4'),
        announcedBytes: WHOLE,
        duration: null,
        thumbnail: null,
        shape: 'get',
      });
      m.start();
      return { saved: await saved, failures };
    } finally {
      await origin.close();
    }
  }

  const head = (length: number, etag: string): string =>
    `HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: ${length}\r\nETag: "${etag}"\r\nConnection: close\r\n\r\n`;

  it('half the length with the whole body and the whole file\'s MD5: shorter than announced, never "not an MD5"', async () => {
    const { saved, failures } = await saveFrom((socket) => {
      socket.write(head(HALF, md5(body)));
      socket.end(body);
    });
    expect(saved.bytes).toBe(HALF);
    expect(saved.job.checks).toEqual(['short']);
    expect(saved.job.checks).not.toContain('repeat');
    expect(saved.job.checks).not.toContain('md5');
    expect(failures.map((f) => f.job.error ?? '')).toEqual([
      expect.stringMatching(/^The server sends less than announced \(1572864 of 3145728 bytes\)/),
      expect.stringMatching(/^The server sends less than announced \(1572864 of 3145728 bytes\)/),
    ]);
    for (const f of failures) expect(f.job.error).not.toMatch(/corrupt|MD5/);
    expect(await readFile(saved.path)).toEqual(body.subarray(0, HALF));
  });

  it('consistently half, with the half\'s own MD5: shorter than announced, never "verified: MD5"', async () => {
    const half = body.subarray(0, HALF);
    const { saved, failures } = await saveFrom((socket) => {
      socket.write(head(HALF, md5(half)));
      socket.end(half);
    });
    expect(saved.bytes).toBe(HALF);
    expect(saved.job.checks).toEqual(['short']);
    expect(failures).toHaveLength(2);
  });
});
