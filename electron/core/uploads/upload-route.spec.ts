import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { TokenStore } from '../webhook/token.js';
import { NO_ORIGIN_MESSAGE } from './cors.js';
import { UploadLog } from './upload-log.js';
import {
  decodeHeaderFileName,
  mountUploads,
  parseSdkFileName,
  uploadBaseName,
  type PartFile,
  type UploadedEvent,
  type UploadRejection,
  type UploadRoute,
  type UploadRouteOptions,
} from './upload-route.js';

const APP = 'https://app.example';
const MiB = 1024 * 1024;

interface Harness {
  dir: string;
  folder: string;
  clientDir: string;
  receiver: WebhookReceiver;
  route: UploadRoute;
  log: UploadLog;
  url: string;
  origins: string[];
  uploaded: UploadedEvent[];
  rejected: UploadRejection[];
}

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(overrides: Partial<UploadRouteOptions> = {}, origins: string[] = [APP]): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-uploads-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const folder = join(dir, 'recordings');
  const tokens = await TokenStore.open(join(dir, 'state'));
  const receiver = new WebhookReceiver({
    inbox: { add: () => Promise.reject(new Error('no webhooks in this test')) },
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
    tokens,
  });
  const log = await UploadLog.open(join(dir, 'state'));
  const route = await mountUploads(receiver, { folder, allowedOrigins: () => origins, log, ...overrides });
  await receiver.start();
  cleanups.push(async () => {
    await receiver.stop(1000);
    await log.close();
  });
  const uploaded: UploadedEvent[] = [];
  const rejected: UploadRejection[] = [];
  route.on('uploaded', (e) => uploaded.push(e));
  route.on('rejected', (r) => rejected.push(r));
  return {
    dir,
    folder,
    clientDir: join(folder, 'client'),
    receiver,
    route,
    log,
    url: `${receiver.origin}${receiver.routePath('uploads')}`,
    origins,
    uploaded,
    rejected,
  };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown> | null;
}

/**
 * One request on a fresh connection. `body` may be a list of chunks, written one by one with backpressure
 * (no Content-Length unless given: chunked encoding, so the size is only known while streaming).
 */
function send(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: Buffer | Buffer[] | (() => AsyncIterable<Buffer>) },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'POST', headers: opts.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: Record<string, unknown> | null;
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          body = null;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    const body = opts.body;
    if (body === undefined || Buffer.isBuffer(body)) {
      req.end(body);
      return;
    }
    void (async () => {
      const chunks = typeof body === 'function' ? body() : body;
      for await (const chunk of chunks) {
        if (!req.write(chunk)) await once(req, 'drain');
      }
      req.end();
    })().catch(() => undefined);
  });
}

/** `count` chunks of `size` bytes, one buffer reused: the sender holds no more than one chunk. */
function* repeated(size: number, count: number): Generator<Buffer> {
  const chunk = Buffer.alloc(size, 0x61);
  for (let i = 0; i < count; i += 1) yield chunk;
}

async function filesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

function sha256(buffer: Buffer): string {
  return createHash('sha256').update(buffer).digest('hex');
}

/** A multipart body with the given parts (each `headers` block then `body`). */
function multipart(boundary: string, parts: { headers: string[]; body: Buffer | string }[]): Buffer {
  const out: Buffer[] = [Buffer.from('preamble to ignore\r\n')];
  for (const part of parts) {
    out.push(Buffer.from(`--${boundary}\r\n${part.headers.join('\r\n')}\r\n\r\n`));
    out.push(Buffer.isBuffer(part.body) ? part.body : Buffer.from(part.body));
    out.push(Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(out);
}

describe('raw body uploads (the web SDK way)', () => {
  it('saves the body under client/ with the X-FILENAME name and the extension of the content type', async () => {
    const h = await harness();
    const body = randomBytes(300_000);
    const answer = await send(h.url, {
      headers: { 'Content-Type': 'audio/webm', 'X-FILENAME': 'sandbox-service.AbC123-1.ogg', Origin: APP },
      body,
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ ok: true, fileName: 'sandbox-service.AbC123-1.webm', bytes: body.length });
    expect(answer.headers['access-control-allow-origin']).toBe(APP);
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
    expect(await filesIn(h.clientDir)).toEqual(['sandbox-service.AbC123-1.webm']);
    expect(await readFile(join(h.clientDir, 'sandbox-service.AbC123-1.webm'))).toEqual(body);

    expect(h.uploaded).toHaveLength(1);
    expect(h.uploaded[0]).toMatchObject({
      path: join(h.clientDir, 'sandbox-service.AbC123-1.webm'),
      fileName: 'sandbox-service.AbC123-1.webm',
      bytes: body.length,
      contentType: 'audio/webm',
      origin: APP,
      sha256: sha256(body),
      via: 'raw',
    });
    // The log is on disk before the answer: a reopened log lists the upload.
    const reopened = await UploadLog.open(join(h.dir, 'state'));
    expect(reopened.list().map((r) => r.fileName)).toEqual(['sandbox-service.AbC123-1.webm']);
    await reopened.close();
  });

  it('accepts clients without an Origin (curl, servers) and a chunked body; codecs parameters are ignored', async () => {
    const h = await harness();
    const answer = await send(h.url, {
      headers: { 'Content-Type': 'audio/ogg; codecs=opus', 'X-FILENAME': 'take.ogg' },
      body: [...repeated(10_000, 7)],
    });
    expect(answer.status).toBe(201);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    expect((await stat(join(h.clientDir, 'take.ogg'))).size).toBe(70_000);
    expect(h.uploaded[0]?.origin).toBeNull();
  });

  it.each([
    ['audio/wav', '.wav'],
    ['audio/x-wav', '.wav'],
    ['audio/wave', '.wav'],
    ['video/webm;codecs=vp8,opus', '.webm'],
  ])('maps %s to %s', async (type, ext) => {
    const h = await harness();
    const answer = await send(h.url, {
      headers: { 'Content-Type': type, 'X-FILENAME': 'clip.bin' },
      body: Buffer.from('x'),
    });
    expect(answer.status).toBe(201);
    expect(await filesIn(h.clientDir)).toEqual([`clip${ext}`]);
  });

  it('names a file without X-FILENAME upload-<date>_<time>', async () => {
    const h = await harness({ now: () => new Date(2026, 10, 22, 9, 5, 7) });
    const answer = await send(h.url, { headers: { 'Content-Type': 'audio/webm' }, body: Buffer.from('abc') });
    expect(answer.status).toBe(201);
    expect(await filesIn(h.clientDir)).toEqual(['upload-2026-11-22_090507.webm']);
  });

  it('never overwrites: two uploads with the same name, even at once, both survive', async () => {
    const h = await harness();
    const bodies = [randomBytes(200_000), randomBytes(200_000), randomBytes(1000)];
    const answers = await Promise.all(
      bodies.map((body) => send(h.url, { headers: { 'Content-Type': 'audio/webm', 'X-FILENAME': 'same.webm' }, body })),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    expect(await filesIn(h.clientDir)).toEqual(['same (2).webm', 'same (3).webm', 'same.webm']);
    const saved = await Promise.all(answers.map((a) => readFile(join(h.clientDir, String(a.body?.fileName)))));
    expect(saved.map(sha256).sort()).toEqual(bodies.map(sha256).sort());
  });
});

describe('multipart uploads', () => {
  it('saves the one file part, ignoring text fields, with its file name and type', async () => {
    const h = await harness();
    const file = randomBytes(150_000);
    const boundary = '----TallyBoundary7MA4YWxkTrZu0gW';
    const body = multipart(boundary, [
      { headers: ['Content-Disposition: form-data; name="title"'], body: 'Evening show' },
      {
        headers: [
          'Content-Disposition: form-data; name="file"; filename="Evening show.webm"',
          'Content-Type: audio/webm',
        ],
        body: file,
      },
    ]);
    // Sent in odd-sized pieces so boundaries fall across chunks.
    const pieces: Buffer[] = [];
    for (let i = 0; i < body.length; i += 4093) pieces.push(body.subarray(i, i + 4093));
    const answer = await send(h.url, {
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}`, Origin: APP },
      body: pieces,
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ fileName: 'Evening show.webm', bytes: file.length });
    expect(await readFile(join(h.clientDir, 'Evening show.webm'))).toEqual(file);
    expect(h.uploaded[0]).toMatchObject({ via: 'multipart', contentType: 'audio/webm' });
  });

  it('keeps a file part of another type as .bin, and refuses a body without a closing boundary (400)', async () => {
    const h = await harness();
    const boundary = 'b0und';
    const html = multipart(boundary, [
      {
        headers: ['Content-Disposition: form-data; name="f"; filename="x.webm"', 'Content-Type: text/html'],
        body: '<p>',
      },
    ]);
    const wrongType = await send(h.url, {
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}`, Origin: APP },
      body: html,
    });
    expect(wrongType.status).toBe(201);
    expect(wrongType.body).toMatchObject({ fileName: 'x.bin' });
    expect(wrongType.headers['access-control-allow-origin']).toBe(APP);
    const kept = await filesIn(h.clientDir);
    expect(kept).toEqual(['x.bin']);

    const cut = multipart(boundary, [
      {
        headers: ['Content-Disposition: form-data; name="f"; filename="x.webm"', 'Content-Type: audio/webm'],
        body: 'abc',
      },
    ]);
    const truncated = await send(h.url, {
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      body: cut.subarray(0, cut.length - 10),
    });
    expect(truncated.status).toBe(400);
    expect(String(truncated.body?.error)).toMatch(/closing boundary/);

    const noBoundary = await send(h.url, {
      headers: { 'Content-Type': 'multipart/form-data' },
      body: Buffer.from('x'),
    });
    expect(noBoundary.status).toBe(400);
    expect(await filesIn(h.clientDir)).toEqual(kept);
  });
});

describe('CORS', () => {
  it('answers a preflight from an allowed origin with exactly that origin, POST and the two headers', async () => {
    const h = await harness({}, ['https://App.example:443', 'http://127.0.0.1:5173']);
    const answer = await send(h.url, {
      method: 'OPTIONS',
      headers: {
        Origin: APP,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-filename',
        'Access-Control-Request-Private-Network': 'true',
      },
    });
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe(APP);
    expect(answer.headers.vary).toBe('Origin');
    expect(answer.headers['access-control-allow-methods']).toBe('POST');
    expect(answer.headers['access-control-allow-headers']).toBe('Content-Type, X-FILENAME');
    expect(Number(answer.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(answer.headers['access-control-allow-private-network']).toBe('true');
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('refuses a preflight and a POST from another origin with 403 and no CORS headers, writing nothing', async () => {
    const h = await harness();
    for (const origin of ['https://evil.example', 'https://app.example:8443', 'http://app.example', 'null']) {
      const preflight = await send(h.url, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
      });
      expect(preflight.status).toBe(403);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    }
    const post = await send(h.url, {
      headers: { Origin: 'https://evil.example', 'Content-Type': 'audio/webm', 'X-FILENAME': 'a.webm' },
      body: randomBytes(50_000),
    });
    expect(post.status).toBe(403);
    expect(post.headers['access-control-allow-origin']).toBeUndefined();
    expect(await filesIn(h.clientDir)).toEqual([]);
    expect(h.rejected.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);
  });

  it('refuses every browser with a message saying how to allow one while no origin is configured', async () => {
    const h = await harness({}, []);
    const answer = await send(h.url, {
      headers: { Origin: APP, 'Content-Type': 'audio/webm' },
      body: Buffer.from('abc'),
    });
    expect(answer.status).toBe(403);
    expect(answer.body?.error).toBe(NO_ORIGIN_MESSAGE);
    // Settings apply without a restart: the list is read on every request.
    h.origins.push(APP);
    const later = await send(h.url, {
      headers: { Origin: APP, 'Content-Type': 'audio/webm' },
      body: Buffer.from('abc'),
    });
    expect(later.status).toBe(201);
  });
});

describe('limits and bad input', () => {
  it('refuses a declared size over the cap with 413 before reading, and one that grows past it mid-stream', async () => {
    const h = await harness({ maxBytes: MiB });
    const declared = await send(h.url, {
      headers: { 'Content-Type': 'audio/webm', 'Content-Length': String(MiB + 1), Origin: APP },
      body: Buffer.alloc(MiB + 1),
    }).catch((error: NodeJS.ErrnoException) => ({ status: error.code ?? 'error', headers: {}, body: null }));
    // The client may see the 413 or a reset while it is still sending: either way nothing is saved.
    expect([413, 'ECONNRESET', 'EPIPE']).toContain(declared.status);

    const streamed = await send(h.url, {
      headers: { 'Content-Type': 'audio/webm', 'X-FILENAME': 'big.webm', Origin: APP },
      body: () =>
        (async function* () {
          yield* repeated(64 * 1024, 40);
        })(),
    });
    expect(streamed.status).toBe(413);
    expect(String(streamed.body?.error)).toMatch(/1\.0 MiB upload limit/);
    expect(streamed.headers['access-control-allow-origin']).toBe(APP);
    expect(await filesIn(h.clientDir)).toEqual([]);
    expect(h.uploaded).toEqual([]);
  });

  it('says which channel and stream a refused SDK upload was, and that a recording may be lost', async () => {
    const h = await harness({ maxBytes: 1000 });
    const answer = await send(h.url, {
      headers: { 'Content-Type': 'audio/webm', Origin: APP, 'X-FILENAME': 'svc.1581324488053_Dc5aQRR.ogg' },
      body: Buffer.alloc(2000),
    });
    expect(answer.status).toBe(413);
    expect(h.rejected.at(-1)).toMatchObject({
      status: 413,
      fileName: 'svc.1581324488053_Dc5aQRR.ogg',
      channelId: '1581324488053_Dc5aQ',
      track: 'remote',
      recording: true,
    });
    await send(h.url, { method: 'GET' });
    expect(h.rejected.at(-1)).toMatchObject({ status: 405, recording: false, channelId: null });
  });

  it('accepts a file of exactly the cap', async () => {
    const h = await harness({ maxBytes: 100_000 });
    const answer = await send(h.url, { headers: { 'Content-Type': 'audio/webm' }, body: Buffer.alloc(100_000) });
    expect(answer.status).toBe(201);
  });

  it.each(['text/plain', 'application/octet-stream', 'audio/mpeg', 'audio'])(
    'keeps a body of Content-Type %s (never refused for its type), as .bin',
    async (type) => {
      const h = await harness();
      const answer = await send(h.url, { headers: { 'Content-Type': type, Origin: APP }, body: Buffer.from('abc') });
      expect(answer.status).toBe(201);
      expect(answer.headers['access-control-allow-origin']).toBe(APP);
      const [name] = await filesIn(h.clientDir);
      expect(name).toMatch(/\.bin$/);
      expect(await readFile(join(h.clientDir, name ?? ''))).toEqual(Buffer.from('abc'));
    },
  );

  it('keeps a body without Content-Type; refuses an empty body (400), GET (405) and sub-paths (404)', async () => {
    const h = await harness();
    const req = request(h.url, { method: 'POST', agent: false });
    const missing = new Promise<number>((resolve) => req.on('response', (res) => resolve(res.statusCode ?? 0)));
    req.end('abc');
    expect(await missing).toBe(201);
    expect((await send(h.url, { headers: { 'Content-Type': 'audio/webm' }, body: Buffer.alloc(0) })).status).toBe(400);
    const get = await send(h.url, { method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST, OPTIONS');
    expect(
      (await send(`${h.url}/x`, { headers: { 'Content-Type': 'audio/webm' }, body: Buffer.from('a') })).status,
    ).toBe(404);
    // The webhook token does not open the upload route.
    const hookToken = h.receiver.hookPath.split('/')[2] ?? '';
    expect((await send(`${h.receiver.origin}/uploads/${hookToken}`, { body: Buffer.from('a') })).status).toBe(404);
  });

  it.each([
    ['../../../etc/passwd', 'passwd'],
    ['..\\..\\win.ini', 'win'],
    ['/abs/path/x.webm', 'x'],
    ['CON.webm', 'CON'],
    ['\u202Egpj.exe', 'gpj'],
    ['report.html', 'report'],
    ['a\u0000b.webm', 'a'],
  ])('keeps the hostile name %j inside client/ with the real extension', async (name, fragment) => {
    const h = await harness();
    const answer = await send(h.url, {
      headers: { 'Content-Type': 'audio/ogg', 'X-FILENAME': encodeURIComponent(name) },
      body: Buffer.from('OggS'),
    });
    expect(answer.status).toBe(201);
    const files = await filesIn(h.clientDir);
    expect(files).toHaveLength(1);
    const [file] = files as [string];
    expect(file.endsWith('.ogg')).toBe(true);
    expect(file).toContain(fragment);
    for (const bad of ['/', '\\', '\u0000', '\u202E']) expect(file).not.toContain(bad);
    expect(file).not.toMatch(/^CON\./i);
    // Nothing appeared anywhere else.
    expect(await filesIn(h.folder)).toEqual(['client']);
  });

  it('removes the part and saves nothing when the client drops the connection mid-upload', async () => {
    const h = await harness();
    const rejected = once(h.route, 'rejected');
    const req = request(h.url, {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'audio/webm', 'Content-Length': String(4 * MiB), 'X-FILENAME': 'dropped.webm' },
    });
    req.on('error', () => undefined);
    req.write(Buffer.alloc(MiB));
    // The part file appears once the first batch is written; then the client goes away.
    const deadline = Date.now() + 10_000;
    while (!(await filesIn(h.clientDir)).some((f) => f.endsWith('.part'))) {
      if (Date.now() > deadline) throw new Error('the upload never started writing');
      await new Promise((resolve) => setImmediate(resolve));
    }
    req.destroy();
    const [rejection] = (await rejected) as [UploadRejection];
    expect(rejection.status).toBe(499);
    expect(await filesIn(h.clientDir)).toEqual([]);
    expect(h.log.list()).toEqual([]);
  });

  it('cuts off a stalled upload after the idle timeout and removes its part', async () => {
    const h = await harness({ idleTimeoutMs: 150 });
    const rejected = once(h.route, 'rejected');
    const req = request(h.url, {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'audio/webm', 'Content-Length': '1000' },
    });
    const closed = new Promise<void>((resolve) => req.on('error', () => resolve()));
    req.write(Buffer.alloc(10));
    const [rejection] = (await rejected) as [UploadRejection];
    expect(rejection).toMatchObject({ status: 499 });
    expect(rejection.reason).toMatch(/nothing received/);
    await closed;
    expect(await filesIn(h.clientDir)).toEqual([]);
  });

  it('answers 507 and removes the part when the disk fills up mid-stream', async () => {
    let written = 0;
    const h = await harness({
      wrapPart: (file): PartFile => ({
        writev: async (buffers) => {
          const size = buffers.reduce((n, b) => n + b.length, 0);
          if (written + size > 2 * MiB) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
          written += size;
          return file.writev(buffers);
        },
        sync: () => file.sync(),
        close: () => file.close(),
      }),
    });
    const answer = await send(h.url, {
      headers: { 'Content-Type': 'audio/webm', Origin: APP },
      body: [...repeated(256 * 1024, 16)],
    });
    expect(answer.status).toBe(507);
    expect(String(answer.body?.error)).toMatch(/disk is full.*send it again/);
    expect(answer.headers['access-control-allow-origin']).toBe(APP);
    expect(await filesIn(h.clientDir)).toEqual([]);
  });

  it('answers 507 before reading when the declared size does not fit in the free space', async () => {
    const h = await harness({ statfs: async () => ({ bavail: 10, bsize: 4096 }) });
    const answer = await send(h.url, {
      headers: { 'Content-Type': 'audio/webm', 'Content-Length': String(100_000) },
      body: Buffer.alloc(100_000),
    });
    expect(answer.status).toBe(507);
    expect(String(answer.body?.error)).toMatch(/97\.7 KiB needed, 40\.0 KiB free/);
    expect(await filesIn(h.clientDir)).toEqual([]);
  });

  it('keeps memory flat while streaming 256 MiB (and the bytes arrive intact)', async () => {
    const h = await harness();
    const chunk = randomBytes(MiB);
    const count = 256;
    const expected = createHash('sha256');
    for (let i = 0; i < count; i += 1) expected.update(chunk);
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const answer = await send(h.url, {
      headers: { 'Content-Type': 'audio/webm', 'Content-Length': String(count * MiB), 'X-FILENAME': 'long.webm' },
      body: [...Array.from({ length: count }, () => chunk)],
    });
    clearInterval(sampler);
    expect(answer.status).toBe(201);
    expect(answer.body?.sha256).toBe(expected.digest('hex'));
    expect((await stat(join(h.clientDir, 'long.webm'))).size).toBe(count * MiB);
    // Node 24's larger young generation lets request chunks already written wait longer for a scavenge (see
    // docs/performance.md, "Node 24"); 60 MB was seen on a loaded machine. A copy of the upload (256 MiB) still fails.
    expect(peak - baseline).toBeLessThan(96 * MiB);
  });
});

describe('file names', () => {
  it('reads the channel and stream out of the web SDK name, whatever the channel ID holds', () => {
    expect(parseSdkFileName('svc.1581324488053_Dc5aQLL.ogg')).toEqual({
      serviceId: 'svc',
      channelId: '1581324488053_Dc5aQ',
      track: 'local',
    });
    expect(parseSdkFileName('svc.a.b.cRR.ogg')).toMatchObject({ channelId: 'a.b.c', track: 'remote' });
    expect(parseSdkFileName('my.svc.chLL.ogg', 'my.svc')).toMatchObject({ serviceId: 'my.svc', channelId: 'ch' });
    expect(parseSdkFileName('notes.webm')).toEqual({ serviceId: null, channelId: null, track: null });
    expect(parseSdkFileName('noname')).toEqual({ serviceId: null, channelId: null, track: null });
    expect(parseSdkFileName(null)).toEqual({ serviceId: null, channelId: null, track: null });
  });

  it('decodes percent-encoded and raw UTF-8 X-FILENAME values and keeps a literal %', () => {
    expect(decodeHeaderFileName('%ED%95%9C%EA%B8%80.webm')).toBe('한글.webm');
    expect(decodeHeaderFileName(Buffer.from('한글.webm').toString('latin1'))).toBe('한글.webm');
    expect(decodeHeaderFileName('100% take.ogg')).toBe('100% take.ogg');
    expect(decodeHeaderFileName('   ')).toBeNull();
    expect(decodeHeaderFileName(undefined)).toBeNull();
  });

  it('drops the client extension and sanitises the rest like a channel ID', () => {
    expect(uploadBaseName('svc.Ab12Cd-1.ogg', 'x')).toBe('svc.Ab12Cd-1');
    expect(uploadBaseName('noext', 'x')).toBe('noext');
    expect(uploadBaseName(null, 'upload-1')).toBe('upload-1');
    expect(uploadBaseName('a/b.webm', 'x')).toMatch(/^a_b-[0-9a-f]{8}$/);
    expect(uploadBaseName('.webm', 'x')).toMatch(/^webm-[0-9a-f]{8}$/);
  });
});
