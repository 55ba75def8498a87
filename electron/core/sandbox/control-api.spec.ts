import { afterEach, describe, expect, it } from 'vitest';
import { isLoopback } from './control-api.js';
import { startSandbox, type Sandbox } from './index.js';
import { postJson, rawRequest, startReceiver, type Receiver } from '../../../tests/support/sandbox/http-helpers.js';

let sandbox: Sandbox | null = null;
let receiver: Receiver | null = null;

afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
  sandbox = null;
  receiver = null;
});

const call = (s: Sandbox, method: string, path: string, body?: unknown) =>
  postJson(`${s.apiUrl}/_sandbox${path}`, body, { method });

describe('control HTTP API', () => {
  it('starts, lists and ends broadcasts', async () => {
    sandbox = await startSandbox({ seed: 4 });
    const s = sandbox;
    const started = await call(s, 'POST', '/broadcasts', {
      id: 'ctl/1',
      watchers: 3,
      recordingBytes: 30_000,
      createdAt: '2024-06-01T00:00:00.000Z',
    });
    expect(started.status).toBe(201);
    expect(started.json).toEqual({
      id: 'ctl/1',
      serviceId: 'sandbox-service',
      createdAt: '2024-06-01T00:00:00.000Z',
      endedAt: null,
      watchers: 3,
      peerCount: 4,
      record: true,
    });
    expect((await call(s, 'POST', '/broadcasts', { id: 'ctl/1' })).status).toBe(409);
    expect((await call(s, 'POST', '/broadcasts', { id: 5 })).status).toBe(400);

    const live = await call(s, 'GET', '/broadcasts?state=live');
    expect((live.json as Array<{ id: string }>).map((b) => b.id)).toEqual(['ctl/1']);

    const watchers = await call(s, 'PUT', `/broadcasts/${encodeURIComponent('ctl/1')}/watchers`, { watchers: 10 });
    expect(watchers.json).toMatchObject({ watchers: 10, peerCount: 11 });

    const ended = await call(s, 'POST', `/broadcasts/${encodeURIComponent('ctl/1')}/end`, { sendWebhook: false });
    expect(ended.status).toBe(200);
    const { recording } = ended.json as { recording: { url: string; size: number; md5: string; expired: boolean } };
    expect(recording).toMatchObject({ size: 30_000, expired: false });
    expect(recording.md5).toMatch(/^[0-9a-f]{32}$/);
    expect((await rawRequest(recording.url)).body.length).toBe(30_000);
    expect((await call(s, 'POST', `/broadcasts/${encodeURIComponent('ctl/1')}/end`)).status).toBe(404);
    expect((await call(s, 'GET', '/broadcasts?state=ended')).json).toMatchObject([{ id: 'ctl/1', peerCount: 11 }]);
    expect((await call(s, 'GET', '/broadcasts?state=odd')).status).toBe(400);
  });

  it('reads, expires and re-sends recordings; reads the webhook log', async () => {
    receiver = await startReceiver();
    sandbox = await startSandbox({ seed: 4 });
    const s = sandbox;
    const hook = await call(s, 'PUT', '/webhook', { url: receiver.url, shape: 'get' });
    expect(hook.json).toEqual({ shape: 'get', url: receiver.url });
    s.control.startBroadcast({ id: 'r1', recordingBytes: 20_000 });
    await s.control.endBroadcast('r1');
    expect((await receiver.next()).method).toBe('GET');

    const info = await call(s, 'GET', '/recordings/r1?sha256=1');
    expect(info.json).toMatchObject({
      channelId: 'r1',
      size: 20_000,
      sha256: await s.control.getRecording('r1')?.sha256(),
    });
    expect((await call(s, 'GET', '/recordings/none')).status).toBe(404);

    const resent = await call(s, 'POST', '/recordings/r1/resend', { shape: 'json' });
    expect(resent.json).toMatchObject({ channelId: 'r1', shape: 'json', status: 200 });
    expect((await receiver.next()).method).toBe('POST');
    const log = await call(s, 'GET', '/webhooks');
    expect((log.json as Array<{ shape: string }>).map((d) => d.shape)).toEqual(['get', 'json']);

    const expired = await call(s, 'POST', '/recordings/r1/expire');
    expect(expired.json).toMatchObject({ channelId: 'r1', expired: true });
    expect((await rawRequest(s.control.getRecording('r1')?.url as string)).status).toBe(404);
  });

  it('sets faults, speed, recording and seeds ended channels', async () => {
    sandbox = await startSandbox();
    const s = sandbox;
    const set = await call(s, 'PUT', '/faults/download', { status: 500, times: 2 });
    expect(set.json).toEqual({ target: 'download', faults: { status: 500, times: 2 } });
    expect(s.control.getFaults('download')).toEqual({ status: 500, times: 2 });
    expect((await call(s, 'GET', '/faults/download')).json).toEqual({
      target: 'download',
      faults: { status: 500, times: 2 },
    });
    expect((await call(s, 'PUT', '/faults/download', { status: 'x' })).status).toBe(400);
    expect((await call(s, 'PUT', '/faults/elsewhere', {})).status).toBe(404);
    expect((await call(s, 'PUT', '/faults/download', null)).json).toEqual({ target: 'download', faults: null });

    expect((await call(s, 'PUT', '/speed', { timeFactor: 60 })).json).toEqual({ timeFactor: 60 });
    expect(s.control.timeFactor).toBe(60);
    expect((await call(s, 'PUT', '/speed', { timeFactor: 0 })).status).toBe(400);

    // The service's clock: read, and moved ahead (never back).
    const nowOf = (answer: { json: unknown }) => Date.parse((answer.json as { now: string }).now);
    const clock = nowOf(await call(s, 'GET', '/time'));
    expect(Math.abs(clock - Date.now())).toBeLessThan(1_000);
    const moved = nowOf(await call(s, 'POST', '/time', { advanceMs: 3_600_000 }));
    expect(moved - clock).toBeGreaterThanOrEqual(3_600_000);
    expect(Math.abs(s.control.now().getTime() - moved)).toBeLessThan(1_000);
    expect((await call(s, 'POST', '/time', { advanceMs: -1 })).status).toBe(400);

    expect((await call(s, 'PUT', '/recording', { enabled: false })).json).toEqual({ enabled: false });
    expect(s.control.recordingEnabled).toBe(false);

    const seeded = await call(s, 'POST', '/channels', {
      items: [{ id: 'old', createdAt: '2024-01-01T00:00:00Z', endedAt: '2024-01-01T01:00:00Z', peerCount: 2 }],
    });
    expect(seeded.status).toBe(201);
    expect(s.control.listBroadcasts({ state: 'ended' })).toMatchObject([{ id: 'old', peerCount: 2 }]);

    const summary = await call(s, 'GET', '');
    expect(summary.json).toMatchObject({ serviceId: 'sandbox-service', timeFactor: 60, recordingEnabled: false });
    expect(summary.text).not.toContain('sandbox-secret');
  });

  it('answers 404 and 405 for unknown control calls, and 400 for bad JSON', async () => {
    sandbox = await startSandbox();
    const s = sandbox;
    expect((await call(s, 'GET', '/nope')).status).toBe(404);
    const wrong = await call(s, 'DELETE', '/broadcasts');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, POST');
    expect((await call(s, 'PUT', '/speed', '{')).json).toEqual({
      error: 'bad_request',
      message: 'the body is not valid JSON',
    });
  });

  it('recognises loopback callers only', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('127.8.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopback('10.0.0.2')).toBe(false);
    expect(isLoopback('::ffff:10.0.0.2')).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
  });
});
