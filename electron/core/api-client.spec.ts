/**
 * ChannelApi over real HTTP: against the sandbox emulator for every endpoint and fault switch, and
 * against tiny purpose-built servers for answers the sandbox never gives (send:false, echoed secrets,
 * error texts in 200 bodies, liberal shapes).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChannelApi, parseLiveList, parseSearch, summarizeBody } from './api-client.js';
import type { ChannelApiOptions } from './api-client.js';
import type { Endpoints } from './endpoints.js';
import {
  BadCredentialsError,
  ChannelNotEndedError,
  NetworkError,
  ResponseShapeError,
  ServiceError,
  TimeoutError,
  UnknownChannelError,
  ValidationError,
} from './errors.js';
import type { TallyError } from './errors.js';
import { startSandbox } from './sandbox/index.js';

const SECRET = 'S3cr3t-never-print-me-7f3a';
const WRONG_SECRET = 'Wr0ng-secret-also-private-91c2';

/** Every way an error object could be shown: none of them may contain the secret. */
function expectNoSecret(error: unknown, ...secrets: string[]): void {
  const views = [
    JSON.stringify(error),
    inspect(error, { depth: Infinity, showHidden: true }),
    String(error),
    error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : '',
    error instanceof Error && error.cause !== undefined ? inspect(error.cause, { depth: Infinity }) : '',
  ];
  for (const secret of secrets) for (const view of views) expect(view).not.toContain(secret);
  if (error instanceof Error) expect(error.cause).toBeUndefined();
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

// -----------------------------------------------------------------------------------------------------
describe('against the sandbox', () => {
  let sb: Awaited<ReturnType<typeof startSandbox>>;
  const thrown: unknown[] = [];
  const api = (over: Partial<ChannelApiOptions> = {}) =>
    new ChannelApi({
      endpoints: sb.endpoints,
      credentials: { serviceId: sb.credentials.serviceId, secret: SECRET },
      retryBaseMs: 1,
      timeoutMs: 2_000,
      ...over,
    });
  const fail = async (promise: Promise<unknown>) => {
    const error = await caught(promise);
    thrown.push(error);
    return error;
  };

  beforeAll(async () => {
    sb = await startSandbox({ searchIndexDelayMs: 0, seed: 1, searchLimit: 1000, secret: SECRET });
  });
  afterEach(() => {
    sb.control.setFaults('api', null);
  });
  afterAll(async () => {
    await sb.close();
    // Whatever went wrong in this block, no error carried the secret.
    expect(thrown.length).toBeGreaterThan(8);
    for (const error of thrown) expectNoSecret(error, SECRET, WRONG_SECRET);
  });

  it('lists live channels normalised into Channel', async () => {
    const a = sb.control.startBroadcast({ id: 'live-a', watchers: 4 });
    sb.control.startBroadcast({ id: 'live-b', watchers: 0 });
    const live = await api().listLive();
    const byId = new Map(live.map((c) => [c.id, c]));
    const channel = byId.get('live-a');
    expect(channel).toEqual({
      id: 'live-a',
      serviceId: sb.credentials.serviceId,
      state: 'live',
      createdAt: expect.any(Date),
      endedAt: null,
      watchers: 4,
      cumulativeSessions: null,
    });
    expect(Math.abs((channel?.createdAt.getTime() ?? 0) - a.createdAt.getTime())).toBeLessThan(1000);
    expect(byId.get('live-b')?.watchers).toBe(0);
    expect(await api().testConnection()).toEqual({ ok: true, liveCount: live.length });
  });

  it('ends a live channel, which then leaves the live list and shows in search as ended', async () => {
    sb.control.startBroadcast({ id: 'to-end', watchers: 2 });
    const client = api();
    await client.endChannel('to-end');
    expect((await client.listLive()).some((c) => c.id === 'to-end')).toBe(false);
    const result = await client.search({
      since: new Date(Date.now() - 3_600_000),
      until: new Date(),
      keyword: 'to-end',
    });
    const ended = result.channels.find((c) => c.id === 'to-end');
    expect(ended?.state).toBe('ended');
    expect(ended?.endedAt).toBeInstanceOf(Date);
    expect(ended?.watchers).toBeNull();
    expect(typeof ended?.cumulativeSessions).toBe('number');
  });

  it('searches with the keyword and returns ended channels newest first', async () => {
    const base = Date.now() - 2 * 3_600_000;
    sb.control.addEndedChannels([
      { id: 'kw-old', createdAt: new Date(base), endedAt: new Date(base + 60_000), peerCount: 3 },
      { id: 'kw-new', createdAt: new Date(base + 600_000), endedAt: new Date(base + 900_000), peerCount: 5 },
      { id: 'other', createdAt: new Date(base + 700_000), endedAt: new Date(base + 800_000), peerCount: 1 },
    ]);
    const result = await api().search({ since: new Date(base - 1000), until: new Date(), keyword: 'kw-' });
    expect(result.channels.map((c) => c.id)).toEqual(['kw-new', 'kw-old']);
    expect(result.totalCount).toBe(2);
    expect(result.truncated).toBe(false);
    expect(result.channels[1]).toEqual({
      id: 'kw-old',
      serviceId: null,
      state: 'ended',
      createdAt: new Date(Math.floor(base / 1000) * 1000),
      endedAt: new Date(Math.floor((base + 60_000) / 1000) * 1000),
      watchers: null,
      cumulativeSessions: 3,
    });
  });

  it('splits a search whose answer is capped and merges every channel exactly once', async () => {
    const now = Date.now();
    const items = Array.from({ length: 5_500 }, (_, i) => {
      const createdAt = new Date(now - 6 * 86_400_000 + i * 90_000);
      return { id: `bulk-${i}`, createdAt, endedAt: new Date(createdAt.getTime() + 45 * 60_000), peerCount: i % 7 };
    });
    sb.control.addEndedChannels(items);
    let requests = 0;
    const onRequest = (e: { path: string }) => {
      if (e.path.endsWith('/v1/search')) requests += 1;
    };
    sb.control.events.on('request', onRequest);
    const result = await api().search({
      since: new Date(now - 7 * 86_400_000),
      until: new Date(now),
      keyword: 'bulk-',
    });
    sb.control.events.off('request', onRequest);
    expect(result.totalCount).toBe(5_500);
    expect(result.channels).toHaveLength(5_500);
    expect(result.truncated).toBe(false);
    expect(new Set(result.channels.map((c) => c.id)).size).toBe(5_500);
    for (let i = 1; i < result.channels.length; i++) {
      expect(result.channels[i - 1]!.createdAt.getTime()).toBeGreaterThanOrEqual(
        result.channels[i]!.createdAt.getTime(),
      );
    }
    expect(requests).toBeGreaterThan(5);
    expect(requests).toBeLessThan(40);
  });

  it('reports truncated when even a one-second range holds more than the cap', async () => {
    const second = new Date(Math.floor(Date.now() / 1000) * 1000 - 3 * 3_600_000);
    sb.control.addEndedChannels(
      Array.from({ length: 1_200 }, (_, i) => ({
        id: `same-second-${i}`,
        createdAt: second,
        endedAt: second,
        peerCount: 1,
      })),
    );
    const result = await api().search({
      since: new Date(second.getTime() - 86_400_000),
      until: new Date(),
      keyword: 'same-second-',
    });
    expect(result.totalCount).toBe(1_200);
    expect(result.channels).toHaveLength(1_000);
    expect(result.truncated).toBe(true);
  });

  it('maps wrong credentials to BadCredentialsError on every endpoint', async () => {
    const bad = api({ credentials: { serviceId: sb.credentials.serviceId, secret: WRONG_SECRET } });
    const day = { since: new Date(Date.now() - 86_400_000), until: new Date() };
    for (const call of [
      () => bad.listLive(),
      () => bad.search(day),
      () => bad.endChannel('whatever'),
      () => bad.setRecordHook('https://hooks.example.com/x'),
      () => bad.setServerRecording(true),
    ]) {
      expect(await fail(call())).toBeInstanceOf(BadCredentialsError);
    }
  });

  it('maps an unknown channel on termination to UnknownChannelError', async () => {
    const error = await fail(api().endChannel('no-such-channel'));
    expect(error).toBeInstanceOf(UnknownChannelError);
    expect((error as UnknownChannelError).channelId).toBe('no-such-channel');
  });

  it('sets the record hook and server recording through the admin API', async () => {
    await api().setRecordHook('https://hooks.example.com/tally');
    expect(sb.control.webhookUrl).toBe('https://hooks.example.com/tally');
    await api().setServerRecording(false);
    expect(sb.control.recordingEnabled).toBe(false);
    await api().setServerRecording(true);
    expect(sb.control.recordingEnabled).toBe(true);
    await expect(api().setRecordHook('ftp://nope')).rejects.toBeInstanceOf(ValidationError);
  });

  it('times out a slow answer, retrying reads each time', async () => {
    sb.control.setFaults('api', { delayMs: 1_000 });
    let requests = 0;
    const onRequest = () => (requests += 1);
    sb.control.events.on('request', onRequest);
    const error = await fail(api({ timeoutMs: 100, retries: 1 }).listLive());
    sb.control.events.off('request', onRequest);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(100);
    expect(requests).toBe(2);
  });

  it('does not resend a termination that timed out', async () => {
    sb.control.startBroadcast({ id: 'slow-end' });
    sb.control.setFaults('api', { delayMs: 1_000, path: '/lambda/channel-force-termination' });
    let requests = 0;
    const onRequest = (e: { path: string }) => {
      if (e.path.includes('termination')) requests += 1;
    };
    sb.control.events.on('request', onRequest);
    expect(await fail(api({ timeoutMs: 100, retries: 3 }).endChannel('slow-end'))).toBeInstanceOf(TimeoutError);
    sb.control.events.off('request', onRequest);
    expect(requests).toBe(1);
  });

  it('retries 5xx on reads until the fault clears', async () => {
    sb.control.setFaults('api', { status: 503, times: 2 });
    const live = await api({ retries: 3 }).listLive();
    expect(Array.isArray(live)).toBe(true);
    sb.control.setFaults('api', { status: 500, times: 2, html: true });
    const result = await api({ retries: 2 }).search({ since: new Date(Date.now() - 60_000), until: new Date() });
    expect(result.truncated).toBe(false);
  });

  it('gives up on 5xx after the retries, with a ServiceError', async () => {
    sb.control.setFaults('api', { status: 502, times: 3 });
    const error = await fail(api({ retries: 2 }).listLive());
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).status).toBe(502);
    expect((error as ServiceError).bodySnippet).toContain('sandbox fault injection');
  });

  it('does not retry a 5xx on termination', async () => {
    sb.control.startBroadcast({ id: 'end-500' });
    sb.control.setFaults('api', { status: 500, times: 1 });
    const error = await fail(api({ retries: 3 }).endChannel('end-500'));
    expect(error).toBeInstanceOf(ServiceError);
    // The fault was used once; the channel is still live because nothing was resent.
    expect(sb.control.getFaults('api')).toBeNull();
    expect(sb.control.listBroadcasts({ state: 'live' }).some((b) => b.id === 'end-500')).toBe(true);
  });

  it('summarises an HTML error page to its title, never the markup', async () => {
    sb.control.setFaults('api', { status: 502, html: true });
    const error = await fail(api({ retries: 0 }).listLive());
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).bodySnippet).toBe('HTML page "502 Bad Gateway"');
    expect((error as Error).message).not.toMatch(/<|>/);
  });

  it('treats a 200 HTML page (captive portal) as a shape error', async () => {
    sb.control.setFaults('api', { html: true });
    const error = await fail(api({ retries: 0 }).listLive());
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect((error as Error).message).toContain('Sign in to continue');
    expect((error as Error).message).not.toMatch(/<\w/);
  });

  it('handles empty bodies with and without an error status', async () => {
    sb.control.setFaults('api', { emptyBody: true });
    expect(await fail(api({ retries: 0 }).listLive())).toBeInstanceOf(ResponseShapeError);
    sb.control.setFaults('api', { emptyBody: true, status: 500 });
    const error = await fail(api({ retries: 0 }).listLive());
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as Error).message).toMatch(/empty body/);
  });

  it('reports a connection dropped mid-body as a NetworkError, and a retried read recovers', async () => {
    sb.control.startBroadcast({ id: 'reset-target' });
    sb.control.setFaults('api', { resetAfterBytes: 5 });
    expect(await fail(api({ retries: 0 }).listLive())).toBeInstanceOf(NetworkError);
    sb.control.setFaults('api', { resetAfterBytes: 5, times: 1 });
    expect((await api({ retries: 1 }).listLive()).some((c) => c.id === 'reset-target')).toBe(true);
  });

  it('reports a body shorter than its Content-Length as a NetworkError, and retries reads', async () => {
    sb.control.setFaults('api', { wrongContentLength: true });
    const error = await fail(api({ retries: 0 }).listLive());
    expect(error).toBeInstanceOf(NetworkError);
    sb.control.setFaults('api', { wrongContentLength: true, times: 2 });
    expect(Array.isArray(await api({ retries: 2 }).listLive())).toBe(true);
  });

  it('maps an injected 401 and 403 to BadCredentialsError without retrying', async () => {
    for (const status of [401, 403]) {
      sb.control.setFaults('api', { status, times: 1 });
      expect(await fail(api({ retries: 3 }).listLive())).toBeInstanceOf(BadCredentialsError);
      expect(sb.control.getFaults('api')).toBeNull();
    }
  });

  it('reports a refused connection as a NetworkError naming the host', async () => {
    const dead = await closedPort();
    const endpoints: Endpoints = { baseUrl: dead, consoleApiUrl: dead, adminUrl: dead };
    const error = await fail(api({ endpoints, retries: 1 }).listLive());
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toContain(`connection refused by ${new URL(dead).host}`);
  });

  it('stops at once when aborted, with the abort reason', async () => {
    sb.control.setFaults('api', { delayMs: 5_000 });
    const controller = new AbortController();
    const started = new Promise<void>((resolve) => sb.control.events.once('request', () => resolve()));
    const pending = api({ signal: controller.signal }).listLive();
    await started;
    controller.abort();
    const error = await caught(pending);
    expect((error as Error).name).toBe('AbortError');
    await expect(api().listLive({ signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  });
});

// -----------------------------------------------------------------------------------------------------
// Purpose-built servers for answers the sandbox does not give.

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

async function serve(
  handler: (req: Seen, res: ServerResponse) => void,
): Promise<{ url: string; seen: Seen[]; server: Server; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(entry);
      handler(entry, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

async function closedPort(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

function clientFor(url: string, over: Partial<ChannelApiOptions> = {}): ChannelApi {
  return new ChannelApi({
    endpoints: { baseUrl: url, consoleApiUrl: url, adminUrl: url },
    credentials: { serviceId: 'svc', secret: SECRET },
    retryBaseMs: 1,
    timeoutMs: 2_000,
    ...over,
  });
}

describe('against purpose-built servers', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((c) => c()));
  });
  const start = async (handler: (req: Seen, res: ServerResponse) => void) => {
    const s = await serve(handler);
    closers.push(s.close);
    return s;
  };

  it('sends the documented request shapes', async () => {
    const s = await start((req, res) => {
      if (req.url === '/lambda/broadcast-channel-list') return json(res, 200, []);
      if (req.url === '/v1/search') return json(res, 200, { startTime: 1, currentTime: 2, totalCount: 0, items: [] });
      if (req.url === '/lambda/channel-force-termination') return json(res, 200, { send: true });
      return json(res, 200, { ok: true });
    });
    const client = clientFor(s.url, { userAgent: 'Tally-test' });
    await client.listLive();
    await client.search({ since: new Date(1_700_000_000_500), until: new Date(1_700_003_600_200) });
    await client.endChannel('ch/1');
    await client.setRecordHook('https://hooks.example.com/a');
    await client.setServerRecording(true);
    const [live, search, end, hook, record] = s.seen;
    expect(live?.method).toBe('POST');
    expect(live?.headers['content-type']).toBe('application/json');
    expect(live?.headers['user-agent']).toBe('Tally-test');
    expect(JSON.parse(live?.body ?? '')).toEqual({ serviceId: 'svc', secret: SECRET });
    expect(JSON.parse(search?.body ?? '')).toEqual({
      serviceId: 'svc',
      secret: SECRET,
      keyword: '',
      starttime: 1_700_000_000,
      endtime: 1_700_003_601,
    });
    expect(JSON.parse(end?.body ?? '')).toEqual({ serviceId: 'svc', secret: SECRET, channelId: 'ch/1' });
    expect(hook).toMatchObject({ method: 'PUT', url: '/api/recordhook/svc' });
    expect(hook?.headers.secret).toBe(SECRET);
    expect(JSON.parse(hook?.body ?? '')).toEqual({ url: 'https://hooks.example.com/a' });
    expect(record).toMatchObject({ method: 'PUT', url: '/api/record/svc/1' });
    expect(record?.headers.secret).toBe(SECRET);
  });

  it('asks a credentials function before every call', async () => {
    const s = await start((_req, res) => json(res, 200, []));
    let n = 0;
    const client = clientFor(s.url, { credentials: async () => ({ serviceId: `svc${++n}`, secret: SECRET }) });
    await client.listLive();
    await client.listLive();
    expect(s.seen.map((r) => (JSON.parse(r.body) as { serviceId: string }).serviceId)).toEqual(['svc1', 'svc2']);
  });

  it('maps send:false to ChannelNotEndedError', async () => {
    const s = await start((_req, res) => json(res, 200, { send: false }));
    const error = await caught(clientFor(s.url).endChannel('abc'));
    expect(error).toBeInstanceOf(ChannelNotEndedError);
    expect((error as ChannelNotEndedError).channelId).toBe('abc');
    expectNoSecret(error, SECRET);
  });

  it('reads error texts inside 200 bodies', async () => {
    const unauthorized = await start((_req, res) => json(res, 200, { result: 'fail', message: 'Invalid secret' }));
    expect(await caught(clientFor(unauthorized.url).listLive())).toBeInstanceOf(BadCredentialsError);
    expect(await caught(clientFor(unauthorized.url).setServerRecording(true))).toBeInstanceOf(BadCredentialsError);
    const notFound = await start((_req, res) => json(res, 200, { error: { message: 'Channel not found' } }));
    expect(await caught(clientFor(notFound.url).endChannel('gone'))).toBeInstanceOf(UnknownChannelError);
    const notFound400 = await start((_req, res) => json(res, 400, { message: 'channel does not exist' }));
    expect(await caught(clientFor(notFound400.url).endChannel('gone'))).toBeInstanceOf(UnknownChannelError);
  });

  it('does not take an HTML 404 on termination for an unknown channel (wrong host or path)', async () => {
    const s = await start((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><head><title>404 Not Found</title></head><body>nginx</body></html>');
    });
    const error = await caught(clientFor(s.url).endChannel('x'));
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).bodySnippet).toBe('HTML page "404 Not Found"');
  });

  it('masks the secret when an error body echoes the request', async () => {
    const s = await start((req, res) => json(res, 500, `echo: ${req.body}`));
    const error = await caught(clientFor(s.url, { retries: 0 }).listLive());
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).bodySnippet).toContain('***');
    expectNoSecret(error, SECRET);
  });

  it('caps a long error body at about 200 characters on one line', async () => {
    const s = await start((_req, res) => json(res, 500, `line one\n${'x'.repeat(5000)}`));
    const error = (await caught(clientFor(s.url, { retries: 0 }).listLive())) as ServiceError;
    expect(error.bodySnippet.length).toBeLessThanOrEqual(200);
    expect(error.bodySnippet).toMatch(/^line one x+…$/);
  });

  it('does not follow redirects (they could carry the secret elsewhere)', async () => {
    const target = await start((_req, res) => json(res, 200, []));
    const s = await start((_req, res) => {
      res.writeHead(307, { location: `${target.url}/lambda/broadcast-channel-list` });
      res.end();
    });
    const error = await caught(clientFor(s.url, { retries: 0 }).listLive());
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).status).toBe(307);
    expect(target.seen).toHaveLength(0);
  });

  it('retries a termination only when the connection was refused', async () => {
    let jitterCalls = 0;
    const random = () => {
      jitterCalls += 1;
      return 0;
    };
    const dead = await closedPort();
    const refused = await caught(clientFor(dead, { retries: 2, random }).endChannel('x'));
    expect(refused).toBeInstanceOf(NetworkError);
    expect(jitterCalls).toBe(2);

    jitterCalls = 0;
    const resetting = await start((_req, res) => res.socket?.destroy());
    const reset = await caught(clientFor(resetting.url, { retries: 2, random }).endChannel('x'));
    expect(reset).toBeInstanceOf(NetworkError);
    expect(jitterCalls).toBe(0);
    expect(resetting.seen).toHaveLength(1);

    // The same reset on a read is retried.
    await caught(clientFor(resetting.url, { retries: 2, random }).listLive());
    expect(resetting.seen).toHaveLength(4);
    expectNoSecret(reset, SECRET);
    expectNoSecret(refused, SECRET);
  });

  it('waits with full jitter within the exponential ceiling', async () => {
    const s = await start((_req, res) => json(res, 503, { error: 'busy' }));
    const waits: number[] = [];
    const before = Date.now();
    await caught(
      clientFor(s.url, {
        retries: 3,
        retryBaseMs: 20,
        random: () => {
          waits.push(Date.now());
          return 0.5;
        },
      }).listLive(),
    );
    expect(s.seen).toHaveLength(4);
    expect(waits).toHaveLength(3);
    // 0.5 × (20, 40, 80) ms = 70 ms of waiting at least.
    expect(Date.now() - before).toBeGreaterThanOrEqual(65);
  });

  it('reads liberal but harmless variations of the documented shapes', async () => {
    const s = await start((req, res) => {
      if (req.url === '/v1/search') {
        return json(res, 200, {
          startTime: '1577862148',
          currentTime: 1580454148,
          totalCount: '3',
          extra: 'ignored',
          items: [
            { chid: '20200110', createTime: 1580281515, endTime: 1580281577, peerCount: 2, more: true },
            { id: 'by-id', createTime: '1580281000', endTime: '1580281100', peerCount: '7' },
            { chid: 'still-live', createTime: 1580281600, endTime: 0 },
          ],
        });
      }
      return json(res, 200, [
        { id: '1581324488053_Dc5aQ', serviceId: 'svc', createTime: '2020-02-10T08:48:09.828Z', numOfWatchers: '3' },
        { chid: 'no-zone', createTime: '2020-02-10T08:48:09', numOfWatchers: 0 },
      ]);
    });
    const client = clientFor(s.url);
    const live = await client.listLive();
    expect(live[0]).toMatchObject({ id: '1581324488053_Dc5aQ', watchers: 3, serviceId: 'svc' });
    expect(live[0]?.createdAt.toISOString()).toBe('2020-02-10T08:48:09.828Z');
    expect(live[1]).toMatchObject({ id: 'no-zone', serviceId: null, watchers: 0 });
    expect(live[1]?.createdAt.toISOString()).toBe('2020-02-10T08:48:09.000Z');

    const result = await client.search({ since: new Date(1_577_862_148_000), until: new Date(1_580_454_148_000) });
    expect(result.startTime.toISOString()).toBe(new Date(1_577_862_148_000).toISOString());
    expect(result.totalCount).toBe(3);
    expect(result.channels.map((c) => [c.id, c.state, c.cumulativeSessions])).toEqual([
      ['still-live', 'live', null],
      ['20200110', 'ended', 2],
      ['by-id', 'ended', 7],
    ]);
    expect(result.channels.find((c) => c.id === 'still-live')?.endedAt).toBeNull();
  });

  it('refuses shapes that would show wrong data, naming the bad path', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [[{ id: 'a', createTime: 'yesterday', numOfWatchers: 1 }], /\[0\]\.createTime/],
      [[{ id: 'a', createTime: '2020-02-31T00:00:00Z', numOfWatchers: 1 }], /\[0\]\.createTime/],
      [[{ id: 'a', createTime: '2020-02-10T08:48:09Z', numOfWatchers: 1.5 }], /\[0\]\.numOfWatchers/],
      [[{ createTime: '2020-02-10T08:48:09Z' }], /\[0\]\.id/],
      [[{ id: '', createTime: '2020-02-10T08:48:09Z' }], /\[0\]\.id/],
      [{ items: [] }, /\(root\)/],
    ];
    for (const [body, path] of cases) {
      const s = await start((_req, res) => json(res, 200, body));
      const error = await caught(clientFor(s.url).listLive());
      expect(error, JSON.stringify(body)).toBeInstanceOf(ResponseShapeError);
      expect((error as Error).message).toMatch(path);
    }
  });

  it('stops splitting at once when halving separates nothing (a service ignoring the period)', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ chid: `c${i}`, createTime: 1_000 + i, endTime: 2_000 }));
    const s = await start((_req, res) => json(res, 200, { totalCount: 500, items }));
    const result = await clientFor(s.url).search({ since: new Date(0), until: new Date(86_400_000) });
    expect(result.truncated).toBe(true);
    expect(result.totalCount).toBe(500);
    expect(result.channels).toHaveLength(100);
    expect(s.seen).toHaveLength(3);
  });

  it('reads JSON null from the live list as nothing live', async () => {
    const s = await start((_req, res) => json(res, 200, 'null'));
    expect(await clientFor(s.url).listLive()).toEqual([]);
  });

  it('refuses an impossible search period before sending anything', async () => {
    const s = await start((_req, res) => json(res, 200, {}));
    const client = clientFor(s.url);
    await expect(client.search({ since: new Date(2000), until: new Date(1000) })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(client.search({ since: new Date('x'), until: new Date() })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.endChannel('')).rejects.toBeInstanceOf(ValidationError);
    expect(s.seen).toHaveLength(0);
  });
});

describe('parsers and summaries', () => {
  it('parseLiveList and parseSearch never produce undefined or Invalid Date', () => {
    const live = parseLiveList([{ id: 'a', createTime: '2020-02-10T08:48:09.828Z' }]);
    expect(live[0]?.watchers).toBeNull();
    const search = parseSearch({ items: [{ chid: 'b', createTime: 1 }] }, { startTime: new Date(5), now: new Date(6) });
    expect(search).toEqual({
      startTime: new Date(5),
      currentTime: new Date(6),
      totalCount: 1,
      channels: [
        {
          id: 'b',
          serviceId: null,
          state: 'live',
          createdAt: new Date(1000),
          endedAt: null,
          watchers: null,
          cumulativeSessions: null,
        },
      ],
    });
    expect(() =>
      parseSearch({ items: [{ chid: 'b', createTime: 1e20 }] }, { startTime: new Date(), now: new Date() }),
    ).toThrow(ResponseShapeError);
  });

  it('summarizeBody strips markup and control characters', () => {
    expect(summarizeBody('<!DOCTYPE html><html><body><h1>Bad &amp; Gateway</h1></body></html>')).toBe(
      'HTML page "Bad & Gateway"',
    );
    expect(summarizeBody('<html><body><p>nothing</p></body></html>')).toBe('an HTML page');
    expect(summarizeBody('a\u001b[31m\r\nb')).toBe('a [31m b');
    expect(summarizeBody('   ')).toBe('');
    expect(summarizeBody(`{"secret":"${SECRET}"}`, 'application/json', SECRET)).toBe('{"secret":"***"}');
  });

  it('every error class serialises without the secret', () => {
    const errors: TallyError[] = [
      new BadCredentialsError(),
      new UnknownChannelError('c'),
      new ChannelNotEndedError('c'),
      new ServiceError(500, summarizeBody(`x ${SECRET}`, '', SECRET), '/v1/search'),
      new TimeoutError('/v1/search', 100),
      new NetworkError('/v1/search', 'connection refused'),
      new ResponseShapeError('/v1/search', [], 'bad'),
    ];
    for (const error of errors) {
      expectNoSecret(error, SECRET);
      const { params } = error;
      expect(JSON.parse(JSON.stringify(error))).toEqual({
        code: error.code,
        name: error.name,
        message: error.message,
        ...(params ? { params } : {}),
      });
      expect(JSON.stringify(params ?? {})).not.toContain(SECRET);
    }
  });
});
