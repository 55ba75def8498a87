/**
 * The downloader against the real parts: the durable Inbox as the job store, the DownloadOriginPolicy built
 * from the environment, and the sandbox's S3-like download host with its faults.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { Inbox } from '../recordings/inbox.js';
import type { RecordingJob } from '../recordings/types.js';
import { RETENTION_MS } from '../recordings/types.js';
import type { RecordingInfo, Sandbox, SandboxRequestEvent } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import type { DownloadManagerOptions, ExpiredEvent, SavedEvent } from './download-manager.js';
import { DownloadManager } from './download-manager.js';

const MiB = 1024 * 1024;

let sb: Sandbox;
let root: string;
let folder: string;
let stateDir: string;
let inbox: Inbox;
let policy: DownloadOriginPolicy;
let managers: DownloadManager[];
let requests: SandboxRequestEvent[];
let broadcasts = 0;

beforeEach(async () => {
  sb = await startSandbox({ seed: 7, defaultRecordingBytes: 1 * MiB });
  root = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-dl-int-'));
  folder = path.join(root, 'Recordings');
  stateDir = path.join(root, 'state');
  inbox = await Inbox.open(stateDir);
  policy = DownloadOriginPolicy.fromEnv({ TALLY_DOWNLOAD_ORIGINS: sb.downloadOrigin });
  managers = [];
  requests = [];
  sb.control.events.on('request', (e: SandboxRequestEvent) => {
    if (e.target === 'download') requests.push(e);
  });
});

afterEach(async () => {
  await Promise.all(managers.map((m) => m.stop()));
  await inbox.close();
  await sb.close();
  await fsp.rm(root, { recursive: true, force: true });
});

function manager(extra: Partial<DownloadManagerOptions> = {}): DownloadManager {
  const m = new DownloadManager({ store: inbox, folder, policy, retryBaseMs: 5, retryMaxMs: 20, ...extra });
  managers.push(m);
  return m;
}

async function record(bytes: number, id = `ch-${(broadcasts += 1)}`): Promise<RecordingInfo> {
  sb.control.startBroadcast({ id, record: true, recordingBytes: bytes });
  const info = await sb.control.endBroadcast(id);
  if (!info) throw new Error('no recording');
  return info;
}

function announce(info: RecordingInfo, now?: Date): Promise<{ job: RecordingJob; duplicate: boolean }> {
  return inbox.add(
    {
      channelId: info.channelId,
      url: info.url,
      announcedBytes: info.size,
      duration: null,
      thumbnail: null,
      shape: 'json',
    },
    now,
  );
}

function saved(m: DownloadManager, key: string): Promise<SavedEvent> {
  return new Promise((resolve) => {
    const listener = (e: SavedEvent): void => {
      if (e.job.key !== key) return;
      m.off('saved', listener);
      resolve(e);
    };
    m.on('saved', listener);
  });
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

describe('download manager with the inbox, the origin policy and the sandbox', () => {
  it('saves a recording byte-identically and records it durably in the inbox', async () => {
    const info = await record(2 * MiB + 5);
    const m = manager();
    m.start();
    const { job } = await announce(info);
    const event = await saved(m, job.key);
    expect(event.path).toBe(path.join(folder, `${info.channelId}.mp4`));
    expect(await sha256File(event.path)).toBe(await info.sha256());

    // Durable: a fresh inbox replayed from disk knows the job is saved.
    await inbox.close();
    inbox = await Inbox.open(stateDir);
    expect(inbox.get(job.key)).toMatchObject({ state: 'saved', path: event.path, bytes: info.size });
  });

  it('resumes after the download host drops the connection mid-body', async () => {
    const info = await record(2 * MiB);
    sb.control.setFaults('download', { resetAfterBytes: 700_000, times: 1 });
    const m = manager();
    m.start();
    const { job } = await announce(info);
    const event = await saved(m, job.key);
    const gets = requests.filter((r) => r.path.endsWith('.mp4'));
    expect(gets.map((r) => r.range)).toEqual(['bytes=0-', expect.stringMatching(/^bytes=\d+-$/)]);
    // It resumes after what reached the disk. When a host cuts the connection, Node drops the few KiB still
    // buffered in the response (not yet handed to the file), so the resume point may sit a little before the cut.
    const resumedAt = Number(/^bytes=(\d+)-$/.exec(gets[1]?.range ?? '')?.[1]);
    expect(resumedAt).toBeGreaterThan(700_000 - 256 * 1024);
    expect(resumedAt).toBeLessThanOrEqual(700_000);
    expect(await sha256File(event.path)).toBe(await info.sha256());
    expect(inbox.get(job.key)?.attempts).toBe(2);
  });

  it('uses parallel ranges against a throttled host', async () => {
    // One connection would take 4 s: the ramp's two steps (each a window once every connection streams, later on
    // a loaded machine) are over while most of the file is still to fetch, so the last step has ranges to split.
    const info = await record(4 * MiB);
    sb.control.setFaults('download', { rateBytesPerSec: 1 * MiB });
    const m = manager({
      segments: 4,
      segmentThresholdBytes: 1 * MiB,
      ramp: { rampWindowMs: 200, minSplitBytes: 256 * 1024 },
    });
    m.start();
    const { job } = await announce(info);
    const event = await saved(m, job.key);
    const ranges = requests.filter((r) => r.path.endsWith('.mp4')).map((r) => r.range);
    expect(ranges.length).toBeGreaterThanOrEqual(4);
    expect(ranges.filter((r) => /^bytes=\d+-\d+$/.test(r ?? '')).length).toBeGreaterThanOrEqual(3);
    expect(await sha256File(event.path)).toBe(await info.sha256());
  });

  it('copes with a host that ignores Range', async () => {
    const info = await record(2 * MiB);
    sb.control.setFaults('download', { noRange: true });
    const m = manager({ segmentThresholdBytes: 256 * 1024 });
    m.start();
    const { job } = await announce(info);
    const event = await saved(m, job.key);
    expect(await sha256File(event.path)).toBe(await info.sha256());
  });

  it('retries an HTML 503 page, then saves', async () => {
    const info = await record(300_000);
    sb.control.setFaults('download', { status: 503, html: true, times: 2 });
    const m = manager();
    m.start();
    const { job } = await announce(info);
    const event = await saved(m, job.key);
    expect(await sha256File(event.path)).toBe(await info.sha256());
    expect(inbox.get(job.key)?.attempts).toBe(3);
  });

  it('expires a recording the service already deleted after the 6 hours', async () => {
    const info = await record(100_000);
    // Six hours pass at the service (its clock, hence the Date it answers with, and its deletion) since Tally was
    // told of the recording: its job was received as long ago.
    sb.control.advanceTime(RETENTION_MS + 1000);
    expect(sb.control.getRecording(info.channelId)?.expired).toBe(true);
    const m = manager();
    const expired = new Promise<ExpiredEvent>((resolve) => m.once('expired', resolve));
    m.start();
    const { job } = await announce(info, new Date(Date.now() - RETENTION_MS - 1000));
    const event = await expired;
    expect(event.reason).toMatch(/^The service deleted the recording 6 hours after the broadcast ended \(at /);
    // A time the service's clock has reached (its Date counts whole seconds).
    const at = /\(at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\)/.exec(event.reason)?.[1];
    expect(Date.parse(`${at?.replace(' ', 'T')}Z`)).toBeLessThanOrEqual(sb.control.now().getTime());
    expect(inbox.get(job.key)).toMatchObject({ state: 'expired', error: event.reason });
    expect(await fsp.readdir(folder)).toEqual([]);
  });

  it('picks up after a restart: a stopped download resumes from its part with a reopened inbox', async () => {
    const info = await record(3 * MiB);
    sb.control.setFaults('download', { rateBytesPerSec: 2 * MiB });
    const first = manager({ progressIntervalMs: 0 });
    first.start();
    const { job } = await announce(info);
    await new Promise<void>((resolve) =>
      first.on('progress', (p) => {
        if (p.bytes >= 1 * MiB) resolve();
      }),
    );
    await first.stop();
    await inbox.close();

    sb.control.setFaults('download', null);
    requests.length = 0;
    inbox = await Inbox.open(stateDir);
    expect(inbox.get(job.key)?.state).toBe('pending');
    const second = manager();
    const done = saved(second, job.key);
    second.start();
    const event = await done;
    const resumedAt = Number(/^bytes=(\d+)-$/.exec(requests.find((r) => r.path.endsWith('.mp4'))?.range ?? '')?.[1]);
    expect(resumedAt).toBeGreaterThanOrEqual(1 * MiB);
    expect(await sha256File(event.path)).toBe(await info.sha256());
    expect((await fsp.readdir(folder)).filter((f) => f.endsWith('.mp4'))).toEqual([`${info.channelId}.mp4`]);
  });
});
