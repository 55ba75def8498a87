/**
 * Issue 31, "every recording is its own": a producer names every morning show `morning-show`, so with the legacy
 * GET webhook (its URL names only the channel) every day's recording arrives under the same URL. Against the
 * sandbox (which reuses the channel ID and serves each day's object at the legacy URL) through the real receiver,
 * journal and download queue: a later webhook whose object differs is saved beside the first; a repeat of the same
 * object stays one recording and costs no second download of the body; a day whose job is still retrying past its
 * deadline does not absorb the next day's webhook; a current-form webhook of a new broadcast after a saved legacy
 * job is a file of its own, not that job's "twin".
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { originIdentifier } from '../download/origin-probe.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { Inbox } from '../recordings/inbox.js';
import type { RecordingJob } from '../recordings/types.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import type { RecordingInfo, SandboxRequestEvent } from '../sandbox/types.js';
import { announcementSchema, serverIdentity } from '../studio/announcement.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { TokenStore } from '../webhook/token.js';
import { DownloadManager, type SavedEvent } from './download-manager.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Rig {
  sandbox: Sandbox;
  inbox: Inbox;
  receiver: WebhookReceiver;
  folder: string;
  saves: SavedEvent[];
  duplicates: RecordingJob[];
  /** Download requests the sandbox answered, with their Range header. */
  requests: SandboxRequestEvent[];
  manager: DownloadManager;
}

/** `retentionMs`: how long after its webhook a recording is deleted by the service (6 hours unless a test says). */
async function rig(retentionMs?: number): Promise<Rig> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-reused-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const folder = join(dir, 'Recordings');
  // Every recording the same size: only the object itself (its ETag) tells one day's from the next.
  const sandbox = await startSandbox({ seed: 31, defaultRecordingBytes: 64 * 1024 });
  cleanups.push(() => sandbox.close());
  const requests: SandboxRequestEvent[] = [];
  sandbox.control.events.on('request', (e: SandboxRequestEvent) => {
    if (e.target === 'download') requests.push(e);
  });
  const policy = DownloadOriginPolicy.fromEnv({ TALLY_DOWNLOAD_ORIGINS: sandbox.downloadOrigin });
  // As the pipeline opens it: a finished URL is a duplicate only while the origin serves the same object.
  const inbox = await Inbox.open(join(dir, 'state'), {
    identify: originIdentifier(policy),
    ...(retentionMs === undefined ? {} : { retentionMs }),
  });
  cleanups.push(() => inbox.close());
  const receiver = new WebhookReceiver({ inbox, policy, tokens: await TokenStore.open(join(dir, 'state')) });
  await receiver.start();
  cleanups.push(() => receiver.stop());
  const duplicates: RecordingJob[] = [];
  receiver.on('duplicate', (job) => duplicates.push(job));
  const manager = new DownloadManager({ store: inbox, folder, policy, retryBaseMs: 60_000 });
  const saves: SavedEvent[] = [];
  manager.on('saved', (e) => saves.push(e));
  manager.start();
  cleanups.push(() => manager.stop());
  sandbox.control.setWebhookUrl(receiver.localUrl);
  return { sandbox, inbox, receiver, folder, saves, duplicates, requests, manager };
}

/** Resolves with the first `count` saves, once there are that many (now or at a later `saved` event). */
function saved(r: Rig, count: number): Promise<SavedEvent[]> {
  if (r.saves.length >= count) return Promise.resolve(r.saves.slice(0, count));
  return new Promise((resolve) => {
    const look = (): void => {
      if (r.saves.length < count) return;
      r.manager.off('saved', look);
      resolve(r.saves.slice(0, count));
    };
    r.manager.on('saved', look);
  });
}

async function broadcast(r: Rig, reuse: boolean): Promise<RecordingInfo> {
  r.sandbox.control.startBroadcast({ id: 'morning-show', record: true, reuse });
  const recording = await r.sandbox.control.endBroadcast('morning-show');
  if (!recording) throw new Error('the sandbox published no recording');
  return recording;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('a channel ID reused every day (legacy GET webhooks)', () => {
  it('two days under one URL with different objects: two recordings saved; an identical repeat is still one', async () => {
    const r = await rig();
    r.sandbox.control.setWebhookShape('get');

    const day1 = await broadcast(r, false);
    const [first] = await saved(r, 1);
    expect(first?.job.url).toBe(day1.legacyUrl);
    expect(sha256(await readFile(first?.path as string))).toBe(await day1.sha256());

    // The sender repeats itself: one recording, answered as a duplicate, and no second download of the body
    // (one ranged look at the origin, one byte asked for).
    const before = r.requests.length;
    expect((await r.sandbox.control.resendWebhook('morning-show', 'get')).status).toBe(200);
    expect(r.duplicates.map((j) => j.key)).toEqual([first?.job.key]);
    expect(r.requests.slice(before).map((q) => q.range)).toEqual(['bytes=0-0']);

    // The next day, the same ID, the same legacy URL, another object: a new recording, saved beside the first.
    const day2 = await broadcast(r, true);
    expect(day2.legacyUrl).toBe(day1.legacyUrl);
    expect(day2.etag).not.toBe(day1.etag);
    const [, second] = await saved(r, 2);
    expect(second?.job.key).not.toBe(first?.job.key);
    expect(second?.job).toMatchObject({ url: day1.legacyUrl, follows: first?.job.key, key: `${first?.job.key}-2` });
    // A key the studio can announce too (its identity allows letters, digits, `_` and `-` only).
    expect(announcementSchema.shape.identity.safeParse(serverIdentity(second?.job.key as string)).success).toBe(true);
    expect(sha256(await readFile(second?.path as string))).toBe(await day2.sha256());
    expect(sha256(await readFile(first?.path as string))).toBe(await day1.sha256());
    expect((await readdir(r.folder)).sort()).toEqual(['morning-show (2).mp4', 'morning-show.mp4']);

    // Day 2 repeated: still two.
    expect((await r.sandbox.control.resendWebhook('morning-show', 'get')).status).toBe(200);
    expect(r.duplicates.map((j) => j.key)).toEqual([first?.job.key, second?.job.key]);
    expect(r.inbox.list()).toHaveLength(2);
    expect(r.saves).toHaveLength(2);
  });

  it('day 1 never downloaded (the origin failing past its deadline): day 2 under the same URL is still saved', async () => {
    // The service's 6 hours shrunk to nothing: day 1's job is past its deadline as soon as it is journalled.
    const r = await rig(1);
    r.sandbox.control.setWebhookShape('get');
    r.sandbox.control.setFaults('download', { status: 503 });
    const day1 = await broadcast(r, false);
    const failing = await new Promise<RecordingJob>((resolve) =>
      r.inbox.on('updated', (job) => job.state === 'pending' && job.error !== null && resolve(job)),
    );
    expect(failing.url).toBe(day1.legacyUrl);

    // The next day, the same legacy URL: once answered `duplicate` by the job still retrying, and never downloaded.
    r.sandbox.control.setFaults('download', null);
    const answered = new Promise<string>((resolve) => r.receiver.once('duplicate', () => resolve('duplicate')));
    const day2 = await broadcast(r, true);
    expect(await Promise.race([answered, saved(r, 1).then(() => 'saved')])).toBe('saved');
    const [second] = await saved(r, 1);
    expect(r.duplicates).toEqual([]);
    expect(second?.job).toMatchObject({ url: day1.legacyUrl, follows: failing.key });
    expect(sha256(await readFile(second?.path as string))).toBe(await day2.sha256());
  });

  it('a saved legacy job, then a current-form webhook of a new broadcast: two files, not twins', async () => {
    const r = await rig();
    r.sandbox.control.setWebhookShape('get');
    const day1 = await broadcast(r, false);
    const [first] = await saved(r, 1);

    // Hours later the same channel broadcasts again, and the service sends the current form (random segment).
    r.sandbox.control.setWebhookShape('json');
    const later = await broadcast(r, true);
    const [, second] = await saved(r, 2);
    expect(second?.job.url).toBe(later.url);
    expect(second?.job.twin).toBeUndefined();
    expect(r.duplicates).toEqual([]);
    expect(sha256(await readFile(first?.path as string))).toBe(await day1.sha256());
    expect(sha256(await readFile(second?.path as string))).toBe(await later.sha256());
    expect((await readdir(r.folder)).sort()).toEqual(['morning-show (2).mp4', 'morning-show.mp4']);

    // The same recording's current form again, after it was saved: a duplicate, as ever.
    expect((await r.sandbox.control.resendWebhook('morning-show', 'json')).status).toBe(200);
    expect(r.duplicates.map((j) => j.key)).toEqual([second?.job.key]);
  });
});
