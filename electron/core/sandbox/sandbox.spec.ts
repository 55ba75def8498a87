import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxClosedError, startSandbox, type BroadcastInfo, type Sandbox } from './index.js';
import { rawRequest, startReceiver } from '../../../tests/support/sandbox/http-helpers.js';
import { DEMO_CHANNEL_NAMES } from './simulation.js';

const open: Sandbox[] = [];

async function start(...args: Parameters<typeof startSandbox>): Promise<Sandbox> {
  const s = await startSandbox(...args);
  open.push(s);
  return s;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function resourceCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

describe('startSandbox', () => {
  it('reports its endpoints, download origin and credentials', async () => {
    const s = await start({ serviceId: 'svc', secret: 'sec' });
    expect(s.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.downloadOrigin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.downloadOrigin).not.toBe(s.apiUrl);
    expect(s.endpoints).toEqual({
      baseUrl: s.apiUrl,
      consoleApiUrl: `${s.apiUrl}/console`,
      adminUrl: `${s.apiUrl}/admin`,
    });
    expect(s.credentials).toEqual({ serviceId: 'svc', secret: 'sec' });
    expect(s.control.webhookUrl).toBeNull();
    expect(s.control.recordingEnabled).toBe(true);
  });

  it('refuses bad options before listening', async () => {
    await expect(startSandbox({ timeFactor: 0 })).rejects.toThrow(RangeError);
    await expect(startSandbox({ webhookUrl: 'not a url' })).rejects.toThrow(TypeError);
    await expect(startSandbox({ searchLimit: 0 })).rejects.toThrow(RangeError);
    await expect(startSandbox({ port: 70000 })).rejects.toThrow(RangeError);
    await expect(startSandbox({ secret: '' })).rejects.toThrow(TypeError);
  });

  it('fails cleanly when its port is taken', async () => {
    const first = await start();
    const port = Number(new URL(first.apiUrl).port);
    await expect(startSandbox({ port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('refuses duplicate channel IDs and unknown IDs in control calls', async () => {
    const s = await start();
    s.control.startBroadcast({ id: 'same' });
    expect(() => s.control.startBroadcast({ id: 'same' })).toThrow(/already exists/);
    expect(() =>
      s.control.addEndedChannels([{ id: 'same', createdAt: new Date(), endedAt: new Date(), peerCount: 0 }]),
    ).toThrow(/already exists/);
    expect(() => s.control.startBroadcast({ id: '' })).toThrow(TypeError);
    await expect(s.control.endBroadcast('missing')).rejects.toThrow(/no live broadcast/);
    expect(() => s.control.expireRecording('missing')).toThrow(/no recording/);
  });

  it('closes both servers, keep-alive sockets and timers; close is idempotent', async () => {
    const before = resourceCounts();
    const s = await startSandbox({ demo: true, timeFactor: 10, seed: 1 });
    s.control.startBroadcast({ id: 'k', recordingBytes: 20_000 });
    const rec = await s.control.endBroadcast('k');
    // Hold a keep-alive connection open across close().
    const agentReq = request(rec?.url as string, { headers: { Connection: 'keep-alive' } });
    const [res] = (await once(agentReq.end(), 'response')) as [IncomingMessage];
    res.resume();
    await once(res, 'end');
    const socketClosed = once(agentReq.socket as Socket, 'close');
    await Promise.all([s.close(), s.close()]);
    await socketClosed;
    const after = resourceCounts();
    for (const kind of ['TCPServerWrap', 'TCPSocketWrap', 'Timeout']) {
      expect(after[kind] ?? 0, kind).toBeLessThanOrEqual(before[kind] ?? 0);
    }
    await expect(rawRequest(`${s.apiUrl}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(rawRequest(`${s.downloadOrigin}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('aborts a long md5 computation on close and rejects the pending end', async () => {
    const s = await start();
    s.control.startBroadcast({ id: 'huge', recordingBytes: 8 * 1024 ** 3 });
    const ending = s.control.endBroadcast('huge');
    await s.close();
    await expect(ending).rejects.toThrow();
  });

  it('re-arms pending expiries when the time factor changes', async () => {
    const receiver = await startReceiver();
    try {
      const s = await start({ webhookUrl: receiver.url });
      s.control.startBroadcast({ id: 'slow', recordingBytes: 20_000 });
      const rec = await s.control.endBroadcast('slow');
      expect((rec?.expiresAt.getTime() ?? 0) - Date.now()).toBeGreaterThan(5 * 3600_000);
      const expired = once(s.control.events, 'recording:expired');
      s.control.setTimeFactor(10_000_000);
      await expired;
      expect(s.control.getRecording('slow')?.expired).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it('emits a request event for service and download calls, not for the control API', async () => {
    const s = await start();
    const seen: unknown[] = [];
    s.control.events.on('request', (r) => seen.push(r));
    await rawRequest(`${s.apiUrl}/_sandbox/broadcasts`);
    await rawRequest(`${s.apiUrl}/lambda/broadcast-channel-list`, { method: 'POST' });
    await rawRequest(`${s.downloadOrigin}/x/y/z.mp4`);
    await rawRequest(`${s.downloadOrigin}/x/y/z.mp4`, { headers: { range: 'bytes=10-' } });
    expect(seen).toEqual([
      { method: 'POST', path: '/lambda/broadcast-channel-list', target: 'api', range: null },
      { method: 'GET', path: '/x/y/z.mp4', target: 'download', range: null },
      { method: 'GET', path: '/x/y/z.mp4', target: 'download', range: 'bytes=10-' },
    ]);
  });

  it('rejects endBroadcast with SandboxClosedError when closed during the webhook delay', async () => {
    const receiver = await startReceiver();
    try {
      const s = await start({ webhookUrl: receiver.url, webhookDelayMs: 3_600_000 });
      s.control.startBroadcast({ id: 'd', recordingBytes: 20_000 });
      const published = once(s.control.events, 'recording');
      const ending = s.control.endBroadcast('d');
      await published;
      await s.close();
      await expect(ending).rejects.toBeInstanceOf(SandboxClosedError);
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });
});

describe('demo simulation', () => {
  it('seeds history and keeps broadcasts starting, ending and recording on their own', async () => {
    const s = await start({ demo: true, timeFactor: 20_000, seed: 12 });
    expect(s.control.listBroadcasts({ state: 'ended' }).length).toBeGreaterThanOrEqual(40);
    const live = s.control.listBroadcasts({ state: 'live' });
    expect(live.length).toBeGreaterThanOrEqual(2);
    const ended = new Set<string>();
    const started: string[] = [];
    s.control.events.on('broadcast:end', (b: BroadcastInfo) => ended.add(b.id));
    s.control.events.on('broadcast:start', (b: BroadcastInfo) => started.push(b.id));
    // Every initial broadcast ends and is replaced within minutes of virtual time.
    await new Promise<void>((resolve) => {
      s.control.events.on('broadcast:start', () => {
        if (live.every((b) => ended.has(b.id)) && started.length >= live.length) resolve();
      });
    });
    expect(live.some((b) => b.record && s.control.getRecording(b.id) !== undefined)).toBe(true);
  });

  it('records the broadcast that ends first, whatever the seed, so the first recording comes within minutes', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const s = await start({ demo: true, seed });
      const first = s.control.listBroadcasts({ state: 'live' })[0];
      expect(first?.record, `seed ${seed}`).toBe(true);
    }
  });

  it('names channels like a studio day, never twice', async () => {
    const s = await start({ demo: true, seed: 5 });
    const ids = s.control.listBroadcasts().map((b) => b.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(DEMO_CHANNEL_NAMES.some((name) => id === name || id.startsWith(`${name}-`))).toBe(true);
      expect(id).toMatch(/^[a-z0-9-]+$/);
    }
  });

  it('is the same run for the same seed', async () => {
    const a = await start({ demo: true, seed: 99 });
    const b = await start({ demo: true, seed: 99 });
    const shape = (s: Sandbox) =>
      s.control.listBroadcasts().map((x) => ({ id: x.id, record: x.record, peers: x.peerCount }));
    expect(shape(a)).toEqual(shape(b));
    const c = await start({ demo: true, seed: 100 });
    expect(shape(c)).not.toEqual(shape(a));
  });
});
