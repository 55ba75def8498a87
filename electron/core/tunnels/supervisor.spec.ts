import http from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { TunnelSupervisor, checkSelf } from './supervisor.js';
import type { ReconnectScheduled, TunnelSupervisorOptions, UrlChange } from './supervisor.js';
import { NoTunnel } from './none.js';
import { startTestReceiver, supervisedReceiver, waitForEvent } from '../../../tests/support/tunnels/receiver.js';
import type { TestReceiver } from '../../../tests/support/tunnels/receiver.js';
import { TunnelError, TunnelProviderBase } from './types.js';
import type { LocalTarget, TunnelOpenResult, TunnelProvider, TunnelStatus } from './types.js';
import { UrlTunnel } from './url.js';

const TOKEN = 'tkn';
const NONCE = 'me-123';

let receiver: TestReceiver;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  receiver = await startTestReceiver({ token: TOKEN, id: NONCE });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await receiver.close();
});

/** A provider whose `open` follows a script: an error to throw, or a base URL to return. */
class ScriptedProvider extends TunnelProviderBase {
  readonly kind = 'localtunnel' as const;
  opens = 0;
  closes = 0;
  constructor(private readonly script: (Error | string)[]) {
    super();
  }
  async open(_local: LocalTarget): Promise<TunnelOpenResult> {
    const step = this.script[Math.min(this.opens++, this.script.length - 1)];
    if (step instanceof Error) throw step;
    return { publicBaseUrl: step ?? null };
  }
  async close(): Promise<void> {
    this.closes++;
  }
}

function supervise(provider: TunnelProvider, overrides: Partial<TunnelSupervisorOptions> = {}): TunnelSupervisor {
  const supervisor = new TunnelSupervisor({
    provider,
    ...supervisedReceiver(receiver),
    uploadUrl: (base) => `${base}/uploads/${TOKEN}`,
    expectedId: NONCE,
    retryCheckIntervalMs: 5,
    maxFailedChecks: 2,
    backoff: { baseMs: 4, maxMs: 20 },
    random: () => 1,
    now: () => new Date('2026-01-02T03:04:05.000Z'),
    ...overrides,
  });
  cleanups.push(() => supervisor.stop());
  return supervisor;
}

describe('checkSelf', () => {
  it('is ok only when the receiver answers with the expected nonce', async () => {
    const url = receiver.selfCheckUrl(`http://127.0.0.1:${receiver.port}`);
    expect(await checkSelf({ url, expectedId: NONCE })).toEqual({ ok: true });
    expect(await checkSelf({ url, expectedId: 'someone-else' })).toEqual({
      ok: false,
      reason: 'foreign',
      message: `http://127.0.0.1:${receiver.port} reaches a different Tally receiver, not this one (another instance or an old tunnel owns this URL).`,
      notes: [{ code: 'selfForeign', params: { where: `http://127.0.0.1:${receiver.port}` } }],
    });
  });

  it('names a non-Tally answer, a refused connection and a silent server', async () => {
    const base = `http://127.0.0.1:${receiver.port}`;
    const notFound = await checkSelf({ url: `${base}/healthz/wrong-token`, expectedId: NONCE });
    expect(notFound).toMatchObject({ ok: false, reason: 'status' });
    expect(notFound.ok ? '' : notFound.message).toMatch(/answered 404 instead of Tally's self-check/);
    // The message names the origin only: the path holds the webhook token.
    expect(notFound.ok ? '' : notFound.message).not.toContain('wrong-token');

    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await checkSelf({ url: `http://127.0.0.1:${closedPort}/healthz/x`, expectedId: NONCE });
    expect(refused).toMatchObject({ ok: false, reason: 'network' });
    expect(refused.ok ? '' : refused.message).toMatch(/connection refused/);

    const sockets = new Set<Socket>();
    const silent = http.createServer(() => {});
    silent.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as { port: number }).port;
    const timedOut = await checkSelf({
      url: `http://127.0.0.1:${silentPort}/healthz/x`,
      expectedId: NONCE,
      timeoutMs: 50,
    });
    expect(timedOut).toMatchObject({ ok: false, reason: 'timeout' });
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));

    const json = http.createServer((_req, res) => res.end('{"status":"ok"}'));
    await new Promise<void>((resolve) => json.listen(0, '127.0.0.1', resolve));
    const other = await checkSelf({
      url: `http://127.0.0.1:${(json.address() as { port: number }).port}/x`,
      expectedId: NONCE,
    });
    expect(other).toMatchObject({ ok: false, reason: 'shape' });
    json.closeAllConnections();
    await new Promise<void>((resolve) => json.close(() => resolve()));
  });
});

describe('TunnelSupervisor', () => {
  it('reports reachable through a public URL, with the warning for a LAN address and all URLs filled in', async () => {
    const base = `http://127.0.0.1:${receiver.port}`;
    const supervisor = supervise(new UrlTunnel(base));
    const changes: UrlChange[] = [];
    supervisor.on('url-changed', (change) => changes.push(change));
    const reachable = waitForEvent<TunnelStatus>(supervisor, 'status', (s) => s.state === 'reachable');
    supervisor.start();
    expect(await reachable).toEqual({
      provider: 'url',
      state: 'reachable',
      publicUrl: `${base}/hooks/${TOKEN}`,
      localUrl: receiver.localUrl,
      uploadUrl: `${base}/uploads/${TOKEN}`,
      lastCheckedAt: '2026-01-02T03:04:05.000Z',
      message: `Plain http on 127.0.0.1:${receiver.port}: only this computer can reach it, so the service can deliver webhooks here only if it runs there too.`,
      messageNotes: [{ code: 'plainHttpLoopback', params: { host: `127.0.0.1:${receiver.port}` } }],
      registered: false,
      uploads: 'off',
      uploadsMessage: expect.stringMatching(/No web app origin is allowed/),
      uploadsNotes: [{ code: 'uploadsNoOrigin' }],
    });
    expect(changes).toEqual([{ previous: null, current: `${base}/hooks/${TOKEN}`, publicBaseUrl: base }]);

    const marked = waitForEvent<TunnelStatus>(supervisor, 'status');
    supervisor.setRegisteredUrl(`${base}/hooks/${TOKEN}`);
    expect((await marked).registered).toBe(true);

    const stopped = waitForEvent<TunnelStatus>(supervisor, 'status');
    await supervisor.stop();
    expect(await stopped).toMatchObject({ state: 'off', publicUrl: null });
  });

  it('does not keep uploads "ok" once the public URL stops answering, and says ok again when it is back', async () => {
    const base = `http://127.0.0.1:${receiver.port}`;
    const supervisor = supervise(new UrlTunnel(base), {
      uploadOrigins: () => ['https://app.example'],
      maxFailedChecks: 5,
    });
    const reachable = waitForEvent<TunnelStatus>(supervisor, 'status', (s) => s.state === 'reachable');
    supervisor.start();
    expect(await reachable).toMatchObject({ uploads: 'ok' });

    receiver.setHealthy(false);
    const unreachable = waitForEvent<TunnelStatus>(supervisor, 'status', (s) => s.state === 'unreachable');
    supervisor.checkNow();
    const down = await unreachable;
    expect(down.uploads).toBe('blocked');
    expect(down.uploadsMessage).toMatch(
      /^Browsers cannot upload through http:\/\/127\.0\.0\.1:\d+ while it is down: .*503/,
    );
    // The same reason as notes, so the popover says it in Korean too.
    expect(down.uploadsNotes?.map((n) => n.code)[0]).toBe('browserDown');

    receiver.setHealthy(true);
    const back = waitForEvent<TunnelStatus>(supervisor, 'status', (s) => s.state === 'reachable');
    expect(await back).toMatchObject({ uploads: 'ok' });
  });

  it('says when another server answers, and reopens the tunnel after N failed checks in a row', async () => {
    const provider = new ScriptedProvider([`http://127.0.0.1:${receiver.port}`]);
    const supervisor = supervise(provider, { expectedId: 'not-this-receiver' });
    const statuses: TunnelStatus[] = [];
    supervisor.on('status', (s) => statuses.push(s));
    const scheduled = waitForEvent<ReconnectScheduled>(supervisor, 'reconnect-scheduled');
    supervisor.start();
    const info = await scheduled;
    expect(info.attempt).toBe(1);
    expect(info.reason).toMatch(/reaches a different Tally receiver, not this one .* \(2 failed checks in a row\)$/);
    expect(statuses.filter((s) => s.state === 'unreachable').length).toBeGreaterThanOrEqual(2);
    expect(statuses.at(-1)?.message).toMatch(/Retrying in 4 ms\.$/);
    expect(provider.closes).toBe(1);
  });

  it('retries a failing open with growing delays, resets after success, and gives up on a ConfigError', async () => {
    const fail = new TunnelError('server down');
    const provider = new ScriptedProvider([fail, fail, fail, fail, `http://127.0.0.1:${receiver.port}`]);
    const supervisor = supervise(provider);
    const delays: number[] = [];
    supervisor.on('reconnect-scheduled', (info) => delays.push(info.delayMs));
    const errors: string[] = [];
    supervisor.on('status', (s) => {
      if (s.state === 'error') errors.push(s.message ?? '');
    });
    const reachable = waitForEvent<TunnelStatus>(supervisor, 'status', (s) => s.state === 'reachable');
    supervisor.start();
    await reachable;
    expect(delays).toEqual([4, 8, 16, 20]);
    expect(errors[0]).toBe('server down Retrying in 4 ms.');
    expect(provider.opens).toBe(5);

    // A drop after success starts again from the first delay.
    const again = waitForEvent<ReconnectScheduled>(supervisor, 'reconnect-scheduled');
    provider.emit('closed', 'went away');
    expect(await again).toEqual({ attempt: 1, delayMs: 4, reason: 'Tunnel closed: went away' });

    const broken = new ScriptedProvider([
      new ConfigError(
        'Set the ngrok authtoken in Settings → How the service reaches Tally (ngrok authtoken) or with `tally login --ngrok`.',
      ),
    ]);
    const stuck = supervise(broken);
    let retries = 0;
    stuck.on('reconnect-scheduled', () => retries++);
    const failed = waitForEvent<TunnelStatus>(stuck, 'status', (s) => s.state === 'error');
    stuck.start();
    expect((await failed).message).toBe(
      'Set the ngrok authtoken in Settings → How the service reaches Tally (ngrok authtoken) or with `tally login --ngrok`.',
    );
    expect(retries).toBe(0);
    expect(broken.opens).toBe(1);
  });

  it('with no tunnel reports off and never checks', async () => {
    const supervisor = supervise(new NoTunnel());
    let changes = 0;
    supervisor.on('url-changed', () => changes++);
    const off = waitForEvent<TunnelStatus>(supervisor, 'status', (s) => s.state === 'off');
    supervisor.start();
    expect(await off).toMatchObject({
      provider: 'none',
      publicUrl: null,
      localUrl: receiver.localUrl,
      lastCheckedAt: null,
    });
    expect(changes).toBe(0);
  });

  it('stop() closes the provider and ignores a tunnel event that arrives afterwards', async () => {
    const provider = new ScriptedProvider([`http://127.0.0.1:${receiver.port}`]);
    const supervisor = supervise(provider);
    const reachable = waitForEvent<TunnelStatus>(supervisor, 'status', (s) => s.state === 'reachable');
    supervisor.start();
    await reachable;
    await supervisor.stop();
    expect(provider.closes).toBe(1);
    let after = 0;
    supervisor.on('status', () => after++);
    supervisor.on('reconnect-scheduled', () => after++);
    provider.emit('closed', 'late');
    supervisor.checkNow();
    expect(after).toBe(0);
    expect(supervisor.status.state).toBe('off');
  });
});
