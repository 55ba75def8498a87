/**
 * Issue 20 case 10, whole: one recording announced in both webhook forms (the legacy URL without the random
 * segment, then the current one with it) is kept as two twin jobs, downloaded one at a time, and the first save
 * stands for both. A forged legacy webhook arriving first can no longer make the genuine one a duplicate, even
 * while its first attempt is still running; two genuine forms give one file and one `saved`; a restart between
 * the two (or between a save and its twin being marked) changes neither. Real parts: the durable Inbox, the
 * DownloadManager and a loopback HTTP origin whose legacy path is held, refused or served as each test needs.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import * as fsp from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { Inbox } from '../recordings/inbox.js';
import type { NewRecording, RecordingJob } from '../recordings/types.js';
import { DownloadManager, type SavedEvent } from './download-manager.js';

const BODY = createHash('sha256').update('twin').digest().toString('hex').repeat(2_000); // 128,000 bytes
const MD5 = createHash('md5').update(BODY).digest('hex');
/** Another broadcast of the same channel (its ID reused), the same size: only its ETag tells it apart. */
const NEXT = createHash('sha256').update('next').digest().toString('hex').repeat(2_000);
const NEXT_MD5 = createHash('md5').update(NEXT).digest('hex');

/** How the origin answers the legacy path: served like the current one, refused, refused once, or held. */
type LegacyMode =
  'serve' | 'forbidden' | 'unavailable-once' | 'unavailable-twice' | 'held-then-forbidden' | 'held-then-serve';

let server: Server;
let origin: string;
let legacyMode: LegacyMode;
let releaseHeld: (() => void) | null;
let requests: string[];
/** The Range header of each request, in the same order (`bytes=0-0`: a look at which object a URL names). */
let ranges: (string | undefined)[];
let root: string;
let folder: string;
let stateDir: string;
let inbox: Inbox;
let managers: DownloadManager[];
const arrived = new EventTarget();

function answer(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '';
  requests.push(url);
  ranges.push(req.headers.range);
  arrived.dispatchEvent(new Event(url));
  const serve = (): void => {
    res.writeHead(200, { 'content-length': String(BODY.length), etag: `"${MD5}"`, 'content-type': 'video/mp4' });
    res.end(BODY);
  };
  if (url === '/svc/Xy12z/ch-9.mp4' || url === '/svc/Ab34c/other.mp4') return serve();
  if (url === '/svc/Nw56x/ch-9.mp4') {
    res.writeHead(200, { 'content-length': String(NEXT.length), etag: `"${NEXT_MD5}"`, 'content-type': 'video/mp4' });
    res.end(NEXT);
    return;
  }
  if (url !== '/svc/ch-9.mp4') {
    res.writeHead(404).end();
    return;
  }
  const forbid = (): void => {
    res.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
  };
  if (legacyMode === 'serve') return serve();
  if (legacyMode === 'forbidden') return forbid();
  if (legacyMode === 'unavailable-once' || legacyMode === 'unavailable-twice') {
    legacyMode = legacyMode === 'unavailable-twice' ? 'unavailable-once' : 'serve';
    res.writeHead(503).end();
    return;
  }
  if (legacyMode === 'held-then-serve') {
    releaseHeld = () => {
      legacyMode = 'serve';
      if (!res.headersSent) serve();
    };
    return;
  }
  releaseHeld = () => {
    // The forged URL answers 403 from now on, at once.
    legacyMode = 'forbidden';
    if (!res.headersSent) forbid();
  };
}

beforeEach(async () => {
  legacyMode = 'serve';
  releaseHeld = null;
  requests = [];
  ranges = [];
  server = createServer(answer);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  root = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-twins-'));
  folder = path.join(root, 'Recordings');
  await fsp.mkdir(folder);
  stateDir = path.join(root, 'state');
  inbox = await Inbox.open(stateDir);
  managers = [];
});

afterEach(async () => {
  await Promise.all(managers.map((m) => m.stop()));
  await inbox.close();
  releaseHeld?.();
  server.closeAllConnections();
  server.close();
  await fsp.rm(root, { recursive: true, force: true });
});

const legacy = (): NewRecording => ({
  channelId: 'ch-9',
  url: `${origin}/svc/ch-9.mp4`,
  announcedBytes: null,
  duration: null,
  thumbnail: null,
  shape: 'get',
});
const genuine = (): NewRecording => ({
  ...legacy(),
  url: `${origin}/svc/Xy12z/ch-9.mp4`,
  announcedBytes: BODY.length,
  shape: 'json',
});

/** A manager on the current inbox; the automatic retry a minute away unless a test says otherwise. */
function manager(retryBaseMs = 60_000, concurrency = 3): { m: DownloadManager; saves: SavedEvent[] } {
  const m = new DownloadManager({
    store: inbox,
    concurrency,
    folder,
    policy: DownloadOriginPolicy.fromEnv({ TALLY_DOWNLOAD_ORIGINS: origin }),
    retryBaseMs,
    retryMaxMs: retryBaseMs,
    goneRecheckMs: retryBaseMs,
  });
  const saves: SavedEvent[] = [];
  m.on('saved', (e) => saves.push(e));
  managers.push(m);
  return { m, saves };
}

/** Resolves once the job is in `state` in the inbox (now or at a later update). */
function reaches(key: string, test: (job: RecordingJob) => boolean): Promise<RecordingJob> {
  const now = inbox.get(key);
  if (now && test(now)) return Promise.resolve(now);
  const store = inbox;
  return new Promise((resolve) => {
    const listener = (job: RecordingJob): void => {
      if (job.key !== key || !test(job)) return;
      store.off('updated', listener);
      resolve(job);
    };
    store.on('updated', listener);
  });
}

const requestFor = (url: string): Promise<Event> =>
  new Promise((resolve) => arrived.addEventListener(url, resolve, { once: true }));

async function filesIn(dir: string): Promise<string[]> {
  return (await fsp.readdir(dir)).sort();
}

describe('one recording in both webhook forms (twin jobs)', () => {
  it('a forged legacy webhook whose first attempt is still running does not keep the genuine one from being saved', async () => {
    legacyMode = 'held-then-forbidden';
    const { m, saves } = manager();
    m.start();
    const held = requestFor('/svc/ch-9.mp4');
    const forged = await inbox.add(legacy());
    await held;
    expect(inbox.get(forged.job.key)).toMatchObject({ state: 'downloading', error: null });

    const real = await inbox.add(genuine());
    expect(real.duplicate).toBe(false);
    expect(real.job.twin).toBe(forged.job.key);
    // One download per recording at a time: the genuine one waits for the forged attempt to end.
    expect(requests).toEqual(['/svc/ch-9.mp4']);
    releaseHeld?.();

    const genuineSaved = await reaches(real.job.key, (j) => j.state === 'saved');
    const forgedSaved = await reaches(forged.job.key, (j) => j.state === 'saved');
    expect(await fsp.readFile(genuineSaved.path as string, 'utf8')).toBe(BODY);
    expect(forgedSaved).toMatchObject({ path: genuineSaved.path, savedBy: real.job.key, error: null });
    expect(saves.map((s) => s.job.key)).toEqual([real.job.key]);
    expect(await filesIn(folder)).toEqual(['ch-9.mp4']);
  });

  it('a twin waiting for the other to finish holds no download slot', async () => {
    legacyMode = 'held-then-forbidden';
    const { m, saves } = manager(60_000, 2);
    m.start();
    const held = requestFor('/svc/ch-9.mp4');
    const forged = await inbox.add(legacy());
    await held;
    const real = await inbox.add(genuine());
    // Two slots: the forged attempt holds one; the genuine twin waits without one, so another recording gets it.
    const other = await inbox.add({ ...genuine(), channelId: 'other', url: `${origin}/svc/Ab34c/other.mp4` });
    await reaches(other.job.key, (j) => j.state === 'saved');
    expect(m.active).toContain(forged.job.key);
    expect(m.active).not.toContain(real.job.key);
    expect(inbox.get(real.job.key)?.state).toBe('pending');
    releaseHeld?.();
    await reaches(real.job.key, (j) => j.state === 'saved');
    // Its twin is marked after the genuine one's `saved` went out.
    await reaches(forged.job.key, (j) => j.state === 'saved');
    expect(saves.map((s) => s.job.key)).toEqual([other.job.key, real.job.key]);
  });

  it('both genuine forms, the legacy one failing once first: one file, one saved, the same bytes fetched once', async () => {
    legacyMode = 'unavailable-once';
    const { m, saves } = manager();
    m.start();
    const first = await inbox.add(legacy());
    await reaches(first.job.key, (j) => j.state === 'pending' && j.error !== null);

    const second = await inbox.add(genuine());
    expect(second.duplicate).toBe(false);
    const saved = await reaches(second.job.key, (j) => j.state === 'saved');
    // The legacy job, waiting a minute for its retry, is saved by the same file at once and not tried again.
    const twin = await reaches(first.job.key, (j) => j.state === 'saved');
    expect(twin.path).toBe(saved.path);
    expect(m.nextAttemptAt(first.job.key)).toBeNull();
    expect(saves).toHaveLength(1);
    expect(await filesIn(folder)).toEqual(['ch-9.mp4']);
    // The legacy URL was looked at once more (one byte asked for) to see that it names the object saved.
    expect(requests).toEqual(['/svc/ch-9.mp4', '/svc/Xy12z/ch-9.mp4', '/svc/ch-9.mp4']);
    expect(ranges.at(-1)).toBe('bytes=0-0');
    expect(inbox.standing(inbox.get(second.job.key) as RecordingJob).key).toBe(first.job.key);
    expect(inbox.standing(inbox.get(first.job.key) as RecordingJob).key).toBe(first.job.key);
  });

  it('a look at the legacy URL that gets no answer (503) is asked again, never kept as "another recording"', async () => {
    // Its download fails, then the look after the genuine one is saved: no answer to judge by. Written as
    // `twinDiffers` it parted the twins for good, and the legacy job downloaded the same recording again.
    legacyMode = 'unavailable-twice';
    const { m, saves } = manager();
    m.start();
    const first = await inbox.add(legacy());
    await reaches(first.job.key, (j) => j.state === 'pending' && j.error !== null);

    const second = await inbox.add(genuine());
    const saved = await reaches(second.job.key, (j) => j.state === 'saved');
    const twin = await reaches(first.job.key, (j) => j.state === 'saved');
    expect(twin).toMatchObject({ path: saved.path, savedBy: second.job.key });
    expect(twin.twinDiffers).toBeUndefined();
    expect(saves).toHaveLength(1);
    expect(await filesIn(folder)).toEqual(['ch-9.mp4']);
    // Its failed download, the look that got a 503, then the look that found the object saved: no second download.
    expect(requests).toEqual(['/svc/ch-9.mp4', '/svc/Xy12z/ch-9.mp4', '/svc/ch-9.mp4', '/svc/ch-9.mp4']);
    expect(ranges.slice(2)).toEqual(['bytes=0-0', 'bytes=0-0']);
    expect(inbox.twinOf(first.job.key)).toBe(second.job.key);
  });

  it('a restart between the two webhooks and the first attempt keeps the twins: the genuine one is saved', async () => {
    legacyMode = 'forbidden';
    const forged = await inbox.add(legacy());
    const real = await inbox.add(genuine());
    expect(real.duplicate).toBe(false);
    await inbox.close();
    inbox = await Inbox.open(stateDir);
    expect(inbox.twinOf(real.job.key)).toBe(forged.job.key);
    expect(inbox.twinOf(forged.job.key)).toBe(real.job.key);

    const { m, saves } = manager();
    m.start();
    const saved = await reaches(real.job.key, (j) => j.state === 'saved');
    expect(await fsp.readFile(saved.path as string, 'utf8')).toBe(BODY);
    expect(await reaches(forged.job.key, (j) => j.state === 'saved')).toMatchObject({ savedBy: real.job.key });
    expect(saves).toHaveLength(1);
    expect(await filesIn(folder)).toEqual(['ch-9.mp4']);

    // Compacted and replayed again: still twins, nothing downloaded again.
    await m.stop();
    await inbox.compact();
    await inbox.close();
    inbox = await Inbox.open(stateDir);
    expect(inbox.twinOf(forged.job.key)).toBe(real.job.key);
    const before = requests.length;
    const again = manager();
    again.m.start();
    await again.m.stop();
    expect(requests).toHaveLength(before);
    expect(again.saves).toEqual([]);
  });

  it('a restart between one twin saved and the other marked: the other is saved by that file, with no download', async () => {
    legacyMode = 'serve';
    const first = await inbox.add(legacy());
    const second = await inbox.add(genuine());
    const { m } = manager();
    m.start();
    const saved = await reaches(first.job.key, (j) => j.state === 'saved');
    await reaches(second.job.key, (j) => j.state === 'saved');
    await m.stop();
    // The on-disk state a crash right after the save leaves: the twin not yet marked.
    await inbox.update(second.job.key, { state: 'pending', path: null, bytes: null });
    await inbox.close();
    inbox = await Inbox.open(stateDir);
    const before = requests.length;

    const again = manager();
    again.m.start();
    const marked = await reaches(second.job.key, (j) => j.state === 'saved');
    expect(marked).toMatchObject({ path: saved.path, savedBy: first.job.key });
    // Only a one-byte look at which object its URL names (issue 31), no download.
    expect(requests).toHaveLength(before + 1);
    expect(ranges.at(-1)).toBe('bytes=0-0');
    expect(again.saves).toEqual([]);
    expect(await filesIn(folder)).toEqual(['ch-9.mp4']);
  });

  it('a new broadcast of the same channel while the legacy job downloads is paired, but saved as its own file', async () => {
    // Issue 31: the twin rule pairs the two forms only while both name the same object version.
    legacyMode = 'held-then-serve';
    const { m, saves } = manager();
    m.start();
    const held = requestFor('/svc/ch-9.mp4');
    const first = await inbox.add(legacy());
    await held;
    const next = await inbox.add({ ...genuine(), url: `${origin}/svc/Nw56x/ch-9.mp4`, announcedBytes: NEXT.length });
    expect(next.duplicate).toBe(false);
    releaseHeld?.();

    const one = await reaches(first.job.key, (j) => j.state === 'saved');
    const two = await reaches(next.job.key, (j) => j.state === 'saved');
    expect(two.savedBy).toBeUndefined();
    expect(two.path).not.toBe(one.path);
    expect(await fsp.readFile(one.path as string, 'utf8')).toBe(BODY);
    expect(await fsp.readFile(two.path as string, 'utf8')).toBe(NEXT);
    // Each announced as saved on its own (the event follows the journal's update).
    if (saves.length < 2) await new Promise((resolve) => m.on('saved', () => saves.length === 2 && resolve(null)));
    expect(saves.map((s) => s.job.key)).toEqual([first.job.key, next.job.key]);
    expect(await filesIn(folder)).toEqual(['ch-9 (2).mp4', 'ch-9.mp4']);
    // Two recordings after all: two rows and two counts, also after a restart.
    expect(inbox.twinOf(next.job.key)).toBeUndefined();
    expect(inbox.standing(inbox.get(next.job.key) as RecordingJob).key).toBe(next.job.key);
    await m.stop();
    await inbox.close();
    inbox = await Inbox.open(stateDir);
    expect(inbox.twinOf(first.job.key)).toBeUndefined();
    expect(inbox.twinOf(next.job.key)).toBeUndefined();
  });
});
