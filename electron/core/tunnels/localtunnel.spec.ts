import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TunnelSupervisor } from './supervisor.js';
import type { ReconnectScheduled, UrlChange } from './supervisor.js';
import { tunnelRequest } from './http.js';
import { LocalTunnel, normalizeLocaltunnelHost } from './localtunnel.js';
import { AutoRegistrar, readRegistration } from './register.js';
import { startTestLocaltunnelServer } from '../../../tests/support/tunnels/localtunnel-server.js';
import type { TestLocaltunnelServer } from '../../../tests/support/tunnels/localtunnel-server.js';
import { startTestReceiver, supervisedReceiver, waitForEvent } from '../../../tests/support/tunnels/receiver.js';
import type { ReceivedHook, TestReceiver } from '../../../tests/support/tunnels/receiver.js';
import { TunnelError } from './types.js';
import type { TunnelStatus } from './types.js';

const TOKEN = 'tok3n-abc';
const NONCE = 'instance-1';

let receiver: TestReceiver;
let server: TestLocaltunnelServer;
let stateDir: string;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  receiver = await startTestReceiver({ token: TOKEN, id: NONCE });
  server = await startTestLocaltunnelServer();
  stateDir = await mkdtemp(join(tmpdir(), 'tally-lt-'));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server.close();
  await receiver.close();
  await rm(stateDir, { recursive: true, force: true });
});

function supervise(provider: LocalTunnel): TunnelSupervisor {
  const supervisor = new TunnelSupervisor({
    provider,
    ...supervisedReceiver(receiver),
    expectedId: NONCE,
    checkIntervalMs: 60_000,
    retryCheckIntervalMs: 20,
    maxFailedChecks: 2,
    backoff: { baseMs: 5, maxMs: 50 },
    random: () => 0.5,
    connectTo: server.connectTo,
  });
  cleanups.push(() => supervisor.stop());
  return supervisor;
}

const reachable = (s: TunnelStatus): boolean => s.state === 'reachable';

describe('localtunnel end to end through a self-hosted localtunnel-server on loopback', () => {
  it('forwards public requests to the receiver, reconnects after the server drops the tunnel, and registers each new URL once', async () => {
    const calls: string[] = [];
    const registrar = new AutoRegistrar({
      api: { setRecordHook: async (url) => void calls.push(url) },
      stateDir,
      enabled: true,
      scope: 'svc-1',
    });
    const supervisor = supervise(new LocalTunnel({ host: server.url }));
    cleanups.push(async () => registrar.idle());
    registrar.attach(supervisor);
    const changes: UrlChange[] = [];
    supervisor.on('url-changed', (change) => changes.push(change));

    const firstReachable = waitForEvent<TunnelStatus>(supervisor, 'status', reachable);
    supervisor.start();
    const first = await firstReachable;

    const firstId = server.ids[0];
    expect(firstId).toBeDefined();
    expect(supervisor.publicBaseUrl).toBe(`http://${firstId}.lt.test`);
    expect(first.publicUrl).toBe(`http://${firstId}.lt.test/hooks/${TOKEN}`);
    expect(first.localUrl).toBe(receiver.localUrl);
    expect(first.lastCheckedAt).not.toBeNull();
    expect(changes).toEqual([{ previous: null, current: first.publicUrl, publicBaseUrl: `http://${firstId}.lt.test` }]);

    // A webhook sent to the public URL arrives at the local receiver with its path and body.
    const arrived = waitForEvent<ReceivedHook>(receiver.events, 'hook');
    const response = await tunnelRequest(`${first.publicUrl}?source=test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"id":"ch-1","url":"https://example.invalid/ch-1.mp4"}',
      connectTo: server.connectTo,
    });
    expect(response.status).toBe(200);
    const hook = await arrived;
    expect(hook).toMatchObject({
      method: 'POST',
      path: `/hooks/${TOKEN}?source=test`,
      body: '{"id":"ch-1","url":"https://example.invalid/ch-1.mp4"}',
    });

    await registrar.idle();
    expect(calls).toEqual([first.publicUrl]);
    expect(supervisor.status.registered).toBe(true);

    // The server drops every tunnel socket and port: the client must get a brand-new tunnel.
    const scheduled = waitForEvent<ReconnectScheduled>(supervisor, 'reconnect-scheduled');
    const changed = waitForEvent<UrlChange>(supervisor, 'url-changed');
    const againReachable = waitForEvent<TunnelStatus>(
      supervisor,
      'status',
      (s) => reachable(s) && s.publicUrl !== first.publicUrl,
    );
    server.dropTunnels();
    expect((await scheduled).reason).toMatch(/^Tunnel failed: The localtunnel connection failed: connection refused/);
    const change = await changed;
    const second = await againReachable;
    const secondId = server.ids.at(-1);
    expect(secondId).not.toBe(firstId);
    expect(change).toEqual({
      previous: first.publicUrl,
      current: `http://${secondId}.lt.test/hooks/${TOKEN}`,
      publicBaseUrl: `http://${secondId}.lt.test`,
    });
    expect(second.publicUrl).toBe(change.current);

    await registrar.idle();
    expect(calls).toEqual([first.publicUrl, second.publicUrl]);
    expect((await readRegistration(stateDir))?.url).toBe(second.publicUrl);

    // Still forwarding after the reconnect.
    const again = waitForEvent<ReceivedHook>(receiver.events, 'hook');
    await tunnelRequest(second.publicUrl ?? '', { method: 'POST', body: 'x=1', connectTo: server.connectTo });
    expect((await again).body).toBe('x=1');

    await supervisor.stop();
    expect(supervisor.status.state).toBe('off');
    expect(calls).toHaveLength(2);
  });

  it('relays a binary request body byte for byte, straight to the configured host', async () => {
    // A receiver that answers with the SHA-256 of the body it got.
    const echo = createServer((request, response) => {
      const hash = createHash('sha256');
      request.on('data', (chunk: Buffer) => hash.update(chunk));
      request.on('end', () => response.end(hash.digest('hex')));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => echo.close(() => resolve())));
    const port = (echo.address() as AddressInfo).port;
    const provider = new LocalTunnel({ host: server.url });
    cleanups.push(() => provider.close());
    const { publicBaseUrl } = await provider.open({ host: '127.0.0.1', port });

    // Bytes that are not UTF-8 (an audio upload's), in the request's first chunk, after a Host-like line.
    const body = Buffer.concat([Buffer.from('\r\nHost: elsewhere\r\n'), Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3])]);
    const response = await tunnelRequest(`${publicBaseUrl}/uploads/x`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body,
      connectTo: server.connectTo,
    });
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe(createHash('sha256').update(body).digest('hex'));
  });

  it('rejects a server that does not speak the localtunnel protocol, without retrying forever', async () => {
    // The receiver answers 404 to GET /?new.
    const provider = new LocalTunnel({ host: `http://127.0.0.1:${receiver.port}` });
    await expect(provider.open({ host: receiver.host, port: receiver.port })).rejects.toThrow(/answered 404/);
    await provider.close();
  });

  it('fails fast with a TunnelError when the server is down', async () => {
    const provider = new LocalTunnel({ host: server.url });
    await server.close();
    const error = await provider.open({ host: receiver.host, port: receiver.port }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TunnelError);
    expect((error as Error).message).toMatch(
      /Could not reach the localtunnel server at http:\/\/127\.0\.0\.1:\d+: connection refused/,
    );
    server = await startTestLocaltunnelServer();
  });

  it('stops opening when aborted', async () => {
    const provider = new LocalTunnel({ host: server.url });
    const abort = new AbortController();
    abort.abort();
    await expect(provider.open({ host: receiver.host, port: receiver.port }, abort.signal)).rejects.toThrow(/abort/i);
  });

  it('validates the server setting', () => {
    expect(normalizeLocaltunnelHost('https://lt.example.com/')).toBe('https://lt.example.com');
    expect(() => normalizeLocaltunnelHost('ftp://lt.example.com')).toThrow(/https:\/\/ or http:\/\//);
    expect(() => normalizeLocaltunnelHost('https://user:pw@lt.example.com')).toThrow(/user name/);
    expect(() => normalizeLocaltunnelHost('not a url')).toThrow(/not a localtunnel server URL/);
    expect(new LocalTunnel().host).toBe('https://localtunnel.me');
  });
});
