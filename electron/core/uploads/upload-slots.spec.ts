/**
 * Fair upload slots (issue 32, finding 2), over real sockets to a real receiver: 512 uploads that each announce
 * 10 MB and send a byte every 30 s hold every slot, and genuine uploads 5 s and 75 s later are accepted and
 * saved, because the slowest upload under the minimum rate gives way. The rule is the real one (its default
 * rate, window and grace); only its monotonic clock is the test's, so "5 s later" takes no time to run.
 * Every slow upload is known to be in progress on the server (its part file opened) before the clock moves.
 */
import { once } from 'node:events';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { TokenStore } from '../webhook/token.js';
import { DiskBudget } from '../pipeline/disk-budget.js';
import { DEFAULT_UPLOAD_STALL_RULE } from './upload-slots.js';
import { mountUploads, type UploadRejection, type UploadRouteOptions, type UploadedEvent } from './upload-route.js';

const MiB = 1024 * 1024;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Harness {
  port: number;
  path: string;
  clientDir: string;
  /** The stall rule's clock (ms). */
  clock: { now: number };
  /** Resolves once `n` part files were opened in all. */
  partsOpened(n: number): Promise<void>;
  uploaded: UploadedEvent[];
  rejected: UploadRejection[];
}

async function harness(overrides: Partial<UploadRouteOptions> = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-upload-slots-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const receiver = new WebhookReceiver({
    inbox: { add: () => Promise.reject(new Error('no webhooks in this test')) },
    tokens: await TokenStore.open(join(dir, 'state')),
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
    // Long limits, as with uploads on: only the slot rule stands between the flood and the genuine upload.
    timeouts: { headersMs: 60_000, requestMs: 6 * 3_600_000 },
  });
  const clock = { now: 0 };
  let opened = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const route = await mountUploads(receiver, {
    folder: join(dir, 'recordings'),
    allowedOrigins: () => [],
    clock: () => clock.now,
    wrapPart: (file) => {
      opened += 1;
      for (const w of waiters.filter((x) => x.n <= opened)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      return file;
    },
    ...overrides,
  });
  const uploaded: UploadedEvent[] = [];
  const rejected: UploadRejection[] = [];
  route.on('uploaded', (e) => uploaded.push(e));
  route.on('rejected', (r) => rejected.push(r));
  await receiver.start();
  cleanups.push(() => receiver.stop(1_000));
  return {
    port: receiver.port,
    path: receiver.routePath('uploads'),
    clientDir: route.dir,
    clock,
    partsOpened: (n) => (opened >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    uploaded,
    rejected,
  };
}

/** A slow upload from `localAddress`: announces 10 MB, sends `first`, then only what the test writes. */
async function trickle(
  h: Harness,
  localAddress: string,
  first = 'O',
  announced = 10_000_000,
): Promise<{ socket: Socket; answer: Promise<string> }> {
  const socket = connect({ port: h.port, host: '127.0.0.1', localAddress });
  socket.on('error', () => undefined);
  cleanups.push(async () => socket.destroy());
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(data)));
  await once(socket, 'connect');
  socket.write(
    `POST ${h.path} HTTP/1.1\r\nHost: x\r\nContent-Type: audio/ogg\r\nX-FILENAME: svc.slow-1LL.ogg\r\nContent-Length: ${announced}\r\n\r\n${first}`,
  );
  return { socket, answer };
}

/** A genuine upload from 127.0.0.1 at network speed. */
function genuine(h: Harness, name: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: h.port, method: 'POST', path: h.path, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.setHeader('Content-Type', 'audio/ogg');
    req.setHeader('X-FILENAME', name);
    req.setHeader('Content-Length', String(body.length));
    req.end(body);
  });
}

/** A distinct loopback address per slow sender (the whole 127/8 is this machine). */
const addressOf = (i: number) => `127.2.${Math.floor(i / 200)}.${1 + (i % 200)}`;

it('512 uploads trickling a byte every 30 s: genuine uploads 5 s and 75 s later are accepted and saved', async () => {
  const h = await harness();
  const slow = [];
  for (let i = 0; i < 512; i += 1) slow.push(await trickle(h, addressOf(i)));
  await h.partsOpened(512);

  h.clock.now = 5_000;
  const first = randomBody(200_000, 1);
  const a = await genuine(h, 'svc.genuine-1LL.ogg', first);
  expect(a.status, a.text).toBe(201);
  // The upload that gave way was told why before its connection closed.
  expect(await Promise.race(slow.map((s) => s.answer))).toMatch(
    /^HTTP\/1\.1 503 [^]*Retry-After: 60[^]*closed to make room for another upload: 0 bytes\/s over the last 5 s/,
  );

  // One slow upload gave way, and says why; it is not counted as saved.
  const evicted = h.rejected.filter((r) => /closed to make room/.test(r.reason));
  expect(evicted).toHaveLength(1);
  expect(evicted[0]?.reason).toMatch(
    /^closed to make room for another upload: 0 bytes\/s over the last 5 s, below the 1\.0 KiB\/s an upload must keep$/,
  );
  expect(evicted[0]?.recording).toBe(true);

  // The flood refills its slot at once and goes on: a byte every 30 s on every connection.
  slow.push(await trickle(h, addressOf(512)));
  await h.partsOpened(514);
  h.clock.now = 30_000;
  for (const s of slow) if (!s.socket.destroyed) s.socket.write('g');
  h.clock.now = 60_000;
  for (const s of slow) if (!s.socket.destroyed) s.socket.write('g');

  h.clock.now = 75_000;
  const second = randomBody(300_000, 2);
  const b = await genuine(h, 'svc.genuine-2RR.ogg', second);
  expect(b.status, b.text).toBe(201);

  expect(h.uploaded.map((u) => u.fileName).sort()).toEqual(['svc.genuine-1LL.ogg', 'svc.genuine-2RR.ogg']);
  expect(await readFile(join(h.clientDir, 'svc.genuine-1LL.ogg'))).toEqual(first);
  expect(await readFile(join(h.clientDir, 'svc.genuine-2RR.ogg'))).toEqual(second);
  // Nothing else was refused: the genuine uploads made room, they were never turned away.
  expect(h.rejected.filter((r) => !/closed to make room/.test(r.reason))).toEqual([]);
  expect(h.rejected.map((r) => r.status)).toEqual([503, 503]);
}, 120_000);

it('caps the uploads of one address, naming it, and a genuine upload from that address still gets in', async () => {
  const h = await harness({ maxPerAddress: 8 });
  const slow = [];
  for (let i = 0; i < 8; i += 1) slow.push(await trickle(h, '127.3.0.1'));
  await h.partsOpened(8);
  // A ninth from the same address, while none of the eight is old enough to judge: refused, naming why.
  const ninth = await trickle(h, '127.3.0.1');
  expect(await ninth.answer).toMatch(
    /^HTTP\/1\.1 503 [^]*8 uploads from 127\.3\.0\.1 are already in progress, the most Tally takes from one address, and none is too slow to give way/,
  );
  // Other addresses are not held back by it.
  const other = await genuine(h, 'svc.other-1LL.ogg', randomBody(10_000, 3));
  expect(other.status).toBe(201);

  h.clock.now = DEFAULT_UPLOAD_STALL_RULE.graceMs + 5_000;
  const fromSame = await new Promise<{ status: number }>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: h.port, method: 'POST', path: h.path, agent: false, localAddress: '127.3.0.1' },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', reject);
    req.setHeader('Content-Type', 'audio/ogg');
    req.end(randomBody(50_000, 4));
  });
  expect(fromSame.status).toBe(201);
  expect(h.rejected.filter((r) => /closed to make room/.test(r.reason))).toHaveLength(1);
});

it('never evicts an upload that moves: with every slot moving, the newcomer is refused and told why', async () => {
  const h = await harness({ maxConcurrent: 2 });
  // Two uploads that sent 2 MiB at once (a part file write proves the server read them) and then pause.
  const moving = [];
  for (const address of ['127.4.0.1', '127.4.0.2']) moving.push(await trickle(h, address, 'x'.repeat(2 * 1024 * 1024)));
  await h.partsOpened(2);
  const partSizes = async () => {
    const names = (await readdir(h.clientDir)).filter((n) => n.endsWith('.part'));
    return Promise.all(names.map((n) => stat(join(h.clientDir, n)).then((s) => s.size >= 1024 * 1024)));
  };
  await expect.poll(partSizes).toEqual([true, true]);
  h.clock.now = 5_000;
  const third = await trickle(h, '127.4.0.3');
  expect(await third.answer).toMatch(
    /^HTTP\/1\.1 503 [^]*Retry-After: 60[^]*2 uploads are already in progress, the most Tally takes at once, and none is too slow to give way/,
  );
  expect(moving.every((m) => !m.socket.destroyed)).toBe(true);
});

it('a trickle that announced more than the disk holds gives way to a genuine upload that needs the space', async () => {
  // The downloads' disk budget (pipeline/disk-budget.ts) over a disk that says 64 MiB are free.
  const budget = new DiskBudget({
    stats: async () => ({ bavail: 64, bsize: 1024 * 1024, blocks: 1024 }),
    floorBytes: MiB,
  });
  const folder = tmpdir();
  const h = await harness({
    space: {
      claim: (id, bytes) => budget.claim(id, folder, bytes),
      wrote: (id, bytes) => budget.wrote(id, bytes),
      release: (id) => budget.release(id),
    },
  });
  // Two slow uploads that announce 30 MiB each: 60 of the 63 MiB above the floor are theirs.
  const slow = [];
  for (const address of ['127.5.0.1', '127.5.0.2']) {
    const s = await trickle(h, address, 'O', 30 * MiB);
    slow.push(s);
  }
  await h.partsOpened(2);
  h.clock.now = 5_000;
  const body = randomBody(5 * MiB, 5);
  const a = await genuine(h, 'svc.room-1LL.ogg', body);
  expect(a.status, a.text).toBe(201);
  expect(h.rejected.filter((r) => /closed to make room/.test(r.reason))).toHaveLength(1);
  expect(budget.reservedBy(folder)).toBe(30 * MiB);
});

it('behind a local tunnel client, an upload counts against the address the tunnel saw (the last X-Forwarded-For)', async () => {
  const h = await harness({ maxPerAddress: 1 });
  const held = await trickle(h, '127.6.0.1', 'O');
  await h.partsOpened(1);
  // The peer is loopback (the tunnel client); the sender wrote the first entry, the tunnel appended the last.
  const behind = (forwarded: string) =>
    new Promise<string>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: h.port, method: 'POST', path: h.path, agent: false, localAddress: '127.6.0.2' },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(`${res.statusCode} ${text}`));
        },
      );
      req.on('error', reject);
      req.setHeader('Content-Type', 'audio/ogg');
      req.setHeader('X-Forwarded-For', forwarded);
      req.end(randomBody(1000, 6));
    });
  expect(await behind('10.0.0.9, 203.0.113.7')).toMatch(/^201 /);
  const second = new Promise<void>((resolve) => h.partsOpened(2).then(resolve));
  const slowBehind = connect({ port: h.port, host: '127.0.0.1', localAddress: '127.6.0.3' });
  slowBehind.on('error', () => undefined);
  cleanups.push(async () => slowBehind.destroy());
  await once(slowBehind, 'connect');
  slowBehind.write(
    `POST ${h.path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.7\r\nContent-Length: 100\r\n\r\nO`,
  );
  await second;
  expect(await behind('198.51.100.1, 203.0.113.7')).toMatch(
    /^503 .*1 upload from 203\.0\.113\.7 is already in progress, the most Tally takes from one address/,
  );
  expect(held.socket.destroyed).toBe(false);
});

function randomBody(size: number, seed: number): Buffer {
  const body = Buffer.alloc(size);
  for (let i = 0; i < size; i += 1) body[i] = (i * 31 + seed * 7) & 255;
  return body;
}
