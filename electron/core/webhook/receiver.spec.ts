import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../errors.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { Inbox } from '../recordings/inbox.js';
import type { JournalFile } from '../recordings/inbox.js';
import type { RecordingJob } from '../recordings/types.js';
import { QUIET_AFTER_MS, WebhookReceiver } from './receiver.js';
import type { Rejection, WebhookReceiverOptions } from './receiver.js';
import { TokenStore } from './token.js';

const S3 = 'https://s3.amazonaws.com/svc-1/Rand0m/1581324488053_Dc5aQ.mp4';

interface Harness {
  dir: string;
  inbox: Inbox;
  tokens: TokenStore;
  receiver: WebhookReceiver;
  rejected: Rejection[];
}

let h: Harness;
const cleanups: (() => Promise<unknown>)[] = [];

async function harness(
  overrides: Partial<WebhookReceiverOptions> & { wrapJournal?: (file: JournalFile) => JournalFile; dir?: string } = {},
): Promise<Harness> {
  const dir = overrides.dir ?? (await mkdtemp(join(tmpdir(), 'tally-receiver-')));
  const inbox = await Inbox.open(join(dir, 'state'), { wrapJournal: overrides.wrapJournal });
  const tokens = await TokenStore.open(dir);
  const policy =
    overrides.policy ?? new DownloadOriginPolicy(['https://s3.amazonaws.com', 'https://*.s3.amazonaws.com']);
  const receiver = new WebhookReceiver({ inbox, tokens, ...overrides, policy });
  const rejected: Rejection[] = [];
  receiver.on('rejected', (r) => rejected.push(r));
  await receiver.start();
  cleanups.push(async () => {
    await receiver.stop();
    await inbox.close();
  });
  if (!overrides.dir) cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return { dir, inbox, tokens, receiver, rejected };
}

beforeEach(async () => {
  h = await harness();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
  text: string;
}

/** One HTTP request over a fresh connection (no agent pooling between tests). */
function send(
  method: string,
  path: string,
  body?: string | Buffer | object,
  headers: Record<string, string> = {},
  receiver = h.receiver,
): Promise<Answer> {
  const payload =
    body === undefined ? undefined : Buffer.isBuffer(body) || typeof body === 'string' ? body : JSON.stringify(body);
  const allHeaders = { ...headers };
  if (typeof body === 'object' && !Buffer.isBuffer(body) && !allHeaders['Content-Type']) {
    allHeaders['Content-Type'] = 'application/json';
  }
  return new Promise((resolve, reject) => {
    const req = request(`${receiver.origin}${path}`, { method, headers: allHeaders, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = null;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const hook = (body?: string | Buffer | object, headers?: Record<string, string>): Promise<Answer> =>
  send('POST', h.receiver.hookPath, body, headers);

/** A raw TCP client that collects everything the server sends until it closes. */
function rawClient(port: number): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, received: () => data, closed };
}

function waitFor<T>(emitter: WebhookReceiver, event: 'received' | 'duplicate'): Promise<T> {
  return once(emitter, event).then(([value]) => value as T);
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Journal whose fsync can be held open; `started` resolves when a held fsync begins. */
function heldJournal(): {
  wrap: (file: JournalFile) => JournalFile;
  started: Promise<void>;
  release: () => void;
} {
  const gate = deferred();
  const started = deferred();
  return {
    wrap: (file) => ({
      write: (b, o, l) => file.write(b, o, l),
      datasync: async () => {
        started.resolve();
        await gate.promise;
        return file.datasync();
      },
      truncate: (n) => file.truncate(n),
      close: () => file.close(),
    }),
    started: started.promise,
    release: gate.resolve,
  };
}

describe('accepted webhook shapes', () => {
  it('takes the current docs shape (JSON) and answers 200 only with the job in the inbox', async () => {
    const received = waitFor<RecordingJob>(h.receiver, 'received');
    const answer = await hook({ id: '1581324488053_Dc5aQ', url: S3, duration: '61', filesize: '2048' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: true });
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-store');
    const job = await received;
    expect(job).toMatchObject({ channelId: '1581324488053_Dc5aQ', url: S3, shape: 'json', announcedBytes: 2048 });
    expect(h.inbox.get(job.key)).toEqual(job);
  });

  it('reports ignored fields with the received job', async () => {
    const received = once(h.receiver, 'received');
    expect((await hook({ id: 'odd', url: S3, filesize: 'lots' })).status).toBe(200);
    const [job, warnings] = (await received) as [RecordingJob, string[]];
    expect(job.announcedBytes).toBeNull();
    expect(warnings).toEqual(['filesize "lots" ignored: not a byte count']);
  });

  it('takes the older GET shape', async () => {
    const url = 'https://s3.amazonaws.com/svc-1/20200110.mp4';
    const answer = await send('GET', `${h.receiver.hookPath}?chid=20200110&url=${encodeURIComponent(url)}`);
    expect(answer).toMatchObject({ status: 200, body: { ok: true } });
    expect(h.inbox.list()).toMatchObject([{ channelId: '20200110', url, shape: 'get' }]);
  });

  it("takes the spec's wrapping shape as JSON and as URL-encoded", async () => {
    const json = await hook({ remotemonster: { channel: 'spec-json', payload: { url: `${S3}?v=1` } } });
    const form = await hook(
      `remotemonster[channelId]=spec-form&remotemonster[payload][url]=${encodeURIComponent(`${S3}?v=2`)}`,
      { 'Content-Type': 'application/x-www-form-urlencoded' },
    );
    expect([json.status, form.status]).toEqual([200, 200]);
    expect(h.inbox.list().map((j) => [j.channelId, j.shape])).toEqual([
      ['spec-json', 'spec'],
      ['spec-form', 'spec'],
    ]);
  });

  it('takes a top-level payload.url, a POST with query fields, and falls back to the file name', async () => {
    expect((await hook({ chid: 'p1', payload: { url: `${S3}?a` } })).status).toBe(200);
    const query = `?id=q1&url=${encodeURIComponent(`${S3}?b`)}`;
    expect((await send('POST', `${h.receiver.hookPath}${query}`)).status).toBe(200);
    expect((await hook({ url: 'https://bucket.s3.amazonaws.com/svc/r/my%20show.mp4' })).status).toBe(200);
    expect(h.inbox.list().map((j) => j.channelId)).toEqual(['p1', 'q1', 'my show']);
  });
});

describe('duplicates', () => {
  it('stores the same webhook once and says duplicate the second time', async () => {
    const body = { id: 'dup', url: S3 };
    expect((await hook(body)).body).toEqual({ ok: true });
    const duplicate = waitFor<RecordingJob>(h.receiver, 'duplicate');
    expect((await hook(body)).body).toEqual({ ok: true, duplicate: true });
    expect((await duplicate).channelId).toBe('dup');
    expect(h.inbox.list()).toHaveLength(1);
  });

  it('recognises one recording announced in two shapes', async () => {
    await hook({ id: 'both', url: S3 });
    const spec = await hook({ remotemonster: { channelId: 'both', payload: { url: S3 } } });
    expect(spec.body).toEqual({ ok: true, duplicate: true });
    const legacy = 'https://s3.amazonaws.com/svc-1/1581324488053_Dc5aQ.mp4';
    await hook({ id: '1581324488053_Dc5aQ', url: S3.replace('Rand0m', 'Other1') });
    const old = await send('GET', `${h.receiver.hookPath}?chid=1581324488053_Dc5aQ&url=${encodeURIComponent(legacy)}`);
    expect(old.body).toEqual({ ok: true, duplicate: true });
    expect(h.inbox.list()).toHaveLength(2);
  });
});

describe('rejections', () => {
  it('answers 404 for a wrong token or any other path, without leaking the token', async () => {
    const token = h.receiver.hookPath.split('/')[2] as string;
    const paths = [
      '/hooks/wrong-token',
      `/hooks/${token.slice(0, -1)}`,
      `/hooks/${token}x`,
      `/hooks/${token}/extra`,
      `/HOOKS/${token}`,
      `//hooks/${token}`,
      '/hooks',
      '/hooks/',
      '/',
      '/favicon.ico',
      `/uploads/${token}`,
      '/healthz/nope',
    ];
    for (const path of paths) {
      const answer = await send('POST', path, { id: 'x', url: S3 });
      expect(answer.status, path).toBe(404);
      expect(answer.body).toEqual({ error: 'unknown path' });
    }
    expect(h.inbox.list()).toEqual([]);
    expect(h.rejected).toHaveLength(paths.length);
    expect(JSON.stringify(h.rejected)).not.toContain(token);
    expect(h.rejected[0]).toMatchObject({ status: 404, remoteAddress: '127.0.0.1' });
  });

  it('answers 405 with Allow for other methods', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const answer = await send(method, h.receiver.hookPath, { id: 'x', url: S3 });
      expect(answer.status, method).toBe(405);
      expect(answer.headers.allow).toBe('GET, POST');
    }
    expect(h.inbox.list()).toEqual([]);
  });

  it('answers 400 with a JSON reason for bad JSON, a missing URL or a non-object', async () => {
    const bad = await hook('{"id": "x", "url": ', { 'Content-Type': 'application/json' });
    expect(bad).toMatchObject({ status: 400, body: { error: 'the body is not valid JSON' } });
    expect((await hook({ id: 'x' })).body).toEqual({
      error: 'the webhook has no recording URL (expected url or payload.url)',
    });
    expect((await hook('[]', { 'Content-Type': 'application/json' })).status).toBe(400);
    expect((await send('GET', h.receiver.hookPath)).status).toBe(400);
    expect((await hook('x', { 'Content-Type': 'multipart/form-data; boundary=x' })).status).toBe(415);
    expect(h.rejected.map((r) => r.status)).toEqual([400, 400, 400, 400, 415]);
  });

  it.each([
    ['a foreign origin', 'https://evil.example.com/x.mp4', /not an allowed download origin/],
    ['a suffix trick', 'https://s3.amazonaws.com.evil.com/x.mp4', /not an allowed/],
    ['a label trick', 'https://evils3.amazonaws.com/x.mp4', /not an allowed/],
    ['plain http', 'http://s3.amazonaws.com/x.mp4', /plain http/],
    ['a file URL', 'file:///etc/passwd', /file: URLs/],
    ['a data URL', 'data:video/mp4;base64,AAAA', /data: URLs/],
    ['credentials', 'https://user:pass@s3.amazonaws.com/x.mp4', /user name or password/],
    ['loopback', 'http://127.0.0.1:9/x.mp4', /loopback/],
    ['decimal loopback', 'http://2130706433/x.mp4', /loopback/],
    ['hex loopback', 'http://0x7f000001/x.mp4', /loopback/],
    ['metadata service', 'http://169.254.169.254/latest/meta-data/', /link-local/],
    ['private', 'https://192.168.0.10/x.mp4', /private/],
    ['IPv6 loopback', 'http://[::1]/x.mp4', /loopback/],
    ['IPv4-mapped IPv6', 'http://[::ffff:127.0.0.1]/x.mp4', /loopback/],
    ['IPv6 link-local', 'http://[fe80::1]/x.mp4', /link-local/],
  ])('answers 422 for %s', async (_name, url, reason) => {
    const answer = await hook({ id: 'x', url });
    expect(answer.status).toBe(422);
    expect((answer.body as { error: string }).error).toMatch(reason);
    expect(h.rejected).toMatchObject([{ status: 422 }]);
    expect(h.inbox.list()).toEqual([]);
  });

  it('accepts exactly 64 KiB and refuses a declared larger body with 413 before reading it', async () => {
    const base = JSON.stringify({ id: 'big', url: S3, pad: '' });
    const exact = JSON.stringify({ id: 'big', url: S3, pad: 'x'.repeat(64 * 1024 - base.length) });
    expect(Buffer.byteLength(exact)).toBe(64 * 1024);
    expect((await hook(exact, { 'Content-Type': 'application/json' })).status).toBe(200);

    const client = rawClient(h.receiver.port);
    client.socket.write(
      `POST ${h.receiver.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 + 1}\r\n\r\n`,
    );
    // No body byte was sent, yet the answer comes and the connection closes.
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(client.received()).toMatch(/connection: close/i);
  });

  it('stops a streamed body at 64 KiB + 1 without waiting for the rest', async () => {
    const client = rawClient(h.receiver.port);
    client.socket.write(
      `POST ${h.receiver.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024 + 1, 0x20);
    client.socket.write(`${chunk.length.toString(16)}\r\n`);
    client.socket.write(chunk);
    client.socket.write('\r\n');
    // The client never sends the terminating chunk: a server that waited for the whole body would hang here.
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(client.received()).toContain('larger than 65536 bytes');
    expect(h.rejected).toMatchObject([{ status: 413 }]);
  });

  it('stops reading a huge upload from a real HTTP client early', async () => {
    let written = 0;
    const answer = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${h.receiver.origin}${h.receiver.hookPath}`,
        { method: 'POST', agent: false, headers: { 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      const block = Buffer.alloc(16 * 1024, 0x20);
      const pump = (): void => {
        while (written < 64 * 1024 * 1024) {
          written += block.length;
          if (!req.write(block)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });
    expect(answer).toBe(413);
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('durability', () => {
  it('answers 200 only after the journal fsync completes', async () => {
    const held = heldJournal();
    const slow = await harness({ wrapJournal: held.wrap });
    let answered = false;
    const pending = send('POST', slow.receiver.hookPath, { id: 'slow', url: S3 }, {}, slow.receiver).then((a) => {
      answered = true;
      return a;
    });
    await held.started;
    // The server is responsive (health answers) while the webhook still waits for its fsync.
    const health = await send('GET', slow.receiver.healthPath, undefined, {}, slow.receiver);
    expect(health.status).toBe(200);
    expect(answered).toBe(false);
    expect(slow.inbox.list()).toEqual([]);
    held.release();
    expect((await pending).body).toEqual({ ok: true });
    expect(slow.inbox.list()).toHaveLength(1);
  });

  it('is busy while a webhook waits for its commit, and a lone webhook is quiet as soon as it is answered', async () => {
    const held = heldJournal();
    const slow = await harness({ wrapJournal: held.wrap });
    expect(slow.receiver.busy).toBe(false);
    const quiet: number[] = [];
    slow.receiver.on('quiet', () => quiet.push(performance.now()));
    const pending = send('POST', slow.receiver.hookPath, { id: 'busy', url: S3 }, {}, slow.receiver);
    await held.started;
    expect(slow.receiver.webhooksWaiting).toBe(1);
    expect(slow.receiver.busy).toBe(true);
    // A health check is not a webhook: it neither counts nor ends the wait.
    await send('GET', slow.receiver.healthPath, undefined, {}, slow.receiver);
    expect(slow.receiver.busy).toBe(true);
    expect(quiet).toEqual([]);
    held.release();
    await pending;
    // Its download need not wait: nothing else is arriving.
    expect(slow.receiver.busy).toBe(false);
    expect(quiet).toHaveLength(1);
  });

  it('stays busy in a burst until QUIET_AFTER_MS after its last answer, then says quiet once', async () => {
    const held = heldJournal();
    const slow = await harness({ wrapJournal: held.wrap });
    const quiet: number[] = [];
    slow.receiver.on('quiet', () => quiet.push(performance.now()));
    const burst = [1, 2, 3].map((n) =>
      send('POST', slow.receiver.hookPath, { id: `burst-${n}`, url: `${S3}?n=${n}` }, {}, slow.receiver),
    );
    await held.started;
    // All three are in before the first commit ends (each came while another was being handled).
    await vi.waitFor(() => expect(slow.receiver.webhooksWaiting).toBe(3));
    held.release();
    await Promise.all(burst);
    const answeredAt = performance.now();
    // Answered, but the next webhooks of a burst may be on their way: still busy, no quiet yet.
    expect(slow.receiver.webhooksWaiting).toBe(0);
    expect(slow.receiver.busy).toBe(true);
    expect(quiet).toEqual([]);
    await once(slow.receiver, 'quiet');
    expect(slow.receiver.busy).toBe(false);
    expect(quiet).toHaveLength(1);
    expect((quiet[0] as number) - answeredAt).toBeGreaterThanOrEqual(QUIET_AFTER_MS - 5);
  });

  it('answers 503 with Retry-After when the journal cannot be written, and stores nothing', async () => {
    const broken = await harness({
      wrapJournal: (file) => ({
        write: () => Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })),
        datasync: () => file.datasync(),
        truncate: (n) => file.truncate(n),
        close: () => file.close(),
      }),
    });
    const answer = await send('POST', broken.receiver.hookPath, { id: 'full', url: S3 }, {}, broken.receiver);
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('5');
    expect(broken.inbox.list()).toEqual([]);
    expect(broken.rejected).toMatchObject([{ status: 503 }]);
  });

  it('keeps jobs and the webhook URL across a restart', async () => {
    await hook({ id: 'r1', url: S3 });
    const path = h.receiver.hookPath;
    await h.receiver.stop();
    await h.inbox.close();
    const again = await harness({ dir: h.dir });
    expect(again.inbox.list()).toMatchObject([{ channelId: 'r1', url: S3, state: 'pending' }]);
    expect(again.receiver.hookPath).toBe(path);
    expect((await send('POST', path, { id: 'r1', url: S3 }, {}, again.receiver)).body).toEqual({
      ok: true,
      duplicate: true,
    });
  });

  it('stop() lets an in-flight webhook finish its write and answer, then refuses connections', async () => {
    const held = heldJournal();
    const slow = await harness({ wrapJournal: held.wrap });
    const port = slow.receiver.port;
    const pending = send('POST', slow.receiver.hookPath, { id: 'inflight', url: S3 }, {}, slow.receiver);
    await held.started;
    const stopping = slow.receiver.stop();
    held.release();
    const answer = await pending;
    await stopping;
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('close');
    expect(slow.inbox.list()).toHaveLength(1);
    const refused = rawClient(port);
    await expect(once(refused.socket, 'error')).resolves.toMatchObject([{ code: 'ECONNREFUSED' }]);
  });

  it('stop() closes idle keep-alive sockets', async () => {
    const client = rawClient(h.receiver.port);
    client.socket.write(`GET ${h.receiver.healthPath} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`);
    while (!client.received().includes('"ok":true')) await once(client.socket, 'data');
    await h.receiver.stop();
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('hardening', () => {
  it('answers garbage with 400 and keeps serving', async () => {
    for (const garbage of [
      '\x00\x01\x02 garbage\r\n\r\n',
      'GET / HTTP/9.9\r\n\r\n',
      'POST /hooks/x HTTP/1.1\r\nHost x\r\n\r\n',
    ]) {
      const client = rawClient(h.receiver.port);
      client.socket.write(garbage);
      await client.closed;
      expect(client.received()).toMatch(/^HTTP\/1\.1 400 /);
    }
    expect((await send('GET', h.receiver.healthPath)).status).toBe(200);
  });

  it('survives clients that vanish mid-headers and mid-body', async () => {
    const halfHeaders = rawClient(h.receiver.port);
    halfHeaders.socket.write(`POST ${h.receiver.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Le`);
    halfHeaders.socket.destroy();
    await halfHeaders.closed;
    const halfBody = rawClient(h.receiver.port);
    halfBody.socket.write(
      `POST ${h.receiver.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":`,
    );
    halfBody.socket.destroy();
    await halfBody.closed;
    expect((await hook({ id: 'after', url: S3 })).status).toBe(200);
    expect(h.inbox.list().map((j) => j.channelId)).toEqual(['after']);
  });

  it('times out a request whose headers never finish (slowloris) with 408', async () => {
    const quick = await harness({ timeouts: { headersMs: 200, requestMs: 400, checkIntervalMs: 50 } });
    const client = rawClient(quick.receiver.port);
    client.socket.write(`POST ${quick.receiver.hookPath} HTTP/1.1\r\nHost: x\r\n`);
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect((await send('GET', quick.receiver.healthPath, undefined, {}, quick.receiver)).status).toBe(200);
  });

  it('answers 408 to a webhook body trickled byte by byte, even when the request limit is hours (uploads)', async () => {
    const quick = await harness({ timeouts: { requestMs: 6 * 60 * 60 * 1000, webhookBodyMs: 300 } });
    const client = rawClient(quick.receiver.port);
    client.socket.write(
      `POST ${quick.receiver.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 80\r\n\r\n{`,
    );
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(client.received()).toContain('the body did not arrive within 1 s');
    expect(quick.rejected.at(-1)).toMatchObject({ status: 408 });
    expect(quick.inbox.list()).toEqual([]);
  });

  it('keeps taking genuine webhooks while slow clients hold every connection slot', async () => {
    const limited = await harness({
      maxConnections: 40,
      timeouts: { headersMs: 60_000, requestMs: 120_000, checkIntervalMs: 1_000 },
    });
    // 60 clients that started a request and never finish their headers (no token needed for this).
    const slow = Array.from({ length: 60 }, () => rawClient(limited.receiver.port));
    await Promise.all(slow.map((c) => once(c.socket, 'connect')));
    for (const c of slow) c.socket.write('POST /hooks/guess HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n');
    const ids = Array.from({ length: 10 }, (_, i) => `genuine-${i}`);
    for (const id of ids) {
      const url = `https://s3.amazonaws.com/svc-1/Rand0m/${id}.mp4`;
      const answer = await send('POST', limited.receiver.hookPath, { id, url }, {}, limited.receiver);
      expect(answer.status, id).toBe(200);
    }
    expect(
      limited.inbox
        .list()
        .map((j) => j.channelId)
        .sort(),
    ).toEqual(ids);
    // The slow ones made room: at most the limit stayed open.
    const open = slow.filter((c) => !c.socket.destroyed && c.socket.readyState === 'open').length;
    expect(open).toBeLessThanOrEqual(40);
    for (const c of slow) c.socket.destroy();
  });

  it('refuses new webhooks with 503 once the unfinished-job cap is reached, and takes them again after', async () => {
    const capped = await harness({ maxUnfinishedJobs: 3 });
    const url = (i: number) => `https://s3.amazonaws.com/svc-1/Rand0m/cap-${i}.mp4`;
    for (let i = 0; i < 3; i += 1) {
      expect(
        (await send('POST', capped.receiver.hookPath, { id: `cap-${i}`, url: url(i) }, {}, capped.receiver)).status,
      ).toBe(200);
    }
    const refused = await send('POST', capped.receiver.hookPath, { id: 'cap-3', url: url(3) }, {}, capped.receiver);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('60');
    expect(capped.rejected.at(-1)?.reason).toMatch(/^3 recordings are still waiting to download/);
    expect(capped.inbox.unfinished).toBe(3);
    // One finishes: room for one more.
    const first = capped.inbox.list()[0];
    await capped.inbox.update(first?.key ?? '', { state: 'saved', path: '/x.mp4', bytes: 1 });
    expect(capped.inbox.unfinished).toBe(2);
    expect(
      (await send('POST', capped.receiver.hookPath, { id: 'cap-3', url: url(3) }, {}, capped.receiver)).status,
    ).toBe(200);
  });

  it('refuses oversized headers with 431', async () => {
    const client = rawClient(h.receiver.port);
    client.socket.write(`GET ${h.receiver.healthPath} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 431 /);
  });
});

describe('health, tokens and routes', () => {
  it('reports a busy port as a configuration problem', async () => {
    const second = new WebhookReceiver({
      inbox: h.inbox,
      tokens: h.tokens,
      policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
      port: h.receiver.port,
    });
    await expect(second.start()).rejects.toThrow(ConfigError);
    await expect(second.start()).rejects.toThrow(/already in use/);
  });

  it('answers the health check with this instance id, GET only', async () => {
    const answer = await send('GET', h.receiver.healthPath);
    expect(answer.body).toEqual({ ok: true, id: h.receiver.instanceId });
    expect(h.receiver.instanceId.length).toBeGreaterThanOrEqual(16);
    const post = await send('POST', h.receiver.healthPath);
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('exposes the local URL with the token, and rotating the token retires the old URL', async () => {
    expect(h.receiver.localUrl).toBe(`http://127.0.0.1:${h.receiver.port}${h.receiver.hookPath}`);
    expect(h.receiver.hookPath).toBe(`/hooks/${await h.tokens.get('hooks')}`);
    const oldPath = h.receiver.hookPath;
    const newUrl = await h.receiver.rotateToken();
    expect(newUrl).toBe(h.receiver.localUrl);
    expect(h.receiver.hookPath).not.toBe(oldPath);
    expect((await send('POST', oldPath, { id: 'x', url: S3 })).status).toBe(404);
    expect((await send('POST', h.receiver.hookPath, { id: 'x', url: S3 })).status).toBe(200);
  });

  it('mounts another route with its own token and passes it the request', async () => {
    const seen: string[] = [];
    await h.receiver.addRoute('uploads', 'uploads', (req, res, info) => {
      seen.push(`${req.method} ${info.subpath} ${info.url.searchParams.get('n')}`);
      res.writeHead(201).end('stored');
    });
    const path = h.receiver.routePath('uploads');
    expect(path).toBe(`/uploads/${await h.tokens.get('uploads')}`);
    expect(path.split('/')[2]).not.toBe(h.receiver.hookPath.split('/')[2]);
    const ok = await send('POST', `${path}/file.ogg?n=1`, 'audio');
    expect([ok.status, ok.text]).toEqual([201, 'stored']);
    expect((await send('POST', `/uploads/${h.receiver.hookPath.split('/')[2]}`, 'audio')).status).toBe(404);
    expect(seen).toEqual(['POST file.ogg 1']);
    await expect(h.receiver.addRoute('uploads', 'uploads', () => undefined)).rejects.toThrow(/already mounted/);
    await expect(h.receiver.addRoute('../x', 'uploads', () => undefined)).rejects.toThrow(/Invalid route/);
  });

  it('answers 500 when a mounted handler fails or forgets to answer', async () => {
    await h.receiver.addRoute('boom', 'uploads', () => {
      throw new Error('handler bug');
    });
    await h.receiver.addRoute('silent', 'uploads', () => undefined);
    expect((await send('GET', h.receiver.routePath('boom'))).body).toEqual({ error: 'internal error' });
    expect((await send('GET', h.receiver.routePath('silent'))).status).toBe(500);
  });
});
