/**
 * Regressions for what the soak and the crash rounds found, pinned down deterministically (the suites that
 * found them hit them by chance):
 * 1. A captive-portal HTML page or an empty 200 answered instead of the file was saved as the recording when
 *    the webhook announced no size (the `get` and `spec` shapes), ending the job as `saved`: the real file
 *    was then lost. Now it is a retryable failure and the next attempt saves the real bytes.
 * 2. The final name was reserved by creating an EMPTY file under it before the rename, so a kill in between
 *    left an empty `<channel>.mp4` (and, before the commit record, the real file later came as `(2)`). Now a
 *    `.reserved` marker holds the name and the final name appears only with the complete file; a marker
 *    that a kill cut short (empty) is taken over rather than pushing the file to `(2)`.
 * 3. A kill between the journal's `saved` and the cleanup left the commit record and the marker for good;
 *    the next start sweeps them.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir, rm, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RESERVATION_SUFFIX,
  DownloadManager,
  partPathFor,
  reserveFinalName,
  type FailedEvent,
  type SavedEvent,
} from '../../electron/core/pipeline/download-manager.js';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';
import { Inbox } from '../../electron/core/recordings/inbox.js';
import { startSandbox, type Sandbox } from '../../electron/core/sandbox/index.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('found while writing the reliability suites', () => {
  let sb: Sandbox;
  let root: string;

  beforeAll(async () => {
    sb = await startSandbox({ seed: 5, searchIndexDelayMs: 0 });
    root = await mkdtemp(join(tmpdir(), 'tally-found-'));
  });
  afterAll(async () => {
    await sb?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  for (const fault of [
    { html: true, times: 1 },
    { emptyBody: true, times: 1 },
  ] as const) {
    it(`does not save ${'html' in fault ? 'an HTML page' : 'an empty 200'} as the recording; the retry saves the real file`, async () => {
      const dir = await mkdtemp(join(root, 'portal-'));
      const inbox = await Inbox.open(join(dir, 'state'));
      const folder = join(dir, 'out');
      const manager = new DownloadManager({
        store: inbox,
        folder,
        policy: new DownloadOriginPolicy([sb.downloadOrigin]),
        retryBaseMs: 1,
      });
      try {
        const id = `portal-${Object.keys(fault)[0]}`;
        sb.control.startBroadcast({ id, record: true, recordingBytes: 300_000 });
        const rec = (await sb.control.endBroadcast(id, { sendWebhook: false }))!;
        const failed = new Promise<FailedEvent>((resolve) => manager.once('failed', resolve));
        const saved = new Promise<SavedEvent>((resolve) => manager.once('saved', resolve));
        sb.control.setFaults('download', fault);
        manager.start();
        // The `get` shape: no announced size, so nothing but the answer itself can tell.
        await inbox.add({
          channelId: id,
          url: rec.legacyUrl,
          announcedBytes: null,
          duration: null,
          thumbnail: null,
          shape: 'get',
        });
        const first = await failed;
        expect(first.willRetry).toBe(true);
        expect(first.error.message).toMatch(/answered 200 \((an HTML page|an empty answer)/);
        const done = await saved;
        expect(done.bytes).toBe(rec.size);
        expect(sha(await readFile(done.path))).toBe(await rec.sha256());
      } finally {
        await manager.stop();
        await inbox.close();
        sb.control.setFaults('download', null);
      }
    });
  }

  it('reserves a final name without creating it: same job gets it back, another job gets the next one', async () => {
    const folder = await mkdtemp(join(root, 'names-'));
    const a = await reserveFinalName(folder, 'show', '.mp4', 'key-a');
    expect(a).toBe(join(folder, 'show.mp4'));
    expect(await readdir(folder)).toEqual([`show.mp4${RESERVATION_SUFFIX}`]);
    // A restart of the same job finds its own marker.
    expect(await reserveFinalName(folder, 'show', '.mp4', 'key-a')).toBe(a);
    // Another job (or process) skips a reserved name, and a name a file already has.
    expect(await reserveFinalName(folder, 'show', '.mp4', 'key-b')).toBe(join(folder, 'show (2).mp4'));
    await writeFile(join(folder, 'taken.mp4'), 'x');
    expect(await reserveFinalName(folder, 'taken', '.mp4', 'key-c')).toBe(join(folder, 'taken (2).mp4'));
    // Concurrent callers get distinct names.
    const many = await Promise.all(
      Array.from({ length: 20 }, (_, i) => reserveFinalName(folder, 'same', '.mp4', `k${i}`)),
    );
    expect(new Set(many).size).toBe(20);
    // A marker a kill cut short (created, content never written) is taken over, not skipped: no "(2)" copy.
    await writeFile(join(folder, `cut.mp4${RESERVATION_SUFFIX}`), '');
    expect(await reserveFinalName(folder, 'cut', '.mp4', 'key-d')).toBe(join(folder, 'cut.mp4'));
    expect(await readFile(join(folder, `cut.mp4${RESERVATION_SUFFIX}`), 'utf8')).toBe('key-d');
    // No final name was created by any of this.
    expect((await readdir(folder)).filter((n) => n.endsWith('.mp4')).sort()).toEqual(['taken.mp4']);
  });

  it('sweeps a commit record and a reservation left by a crash after the save was recorded', async () => {
    const dir = await mkdtemp(join(root, 'sweep-'));
    const folder = join(dir, 'out');
    const id = 'sweep-me';
    sb.control.startBroadcast({ id, record: true, recordingBytes: 50_000 });
    const rec = (await sb.control.endBroadcast(id, { sendWebhook: false }))!;
    const policy = new DownloadOriginPolicy([sb.downloadOrigin]);
    let inbox = await Inbox.open(join(dir, 'state'));
    let manager = new DownloadManager({ store: inbox, folder, policy });
    const saved = new Promise<SavedEvent>((resolve) => manager.once('saved', resolve));
    manager.start();
    const { job } = await inbox.add({
      channelId: id,
      url: rec.url,
      announcedBytes: null,
      duration: null,
      thumbnail: null,
      shape: 'json',
    });
    const { path } = await saved;
    await manager.stop();
    await inbox.close();
    // What a kill between the journal write and the cleanup leaves behind.
    await writeFile(`${path}${RESERVATION_SUFFIX}`, job.key);
    await writeFile(`${partPathFor(folder, job)}.json`, '{}');
    inbox = await Inbox.open(join(dir, 'state'));
    manager = new DownloadManager({ store: inbox, folder, policy });
    manager.start();
    await manager.stop();
    await inbox.close();
    expect(await readdir(folder)).toEqual([`${id}.mp4`]);
  });
});
