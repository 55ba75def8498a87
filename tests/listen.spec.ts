/**
 * `tally listen` end to end: the built CLI as a child process, the sandbox as the service over real HTTP,
 * real files. Covers every webhook shape, duplicates, rejections, a reset mid-body, and `kill -9` in the
 * middle of a download followed by a restart that resumes with a Range request and ends byte-identical.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { startSandbox, type Sandbox, type SandboxRequestEvent } from '../electron/core/sandbox/index.js';
import { ensureBuiltCli } from './support/built-cli.js';
import { startLoopbackProxy } from './support/loopback-proxy.js';
import { startListen, type ListenEvent, type ListenProcess } from './support/listen-process.js';
import { listenEnv, sha256File } from './support/sandbox-files.js';

describe('tally listen (child process against the sandbox)', () => {
  let sb: Sandbox;
  let home: string;
  let folder: string;
  let listen: ListenProcess | null = null;

  const env = () => listenEnv(sb, home);

  async function start(): Promise<{ proc: ListenProcess; ready: ListenEvent }> {
    const proc = startListen(['--folder', folder, '--port', '0', '--tunnel', 'none'], env());
    listen = proc;
    const ready = await proc.waitFor((e) => e.type === 'ready', 'ready');
    sb.control.setWebhookUrl(String(ready.localUrl));
    return { proc, ready };
  }

  async function stop(proc: ListenProcess): Promise<void> {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
    proc.child.kill('SIGTERM');
    const { code } = await proc.exited;
    expect(code, proc.stderr()).toBe(0);
  }

  beforeAll(async () => {
    await ensureBuiltCli();
    sb = await startSandbox({ searchIndexDelayMs: 0, seed: 7 });
  }, 180_000);

  afterAll(async () => {
    await sb?.close();
  });

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'tally-listen-home-'));
    folder = await mkdtemp(join(tmpdir(), 'tally-listen-out-'));
    sb.control.setFaults('download', null);
    sb.control.setWebhookShape('json');
  });

  afterEach(async () => {
    if (listen) await stop(listen);
    listen = null;
    await rm(home, { recursive: true, force: true });
    await rm(folder, { recursive: true, force: true });
  });

  it('prints ready with the full local webhook URL, then saves a recording from each webhook shape', async () => {
    const { proc, ready } = await start();
    expect(ready.localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/[A-Za-z0-9_-]{22,}$/);
    expect(ready.publicUrl).toBeNull();

    for (const shape of ['json', 'get', 'spec'] as const) {
      sb.control.setWebhookShape(shape);
      const id = `shape-${shape}-${Date.now()}`;
      sb.control.startBroadcast({ id, record: true, recordingBytes: 300_000 });
      const rec = await sb.control.endBroadcast(id);
      expect(rec).not.toBeNull();
      const received = await proc.waitFor((e) => e.type === 'received' && e.channelId === id, `received ${id}`);
      expect(received.shape).toBe(shape === 'spec' ? 'spec' : shape);
      const saved = await proc.waitFor((e) => e.type === 'saved' && e.channelId === id, `saved ${id}`);
      expect(saved.bytes).toBe(rec!.size);
      expect(String(saved.path).startsWith(folder)).toBe(true);
      expect(await sha256File(String(saved.path))).toBe(await rec!.sha256());
    }
  });

  it('acknowledges a repeated webhook without downloading twice, and rejects a foreign URL', async () => {
    const { proc, ready } = await start();
    const id = `dup-${Date.now()}`;
    sb.control.startBroadcast({ id, record: true, recordingBytes: 100_000 });
    await sb.control.endBroadcast(id);
    await proc.waitFor((e) => e.type === 'saved' && e.channelId === id, 'saved');
    const delivery = await sb.control.resendWebhook(id);
    expect(delivery.status).toBe(200);
    await proc.waitFor((e) => e.type === 'duplicate' && e.channelId === id, 'duplicate');
    expect((await readdir(folder)).filter((f) => f.endsWith('.mp4'))).toHaveLength(1);

    const res = await fetch(String(ready.localUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'evil', url: 'https://evil.example/x/evil.mp4' }),
    });
    expect(res.status).toBe(422);
    const rejected = await proc.waitFor((e) => e.type === 'rejected', 'rejected');
    expect(rejected.status).toBe(422);
    expect(String(rejected.reason)).toMatch(/not allowed|origin/i);
  });

  it('survives a connection reset mid-body and still saves a byte-identical file', async () => {
    const { proc } = await start();
    sb.control.setFaults('download', { resetAfterBytes: 50_000, times: 1 });
    const id = `reset-${Date.now()}`;
    sb.control.startBroadcast({ id, record: true, recordingBytes: 400_000 });
    const rec = await sb.control.endBroadcast(id);
    const saved = await proc.waitFor((e) => e.type === 'saved' && e.channelId === id, 'saved');
    expect(await sha256File(String(saved.path))).toBe(await rec!.sha256());
  });

  it('resumes with a Range request after kill -9 mid-download, leaving no truncated final file', async () => {
    const first = await start();
    const ranges: string[] = [];
    const onRequest = (r: SandboxRequestEvent) => {
      if (r.target === 'download' && r.range) ranges.push(r.range);
    };
    sb.control.events.on('request', onRequest);
    try {
      // Throttled so the kill lands mid-transfer; small segments threshold is irrelevant at this size.
      sb.control.setFaults('download', { rateBytesPerSec: 200_000 });
      const id = `kill-${Date.now()}`;
      sb.control.startBroadcast({ id, record: true, recordingBytes: 1_500_000 });
      const rec = await sb.control.endBroadcast(id);
      await first.proc.waitFor(
        (e) => e.type === 'progress' && e.channelId === id && Number(e.bytes) > 200_000,
        'progress past 200 kB',
      );
      first.proc.child.kill('SIGKILL');
      await first.proc.exited;
      listen = null;
      const before = await readdir(folder);
      expect(
        before.filter((f) => f.endsWith('.mp4')),
        'a final name exists before the download finished',
      ).toEqual([]);
      const part = before.find((f) => f.endsWith('.part'));
      expect(part, `no part file in ${before.join(', ')}`).toBeDefined();
      const partBytes = (await stat(join(folder, part!))).size;
      expect(partBytes).toBeGreaterThan(0);

      sb.control.setFaults('download', null);
      const second = await start();
      const saved = await second.proc.waitFor((e) => e.type === 'saved' && e.channelId === id, 'saved after restart');
      expect(await sha256File(String(saved.path))).toBe(await rec!.sha256());
      expect(
        ranges.some((r) => /^bytes=[1-9]\d*-/.test(r)),
        `ranges seen: ${ranges.join(' | ')}`,
      ).toBe(true);
    } finally {
      sb.control.events.off('request', onRequest);
    }
  });

  it('saves a client audio upload under client/ and reports it as an uploaded event', async () => {
    const { proc, ready } = await start();
    expect(String(ready.uploadUrl)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/uploads\/[A-Za-z0-9_-]{22,}$/);
    const audio = Buffer.alloc(50_000, 7);
    const res = await fetch(String(ready.uploadUrl), {
      method: 'POST',
      headers: { 'content-type': 'audio/webm', 'x-filename': 'svc.abc123-take1.ogg' },
      body: audio,
    });
    expect(res.status).toBe(201);
    const uploaded = await proc.waitFor((e) => e.type === 'uploaded', 'uploaded');
    expect(uploaded).toMatchObject({ bytes: audio.length, contentType: 'audio/webm' });
    expect(String(uploaded.path)).toBe(join(folder, 'client', 'svc.abc123-take1.webm'));
    expect((await stat(String(uploaded.path))).size).toBe(audio.length);
  });

  it('prints the channel lifecycle hook the sandbox calls as channel events, and journals nothing for it', async () => {
    const { proc, ready } = await start();
    // Set the way registration does: the admin API's webhook call, answered 200 with an empty body.
    const set = await fetch(`${sb.endpoints.adminUrl}/api/webhook/${sb.credentials.serviceId}`, {
      method: 'PUT',
      headers: { secret: sb.credentials.secret, 'content-type': 'application/json' },
      body: JSON.stringify({ url: String(ready.localUrl) }),
    });
    expect([set.status, await set.text()]).toEqual([200, '']);
    sb.control.startBroadcast({ id: 'hook-ndjson', record: false });
    expect(await proc.waitFor((e) => e.type === 'channel', 'channel create')).toEqual({
      type: 'channel',
      action: 'create',
      channelId: 'hook-ndjson',
    });
    await sb.control.endBroadcast('hook-ndjson');
    await proc.waitFor((e) => e.type === 'channel' && e.action === 'close', 'channel close');
    expect(proc.events.filter((e) => e.type === 'received' || e.type === 'rejected')).toEqual([]);
    sb.control.setChannelWebhookUrl(null);
  });

  it('--register with a public URL sets the lifecycle hook, and the sandbox calls it as channel events', async () => {
    // A loopback proxy plays the public address: the sandbox reaches Tally through it as it would a tunnel, and
    // it forwards to the receiver's port once listen has said it (ready), so listen can pick a free port itself.
    let port: (value: number) => void = () => undefined;
    const receiverPort = new Promise<number>((resolve) => (port = resolve));
    const proxy = await startLoopbackProxy(() => receiverPort);
    onTestFinished(() => proxy.close());
    const publicUrl = proxy.url;
    sb.control.setWebhookUrl(null);
    sb.control.setChannelWebhookUrl(null);
    const proc = startListen(['--folder', folder, '--port', '0', '--tunnel', publicUrl, '--register'], env());
    listen = proc;
    const ready = await proc.waitFor((e) => e.type === 'ready', 'ready');
    port(Number(new URL(String(ready.localUrl)).port));

    const registered = await proc.waitFor((e) => e.type === 'registered', 'registered');
    expect(registered).toMatchObject({ channelHook: 'set' });
    expect(String(registered.url)).toMatch(new RegExp(`^${publicUrl}/hooks/[A-Za-z0-9_-]{22,}$`));
    expect(sb.control.webhookUrl).toBe(registered.url);
    expect(sb.control.channelWebhookUrl).toBe(registered.url);

    sb.control.startBroadcast({ id: 'registered-hook', record: false });
    await proc.waitFor((e) => e.type === 'channel' && e.action === 'create', 'channel create');
    await sb.control.endBroadcast('registered-hook');
    const closed = await proc.waitFor((e) => e.type === 'channel' && e.action === 'close', 'channel close');
    expect(closed).toEqual({ type: 'channel', action: 'close', channelId: 'registered-hook' });
    sb.control.setWebhookUrl(null);
    sb.control.setChannelWebhookUrl(null);
  });

  it('stops gracefully on SIGTERM with exit code 0', async () => {
    const { proc } = await start();
    proc.child.kill('SIGTERM');
    const { code } = await proc.exited;
    expect(code, proc.stderr()).toBe(0);
    const types = proc.events.map((e) => e.type);
    expect(types).toContain('stopping');
    expect(types.at(-1)).toBe('stopped');
    listen = null;
  });
});
