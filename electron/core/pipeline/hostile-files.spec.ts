/**
 * Hostile input that reaches the disk: nothing inside the recordings folder is written through a symbolic link (a
 * link planted at a part file once got the download appended to an outside file), and a recording is saved under
 * a media extension only, chosen by its first bytes before its URL (`.exe`, `.desktop`, `.html`, `.sh` never).
 */
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { downloadFile } from '../download/fetch-file.js';
import type { FailedEvent, SavedEvent } from './download-manager.js';
import { DownloadManager, partPathFor, RESERVATION_SUFFIX } from './download-manager.js';
import { MemoryJobStore } from '../../../tests/support/pipeline/memory-job-store.js';
import { statePathFor } from '../download/part-state.js';
import { TestServer } from '../../../tests/support/download/file-server.js';
import { mountUploads, type UploadRejection } from '../uploads/upload-route.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { TokenStore } from '../webhook/token.js';

let server: TestServer;
let root: string;
let dir: string;
let outside: string;
const OUTSIDE_TEXT = 'the attacker wants Tally to append to or overwrite this file\n';

beforeAll(async () => {
  server = await TestServer.start();
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  root = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-links-'));
  dir = path.join(root, 'recordings');
  await fsp.mkdir(dir);
  outside = path.join(root, 'outside.txt');
  await fsp.writeFile(outside, OUTSIDE_TEXT);
});
afterEach(async () => {
  await fsp.rm(root, { recursive: true, force: true });
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('planted symbolic links', () => {
  it('the manager removes links at the part, its sidecar and the name marker, says so, and saves a real file', async () => {
    const urlPath = '/svc/links/keynote.mp4';
    const file = server.addFile(urlPath, { size: 300_000 });
    const store = new MemoryJobStore();
    const m = new DownloadManager({
      store,
      folder: dir,
      policy: new DownloadOriginPolicy([server.origin]),
      retryBaseMs: 5,
      retryMaxMs: 20,
      random: () => 0.5,
    });
    try {
      const { job } = await store.add({
        channelId: 'keynote',
        url: server.url(urlPath),
        announcedBytes: file.size,
        duration: null,
        thumbnail: null,
        shape: 'json',
      });
      const part = partPathFor(dir, job);
      for (const at of [part, statePathFor(part), `${statePathFor(part)}.tmp`]) await fsp.symlink(outside, at);
      await fsp.symlink(outside, path.join(dir, `keynote.mp4${RESERVATION_SUFFIX}`));

      const failed = new Promise<FailedEvent>((resolve) => m.once('failed', resolve));
      const saved = new Promise<SavedEvent>((resolve) => m.once('saved', resolve));
      m.start();
      const refusal = await failed;
      expect(refusal.error.message).toMatch(
        /A symbolic link had been put at .*\.part.* Tally removed it without following it/,
      );
      expect(refusal.willRetry).toBe(true);
      const done = await saved;

      expect(await fsp.readFile(outside, 'utf8')).toBe(OUTSIDE_TEXT);
      expect(done.path).toBe(path.join(dir, 'keynote.mp4'));
      expect((await fsp.lstat(done.path)).isSymbolicLink()).toBe(false);
      expect(sha256(await fsp.readFile(done.path))).toBe(file.sha256());
    } finally {
      await m.stop();
    }
  });

  it('refuses uploads when the client uploads folder is a link: nothing is written outside, the refusal is reported', async () => {
    const away = path.join(root, 'elsewhere');
    await fsp.mkdir(away);
    await fsp.symlink(away, path.join(dir, 'client'));
    const receiver = new WebhookReceiver({
      inbox: { add: () => Promise.reject(new Error('no webhooks here')) },
      policy: new DownloadOriginPolicy([server.origin]),
      tokens: await TokenStore.open(path.join(root, 'state')),
    });
    const route = await mountUploads(receiver, { folder: dir, allowedOrigins: () => [] });
    const rejected: UploadRejection[] = [];
    route.on('rejected', (r) => rejected.push(r));
    await receiver.start();
    try {
      const answer = await fetch(`${receiver.origin}${receiver.routePath('uploads')}`, {
        method: 'POST',
        headers: { 'content-type': 'audio/ogg', 'x-filename': 'voice.ogg' },
        body: 'OggS recording',
      });
      expect(answer.status).toBe(507);
      expect(((await answer.json()) as { error: string }).error).toMatch(
        /^The client uploads folder .*client is a symbolic link; .* Remove the link\.$/,
      );
      expect(rejected).toEqual([expect.objectContaining({ status: 507, fileName: 'voice.ogg', recording: true })]);
    } finally {
      await receiver.stop();
    }
    expect(await fsp.readdir(away)).toEqual([]);
    expect((await fsp.lstat(path.join(dir, 'client'))).isSymbolicLink()).toBe(true);
  });

  it('the engine itself never opens a part through a link (O_NOFOLLOW), even without the manager', async () => {
    const urlPath = '/svc/links/engine.mp4';
    server.addFile(urlPath, { size: 100_000 });
    const partPath = path.join(dir, 'engine.mp4.part');
    await fsp.symlink(outside, partPath);
    const error = await downloadFile({
      url: server.url(urlPath),
      dest: path.join(dir, 'engine.mp4'),
      partPath,
      policy: { checkRedirect: (from, location) => ({ ok: true, url: new URL(location, from) }) },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(await fsp.readFile(outside, 'utf8')).toBe(OUTSIDE_TEXT);
  });

  it('a link at a final name counts as taken: the recording gets the next name, the link is left alone', async () => {
    const urlPath = '/svc/links/taken.mp4';
    const file = server.addFile(urlPath, { size: 50_000 });
    await fsp.symlink(outside, path.join(dir, 'taken.mp4'));
    const store = new MemoryJobStore();
    const m = new DownloadManager({ store, folder: dir, policy: new DownloadOriginPolicy([server.origin]) });
    try {
      const saved = new Promise<SavedEvent>((resolve) => m.once('saved', resolve));
      m.start();
      await store.add({
        channelId: 'taken',
        url: server.url(urlPath),
        announcedBytes: file.size,
        duration: null,
        thumbnail: null,
        shape: 'json',
      });
      expect((await saved).path).toBe(path.join(dir, 'taken (2).mp4'));
      expect(await fsp.readFile(outside, 'utf8')).toBe(OUTSIDE_TEXT);
      expect((await fsp.lstat(path.join(dir, 'taken.mp4'))).isSymbolicLink()).toBe(true);
    } finally {
      await m.stop();
    }
  });
});

describe('what a recording is saved as', () => {
  const WEBM_HEAD = Buffer.from([
    0x1a,
    0x45,
    0xdf,
    0xa3,
    0x9f,
    0x42,
    0x86,
    0x81,
    0x01,
    0x42,
    0x82,
    0x84,
    ...Buffer.from('webm'),
  ]);

  it.each([
    ['/svc/x/payload.exe', null, 'payload.mp4'],
    ['/svc/x/launcher.desktop', null, 'launcher.mp4'],
    ['/svc/x/page.html', null, 'page.mp4'],
    ['/svc/x/run.sh', null, 'run.mp4'],
    ['/svc/x/talk.mp4', WEBM_HEAD, 'talk.webm'],
    ['/svc/x/talk2.exe', WEBM_HEAD, 'talk2.webm'],
  ])('%s is saved under a media extension (%#)', async (urlPath, head, name) => {
    const file = server.addFile(urlPath, { size: 40_000, ...(head ? { head } : {}) });
    const store = new MemoryJobStore();
    const m = new DownloadManager({ store, folder: dir, policy: new DownloadOriginPolicy([server.origin]) });
    try {
      const saved = new Promise<SavedEvent>((resolve) => m.once('saved', resolve));
      m.start();
      const channelId = path.basename(urlPath).replace(/\.[^.]+$/, '');
      await store.add({
        channelId,
        url: server.url(urlPath),
        announcedBytes: file.size,
        duration: null,
        thumbnail: null,
        shape: 'json',
      });
      const done = await saved;
      expect(path.basename(done.path)).toBe(name);
      expect(sha256(await fsp.readFile(done.path))).toBe(file.sha256());
      expect(await fsp.readdir(dir)).toEqual([name]);
    } finally {
      await m.stop();
    }
  });
});
