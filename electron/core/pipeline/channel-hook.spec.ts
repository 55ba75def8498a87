/**
 * The channel lifecycle hook end to end over real HTTP: Tally's client sets it through the sandbox's admin API
 * (200, empty body), the sandbox calls `GET <hook>?action=create|close&chid=…` as broadcasts start and end, and
 * the pipeline turns those into `channel` events without journalling anything; a closed channel whose recording
 * webhook does not follow within the grace period is flagged.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelApi } from '../api-client.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import type { ChannelHookCall } from '../webhook/channel-hook.js';
import { parseChannelHook } from '../webhook/channel-hook.js';
import { ExpectedRecordings, type MissingRecording } from './expected-recordings.js';
import { RecordingPipeline } from './pipeline.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(opts: { expectRecordings: boolean; graceMs: number }) {
  const dir = await mkdtemp(join(tmpdir(), 'tally-channel-hook-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const sandbox: Sandbox = await startSandbox({ seed: 4 });
  cleanups.push(() => sandbox.close());
  const api = new ChannelApi({ endpoints: sandbox.endpoints, credentials: sandbox.credentials, retries: 0 });
  const pipeline = await RecordingPipeline.open({
    stateDir: join(dir, 'state'),
    folder: join(dir, 'recordings'),
    policy: new DownloadOriginPolicy([sandbox.downloadOrigin]),
    api,
    expectRecordings: opts.expectRecordings,
    recordingGraceMs: opts.graceMs,
    segments: 1,
  });
  cleanups.push(() => pipeline.stop());
  const ready = await pipeline.start();
  const calls: ChannelHookCall[] = [];
  pipeline.on('channel', (call) => calls.push(call));
  return { sandbox, api, pipeline, ready, calls };
}

function nextChannel(pipeline: RecordingPipeline, action: 'create' | 'close', channelId: string) {
  return new Promise<void>((resolve) => {
    const on = (call: ChannelHookCall) => {
      if (call.action !== action || call.channelId !== channelId) return;
      pipeline.off('channel', on);
      resolve();
    };
    pipeline.on('channel', on);
  });
}

describe('the channel lifecycle hook', () => {
  it('is set through the admin API (empty 200 accepted) and reported as channel events, never journalled', async () => {
    const { sandbox, api, pipeline, ready, calls } = await setup({ expectRecordings: false, graceMs: 60_000 });
    await api.setChannelHook(ready.localUrl!);
    expect(sandbox.control.channelWebhookUrl).toBe(ready.localUrl);

    const hooks: { action: string; status: number | null }[] = [];
    const bothLogged = new Promise<void>((resolve) =>
      sandbox.control.events.on('channel-hook', (d: { action: string; status: number | null }) => {
        if (hooks.push(d) === 2) resolve();
      }),
    );
    const opened = nextChannel(pipeline, 'create', 'night/owl ✓');
    sandbox.control.startBroadcast({ id: 'night/owl ✓', record: false });
    await opened;
    const closed = nextChannel(pipeline, 'close', 'night/owl ✓');
    await sandbox.control.endBroadcast('night/owl ✓');
    await closed;
    expect(calls).toEqual([
      { action: 'create', channelId: 'night/owl ✓' },
      { action: 'close', channelId: 'night/owl ✓' },
    ]);
    expect(pipeline.inbox.list()).toEqual([]);
    await bothLogged;
    expect(hooks.map((h) => [h.action, h.status])).toEqual([
      ['create', 200],
      ['close', 200],
    ]);
  });

  it('flags a closed channel whose recording webhook never comes, and not one whose webhook does', async () => {
    const { sandbox, pipeline, ready } = await setup({ expectRecordings: true, graceMs: 300 });
    sandbox.control.setWebhookUrl(ready.localUrl);
    sandbox.control.setChannelWebhookUrl(ready.localUrl);
    const missing: MissingRecording[] = [];
    pipeline.on('recording-missing', (m) => missing.push(m));

    // Recorded: the webhook follows the close, nothing is flagged.
    sandbox.control.startBroadcast({ id: 'recorded', record: true, recordingBytes: 10_000 });
    const received = once(pipeline, 'received');
    await sandbox.control.endBroadcast('recorded');
    await received;

    // Not recorded although recording is expected: flagged once the grace period passes.
    sandbox.control.startBroadcast({ id: 'lost', record: false });
    const flagged = once(pipeline, 'recording-missing');
    await sandbox.control.endBroadcast('lost');
    const [flag] = (await flagged) as [MissingRecording];
    expect(flag).toMatchObject({ channelId: 'lost', waitedMs: 300 });
    expect(missing.map((m) => m.channelId)).toEqual(['lost']);
    expect(pipeline.expected.watching).toEqual([]);
  });
});

describe('parseChannelHook', () => {
  it('takes create/close with a channel ID and leaves everything else to the recording webhook parser', () => {
    const q = (s: string) => new URLSearchParams(s);
    expect(parseChannelHook(q('action=create&chid=a'))).toEqual({ action: 'create', channelId: 'a' });
    expect(parseChannelHook(q('action=close&chid=a%20b'))).toEqual({ action: 'close', channelId: 'a b' });
    expect(parseChannelHook(q('chid=a&url=https%3A%2F%2Fs3.amazonaws.com%2Fx.mp4'))).toBeNull();
    expect(parseChannelHook(q('action=create&chid=a&url=x'))).toBeNull();
    expect(parseChannelHook(q('action=delete&chid=a'))).toBeNull();
    expect(parseChannelHook(q('action=close'))).toBeNull();
    expect(parseChannelHook(q(`action=close&chid=${'x'.repeat(5000)}`))).toBeNull();
  });
});

describe('ExpectedRecordings', () => {
  it('does not flag a recording whose webhook came before the close call, nor anything while not expecting', async () => {
    const missing: string[] = [];
    let expecting = true;
    const watcher = new ExpectedRecordings({
      graceMs: 50,
      expecting: () => expecting,
      onMissing: (m) => missing.push(m.channelId),
    });
    watcher.received('early');
    watcher.closed('early');
    expecting = false;
    watcher.closed('off');
    expecting = true;
    watcher.closed('late');
    expect(watcher.watching).toEqual(['late']);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(missing).toEqual(['late']);
    watcher.stop();
  });
});
