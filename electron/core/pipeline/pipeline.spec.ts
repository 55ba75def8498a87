/**
 * RecordingPipeline's start and stop order, against the sandbox over real HTTP and real files: the lock
 * and journal come first, the heartbeat only once the receiver listens, the gap report covers the time
 * since the previous heartbeat, and stop leaves every acknowledged webhook in the journal for the next
 * start to resume.
 */
import { lineLogger } from '../logger.js';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { readHeartbeat, writeHeartbeat, type GapReportResult } from '../recordings/gap-report.js';
import { LOCK_FILE } from '../recordings/state-lock.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import { RecordingPipeline, type PipelineOptions } from './pipeline.js';
import type { SavedEvent } from './download-manager.js';

let sb: Sandbox;
const dirs: string[] = [];

beforeAll(async () => {
  sb = await startSandbox({ searchIndexDelayMs: 0, seed: 31 });
});
afterAll(async () => {
  await sb.close();
});
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function options(over: Partial<PipelineOptions> = {}): Promise<PipelineOptions & { windows: Date[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-pipeline-'));
  dirs.push(dir);
  const windows: Date[] = [];
  return {
    stateDir: join(dir, 'state'),
    folder: join(dir, 'recordings'),
    policy: new DownloadOriginPolicy([sb.downloadOrigin]),
    api: {
      setRecordHook: async () => {},
      search: async (q) => {
        windows.push(q.since);
        return { channels: [] };
      },
    },
    retryBaseMs: 20,
    windows,
    ...over,
  };
}

/** Resolves with the `saved` event of `channelId`. */
function savedOf(pipeline: RecordingPipeline, channelId: string): Promise<SavedEvent> {
  return new Promise((resolve) => {
    const onSaved = (event: SavedEvent) => {
      if (event.job.channelId !== channelId) return;
      pipeline.off('saved', onSaved);
      resolve(event);
    };
    pipeline.on('saved', onSaved);
  });
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('RecordingPipeline start and stop', () => {
  it('locks and replays on open, listens before the heartbeat, and reports gaps since the last run', async () => {
    const opts = await options();
    const lastRun = new Date(Date.now() - 60 * 60 * 1000);
    await writeHeartbeat(opts.stateDir, lastRun);

    const pipeline = await RecordingPipeline.open(opts);
    expect(await exists(join(opts.stateDir, LOCK_FILE))).toBe(true);
    // Nothing listens and nothing is announced before start.
    expect(await readHeartbeat(opts.stateDir)).toEqual(lastRun);

    const gaps = once(pipeline, 'gaps') as Promise<[GapReportResult]>;
    const ready = await pipeline.start();
    expect((await fetch(`${pipeline.receiver.origin}${pipeline.receiver.healthPath}`)).ok).toBe(true);
    expect((await readHeartbeat(opts.stateDir))!.getTime()).toBeGreaterThan(lastRun.getTime());
    const [report] = await gaps;
    expect(report).toMatchObject({ since: lastRun, missing: [], error: null });
    expect(opts.windows).toEqual([lastRun]);

    sb.control.setWebhookUrl(ready.localUrl);
    const id = `order-${Date.now()}`;
    const saved = savedOf(pipeline, id);
    sb.control.startBroadcast({ id, record: true, recordingBytes: 50_000 });
    await sb.control.endBroadcast(id);
    expect((await saved).job.state).toBe('saved');

    await pipeline.stop();
    await expect(fetch(`${ready.localUrl}`, { method: 'POST' })).rejects.toThrow();
    expect(await exists(join(opts.stateDir, LOCK_FILE))).toBe(false);
  });

  it('keeps the demo folder to its newest recordings while it runs (keepNewestRecordings), parts untouched', async () => {
    const opts = await options({ keepNewestRecordings: 2 });
    await mkdir(opts.folder, { recursive: true });
    await writeFile(join(opts.folder, 'left-by-a-crash.mp4.part'), 'part');
    const pipeline = await RecordingPipeline.open(opts);
    const ready = await pipeline.start();
    sb.control.setWebhookUrl(ready.localUrl);
    for (let i = 0; i < 4; i += 1) {
      const id = `demo-${Date.now()}-${i}`;
      const saved = savedOf(pipeline, id);
      sb.control.startBroadcast({ id, record: true, recordingBytes: 10_000 });
      await sb.control.endBroadcast(id);
      await saved;
    }
    await pipeline.stop();
    const names = (await readdir(opts.folder)).sort();
    expect(names.filter((n) => n.endsWith('.mp4'))).toHaveLength(2);
    expect(names).toContain('left-by-a-crash.mp4.part');
  });

  it('keeps a webhook acknowledged while downloads were paused, and downloads it on the next start', async () => {
    const opts = await options();
    const first = await RecordingPipeline.open(opts);
    await first.setDownloadsPaused(true);
    const ready = await first.start();
    sb.control.setWebhookUrl(ready.localUrl);
    const id = `resume-${Date.now()}`;
    const received = once(first, 'received');
    sb.control.startBroadcast({ id, record: true, recordingBytes: 40_000 });
    const recording = await sb.control.endBroadcast(id);
    await received;
    await first.stop();

    // The journal was closed last: a new pipeline over the same state finds the job and resumes it.
    const second = await RecordingPipeline.open(opts);
    expect(second.inbox.list().map((job) => [job.channelId, job.state])).toEqual([[id, 'pending']]);
    const saved = savedOf(second, id);
    await second.start();
    expect((await saved).bytes).toBe(recording!.size);
    await second.stop();
  });

  it('stops cleanly when the last heartbeat cannot be written, and says so in the log', async () => {
    const lines: string[] = [];
    const opts = await options({ log: lineLogger((line) => lines.push(line)) });
    const pipeline = await RecordingPipeline.open(opts);
    await pipeline.start();
    // A directory where the heartbeat file goes: the rename onto it fails, as on a read-only or full disk.
    await rm(join(opts.stateDir, 'last-running.json'));
    await mkdir(join(opts.stateDir, 'last-running.json', 'blocker'), { recursive: true });
    await pipeline.stop();
    expect(lines).toEqual([expect.stringMatching(/^heartbeat: could not be written: /)]);
    expect(await exists(join(opts.stateDir, LOCK_FILE))).toBe(false);
  });

  it('leaves the heartbeat alone when the receiver cannot listen, so the next gap report still covers it', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const opts = await options({ port });
      const lastRun = new Date(Date.now() - 30 * 60 * 1000);
      await writeHeartbeat(opts.stateDir, lastRun);
      const pipeline = await RecordingPipeline.open(opts);
      await expect(pipeline.start()).rejects.toThrow(/could not/i);
      expect(await readHeartbeat(opts.stateDir)).toEqual(lastRun);
      expect(opts.windows).toEqual([]);
      await pipeline.stop();
      expect(await exists(join(opts.stateDir, LOCK_FILE))).toBe(false);
      expect(await readHeartbeat(opts.stateDir)).toEqual(lastRun);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});

describe('RecordingPipeline: acknowledgements first', () => {
  it("holds a recording's download while another webhook is still being answered, then downloads it", async () => {
    const opts = await options();
    const pipeline = await RecordingPipeline.open(opts);
    const ready = await pipeline.start();
    // A webhook whose body is still arriving: the receiver is answering it.
    const slow = connect(pipeline.receiver.port, '127.0.0.1');
    try {
      await once(slow, 'connect');
      slow.write(
        `POST ${pipeline.receiver.hookPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          'Content-Length: 200\r\n\r\n{"id":',
      );
      await vi.waitFor(() => expect(pipeline.receiver.webhooksWaiting).toBe(1));

      sb.control.setWebhookUrl(ready.localUrl);
      const id = `acks-first-${Date.now()}`;
      const activeAtReceipt = new Promise<string[]>((resolve) =>
        pipeline.once('received', () => resolve(pipeline.downloads.active)),
      );
      const saved = savedOf(pipeline, id);
      sb.control.startBroadcast({ id, record: true, recordingBytes: 50_000 });
      await sb.control.endBroadcast(id);
      // Journalled and answered, but its download waits for the other webhook's answer.
      expect(await activeAtReceipt).toEqual([]);
      expect(pipeline.receiver.busy).toBe(true);

      slow.destroy();
      expect((await saved).job.state).toBe('saved');
    } finally {
      slow.destroy();
      await pipeline.stop();
    }
  });
});
