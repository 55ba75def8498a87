/**
 * Fuzzer for the ways issue 10 found to wedge Tally or write outside its folder, seeded (TALLY_FUZZ_SEED) and
 * scaled by TALLY_FUZZ_COUNT like the webhook fuzzer (`npm run fuzz` runs both; findings 4 and 6, executable
 * extensions and absurd announced sizes, are categories of the webhook fuzzer itself):
 * 1. flood: over-long fields and more webhooks than the unfinished-jobs cap, through the real receiver and
 *    journal; refused clearly, the journal bounded and replayable;
 * 2. slow clients: random mixes of stalled headers, stalled webhook bodies and stalled uploads hold every
 *    connection slot while genuine webhooks still get through;
 * 3. links planted in the recordings folder at a job's part, sidecar, sidecar temporary and final name: never
 *    followed, the outside files untouched, every recording saved as a plain file;
 * 5. bodies longer than announced or than maxRecordingBytes, with and without a length: nothing on disk past
 *    the ceiling, a clear reason, the honest ones saved;
 * 7. `tally serve`'s links: never the session key; random sequences of issuing, clock jumps and presenting
 *    codes at the WebSocket handshake (issued, reused, expired, forged, the key itself) let the page in, and
 *    send it the key, exactly when the code is fresh; no answer sets a cookie (electron/cli/serve.spec.ts runs the real opener and reads its command line);
 * 8. hostile text in every line `tally listen` prints for people: one line per event, no control characters.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createListenPrinter } from '../../electron/cli/listen-output.js';
import { uiProtocols } from '../../electron/contract.js';
import { ONE_TIME_CODE_TTL_MS } from '../../electron/core/app/ui-server.js';
import { statePathFor } from '../../electron/core/download/part-state.js';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';
import { partPathFor } from '../../electron/core/pipeline/download-manager.js';
import { RecordingPipeline } from '../../electron/core/pipeline/pipeline.js';
import { Inbox, JOURNAL_FILE, recordingKey } from '../../electron/core/recordings/inbox.js';
import type { RecordingJob } from '../../electron/core/recordings/types.js';
import { MAX_CHANNEL_ID_LENGTH, MAX_WEBHOOK_URL_LENGTH } from '../../electron/core/webhook/parse.js';
import { mountUploads } from '../../electron/core/uploads/upload-route.js';
import { WebhookReceiver } from '../../electron/core/webhook/receiver.js';
import { TokenStore } from '../../electron/core/webhook/token.js';
import { startQuietUiServer } from '../support/ui-server.js';

const SEED = Number(process.env.TALLY_FUZZ_SEED ?? Date.now() % 1_000_000);
const SCALE = Math.max(1, Math.floor(Number(process.env.TALLY_FUZZ_COUNT ?? 10_000) / 10_000));

/** mulberry32: small, seeded, good enough to pick cases. */
function rng(seed: number): { next: () => number; int: (lo: number, hi: number) => number } {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)) };
}

const roots: string[] = [];
async function temp(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `tally-limits-${name}-`));
  roots.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of roots) await rm(dir, { recursive: true, force: true });
});

function post(port: number, path: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': data.length },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

describe(`limits fuzzer (seed ${SEED}, scale ${SCALE})`, () => {
  beforeAll(() => console.log(`limits fuzzer: seed ${SEED} (rerun with TALLY_FUZZ_SEED=${SEED})`));

  it('finding 1: over-long fields are refused, the cap answers 503 with its reason, the journal stays bounded and replays', async () => {
    const r = rng(SEED ^ 0x1001);
    const dir = await temp('flood');
    const cap = 40;
    const inbox = await Inbox.open(dir);
    const receiver = new WebhookReceiver({
      inbox,
      tokens: await TokenStore.open(dir),
      policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
      maxUnfinishedJobs: cap,
    });
    const reasons: string[] = [];
    receiver.on('rejected', (e) => reasons.push(e.reason));
    await receiver.start();
    const counts = { longId: 0, longUrl: 0, ok: 0, capped: 0 };
    try {
      for (let i = 0; i < 200 * SCALE; i += 1) {
        const kind = r.int(0, 2);
        const id =
          kind === 0 ? `${'i'.repeat(r.int(MAX_CHANNEL_ID_LENGTH + 1, 2_000))}` : `flood-${i}-${r.int(0, 1e9)}`;
        const pad = kind === 1 ? 'u'.repeat(r.int(MAX_WEBHOOK_URL_LENGTH, 9_000)) : `r${r.int(0, 1e9)}`;
        const answer = await post(receiver.port, receiver.hookPath, {
          id,
          url: `https://s3.amazonaws.com/svc/${pad}/${i}.mp4`,
        });
        if (kind === 1) {
          // A URL past the cap cannot be a real recording: refused, never journalled.
          expect(answer.status, `long url #${i}`).toBeGreaterThanOrEqual(400);
          expect(answer.status).toBeLessThan(500);
          counts.longUrl += 1;
        } else if (counts.ok < cap) {
          // An over-long ID is ignored for the URL's file name: the recording itself is not lost.
          if (kind === 0) counts.longId += 1;
          expect(answer.status, answer.text).toBe(200);
          counts.ok += 1;
        } else {
          expect(answer.status).toBe(503);
          counts.capped += 1;
        }
      }
      expect(inbox.unfinished).toBeLessThanOrEqual(cap);
      if (counts.capped > 0) expect(reasons.some((x) => /still waiting to download/.test(x))).toBe(true);
    } finally {
      await receiver.stop(1_000);
      await inbox.close();
    }
    // Bounded: only accepted jobs are journalled, each within the caps.
    const journal = await readFile(join(dir, JOURNAL_FILE), 'utf8');
    expect(journal.length).toBeLessThan(cap * (MAX_CHANNEL_ID_LENGTH + MAX_WEBHOOK_URL_LENGTH + 1_000));
    const reopened = await Inbox.open(dir);
    expect(reopened.replay.jobs).toBe(counts.ok);
    for (const job of reopened.list()) {
      expect(job.channelId.length).toBeLessThanOrEqual(MAX_CHANNEL_ID_LENGTH);
      expect(job.url.length).toBeLessThanOrEqual(MAX_WEBHOOK_URL_LENGTH);
    }
    await reopened.close();
    console.log(`limits fuzzer, flood: ${JSON.stringify(counts)}`);
  });

  it('finding 2: genuine webhooks get through while random slow clients hold every connection slot', async () => {
    const r = rng(SEED ^ 0x2002);
    const dir = await temp('slow');
    const inbox = await Inbox.open(dir);
    const receiver = new WebhookReceiver({
      inbox,
      tokens: await TokenStore.open(dir),
      policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
      maxConnections: 30,
      timeouts: { headersMs: 60_000, requestMs: 6 * 3_600_000, webhookBodyMs: 60_000, checkIntervalMs: 1_000 },
    });
    // The upload route's token sits in a web page: anyone may start (and stall) uploads.
    // A small upload cap (the default is 512), so both ways a stalled upload loses its slot are exercised.
    const uploads = await mountUploads(receiver, {
      folder: join(dir, 'recordings'),
      allowedOrigins: () => [],
      maxConcurrent: 8,
    });
    const busy: number[] = [];
    uploads.on('rejected', (e) => busy.push(e.status));
    await receiver.start();
    const slow: net.Socket[] = [];
    const kinds = { headers: 0, webhookBody: 0, upload: 0 };
    try {
      const count = 40 + r.int(0, 40) * SCALE;
      for (let i = 0; i < count; i += 1) {
        const socket = net.connect(receiver.port, '127.0.0.1');
        socket.on('error', () => undefined);
        slow.push(socket);
        await once(socket, 'connect');
        // Stalled headers (no token needed), a webhook body or an upload that stops after a few bytes.
        const pick = r.next();
        if (pick < 0.3) {
          kinds.headers += 1;
          socket.write(`POST /hooks/guess HTTP/1.1\r\nHost: x\r\nX-Slow-${i}: 1\r\n`);
        } else if (pick < 0.75) {
          kinds.webhookBody += 1;
          socket.write(
            `POST ${receiver.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"id":`,
          );
        } else {
          kinds.upload += 1;
          socket.write(
            `POST ${receiver.routePath('uploads')} HTTP/1.1\r\nHost: x\r\nContent-Type: audio/ogg\r\nContent-Length: ${r.int(10, 1e9)}\r\n\r\nOggS`,
          );
        }
      }
      const genuine = 5 + r.int(0, 10);
      for (let i = 0; i < genuine; i += 1) {
        const url = `https://s3.amazonaws.com/svc/R${i}/genuine-${i}.mp4`;
        expect((await post(receiver.port, receiver.hookPath, { id: `genuine-${i}`, url })).status).toBe(200);
      }
      expect(inbox.unfinished).toBe(genuine);
      // Stalled uploads were refused past the cap (503) or made room for webhooks (499), never held a slot for hours.
      expect(busy.every((status) => status === 503 || status === 499)).toBe(true);
    } finally {
      for (const socket of slow) socket.destroy();
      await receiver.stop(1_000);
      await inbox.close();
    }
    console.log(`limits fuzzer, slow clients: ${JSON.stringify(kinds)}`);
  });

  it('findings 3 and 5: planted links are never followed; nothing longer than announced or allowed reaches the disk', async () => {
    const r = rng(SEED ^ 0x3003);
    const root = await temp('files');
    const folder = join(root, 'recordings');
    const outside = join(root, 'outside');
    await mkdir(folder, { recursive: true });
    await mkdir(outside, { recursive: true });
    const CAP = 256 * 1024;
    const body = (n: number, size: number) => {
      const out = Buffer.alloc(size);
      for (let i = 0; i < size; i += 1) out[i] = (i * 13 + n * 7) & 0xff;
      return out;
    };
    // /ok/<n>/<size>: honest; /nolen/<n>/<size>: no Content-Length; /lie/<n>/<size>: announced smaller.
    const origin = http.createServer((req, res) => {
      const [, kind, n, size] = (req.url ?? '').split('/');
      const data = body(Number(n), Number(size));
      if (kind === 'nolen') {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        for (let i = 0; i < data.length; i += 16_384) res.write(data.subarray(i, i + 16_384));
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': data.length }).end(data);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(origin.address() as net.AddressInfo).port}`;
    const pipeline = await RecordingPipeline.open({
      stateDir: join(root, 'state'),
      folder,
      policy: new DownloadOriginPolicy([base]),
      port: 0,
      tunnel: { provider: 'none' },
      maxRecordingBytes: CAP,
      retryBaseMs: 20,
      segments: 1,
    });
    await pipeline.start();
    interface Case {
      id: string;
      url: string;
      kind: string;
      size: number;
      announced: number | null;
    }
    const cases: Case[] = [];
    const planted: { link: string; target: string; content: string }[] = [];
    try {
      for (let n = 0; n < 12 * SCALE; n += 1) {
        const kind = ['ok', 'nolen', 'lie'][r.int(0, 2)] as string;
        const size = r.next() < 0.3 ? CAP + r.int(1, CAP) : r.int(1, CAP);
        const id = `fuzz-${kind}-${n}`;
        const url = `${base}/${kind}/${n}/${size}/${id}.mp4`;
        const announced = kind === 'lie' ? Math.max(1, Math.floor(size / 2)) : r.next() < 0.5 ? size : null;
        cases.push({ id, url, kind, size, announced });
        // Links where this job will write: part, sidecar, its temporary, final name; each to its own outside file.
        const part = partPathFor(folder, { key: recordingKey(url), channelId: id, url });
        for (const link of [part, statePathFor(part), `${statePathFor(part)}.tmp`, join(folder, `${id}.mp4`)]) {
          if (r.next() < 0.4) continue;
          const target = join(outside, `${planted.length}.txt`);
          const content = `outside file ${planted.length}`;
          await writeFile(target, content);
          await symlink(target, link);
          planted.push({ link, target, content });
        }
      }
      const settled = (job: RecordingJob | undefined, c: Case): boolean => {
        if (!job) return false;
        const tooBig = c.size > CAP;
        if (!tooBig) return job.state === 'saved';
        // Past the cap is refused for good, once a lying announcement has been caught twice (the strikes).
        return job.state === 'failed';
      };
      const done = new Promise<void>((resolve) => {
        const check = () => {
          if (cases.every((c) => settled(pipeline.inbox.get(recordingKey(c.url)), c))) {
            pipeline.off('changed', check);
            resolve();
          }
        };
        pipeline.on('changed', check);
        check();
      });
      for (const c of cases) {
        const hook = { id: c.id, url: c.url, ...(c.announced !== null ? { filesize: String(c.announced) } : {}) };
        expect((await post(pipeline.receiver.port, pipeline.receiver.hookPath, hook)).status).toBe(200);
      }
      await done;
      for (const c of cases) {
        const job = pipeline.inbox.get(recordingKey(c.url)) as RecordingJob;
        if (c.size <= CAP) {
          expect((await lstat(job.path as string)).isFile(), c.id).toBe(true);
          const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
          expect(sha(await readFile(job.path as string)), c.id).toBe(sha(body(Number(c.url.split('/')[4]), c.size)));
        } else {
          expect(job.error ?? '', c.id).toMatch(/maxRecordingBytes/);
        }
      }
    } finally {
      await pipeline.stop();
      await new Promise((resolve) => origin.close(resolve));
    }
    // Nothing outside was written through a link, and nothing in the folder is past the ceiling.
    for (const p of planted) expect(await readFile(p.target, 'utf8'), p.link).toBe(p.content);
    expect((await readdir(outside)).length).toBe(planted.length);
    // A link planted at a final name stays (the name counts as taken, the recording goes beside it); the ones
    // where Tally writes (part, sidecar, temporary) are removed.
    const plantedNames = new Set(planted.map((p) => p.link));
    for (const name of await readdir(folder)) {
      const info = await lstat(join(folder, name));
      if (info.isSymbolicLink()) {
        expect(plantedNames.has(join(folder, name)) && name.endsWith('.mp4'), name).toBe(true);
        continue;
      }
      if (!name.endsWith('.json')) expect(info.size, name).toBeLessThanOrEqual(CAP + 1);
    }
    expect((await stat(folder)).isDirectory()).toBe(true);
    console.log(`limits fuzzer, files: ${cases.length} recordings, ${planted.length} planted links`);
  }, 120_000);

  it('finding 7: no link carries the serve key; each code lets one handshake in, within its minute', async () => {
    const r = rng(SEED ^ 0x7007);
    const home = await temp('serve');
    let clock = r.int(0, 2 ** 40);
    const { ui, close } = await startQuietUiServer(home, () => clock);
    const issued: { code: string; at: number; spent: boolean }[] = [];
    const counts = { issued: 0, opened: 0, spent: 0, expired: 0, forged: 0 };
    /** The page's handshake with a code: 101 and the session key as the first frame, or the refusal's status. */
    const exchange = (code: string) =>
      new Promise<{ status: number; key: string }>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${ui.port}/ws`, uiProtocols({ code }), { origin: ui.origin });
        ws.once('message', (data) => {
          resolve({ status: 101, key: (JSON.parse(String(data)) as { key: string }).key });
          ws.close();
        });
        // Refused: let in only to be closed with 4401 (the page's own origin), no key sent.
        ws.once('close', (code) => resolve({ status: code, key: '' }));
        ws.once('unexpected-response', (_req, res) => {
          expect(res.headers['set-cookie']).toBeUndefined();
          resolve({ status: res.statusCode ?? 0, key: '' });
          res.resume();
        });
        ws.once('error', reject);
      });
    // The key, learnt as a page learns it; no link ever carries it.
    const token = (await exchange(new URL(ui.oneTimeUrl()).searchParams.get('code') ?? '')).key;
    expect(token.length).toBeGreaterThanOrEqual(20);
    try {
      for (let i = 0; i < 300 * SCALE; i += 1) {
        const action = r.int(0, 3);
        if (action === 0 || issued.length === 0) {
          // What `tally serve` hands the opener, whose command line every local user can read.
          const link = new URL(ui.oneTimeUrl());
          expect(link.href).not.toContain(token);
          expect([...link.searchParams.keys()]).toEqual(['code']);
          issued.push({ code: link.searchParams.get('code') ?? '', at: clock, spent: false });
          counts.issued += 1;
        } else if (action === 1) {
          clock += r.next() < 0.8 ? r.int(0, 2_000) : r.int(0, 2 * ONE_TIME_CODE_TTL_MS);
        } else {
          // Mostly the newest code (the opener's), sometimes any older one.
          const known = issued[
            r.next() < 0.6 ? issued.length - 1 : r.int(0, issued.length - 1)
          ] as (typeof issued)[number];
          const kind = r.int(0, 5);
          const flip = r.int(0, known.code.length - 1);
          const forged =
            kind === 0
              ? token
              : kind === 1
                ? `${known.code.slice(0, flip)}${known.code[flip] === 'A' ? 'B' : 'A'}${known.code.slice(flip + 1)}`
                : null;
          const answer = await exchange(forged ?? known.code);
          const fresh = forged === null && !known.spent && clock - known.at <= ONE_TIME_CODE_TTL_MS;
          expect(answer.status, `code #${issued.indexOf(known)} ${forged === null ? 'as issued' : 'forged'}`).toBe(
            fresh ? 101 : 4401,
          );
          // Only a fresh code is sent the key; any presentation spends it, in time or not.
          expect(answer.key === token).toBe(fresh);
          if (forged !== null) counts.forged += 1;
          else if (fresh) counts.opened += 1;
          else if (known.spent) counts.spent += 1;
          else counts.expired += 1;
          if (forged === null) known.spent = true;
        }
      }
    } finally {
      await close();
    }
    console.log(`limits fuzzer, serve codes: ${JSON.stringify(counts)}`);
  });

  it('finding 8: hostile text prints as one safe line per event', () => {
    const r = rng(SEED ^ 0x8008);
    const pieces = [
      '\x1b[31m',
      '\x1b]0;owned\x07',
      '\r',
      '\n',
      '\r\n',
      '\u202e',
      '\u2066',
      '\x9b',
      '\x00',
      '\x7f',
      'é',
      '日本',
      ' ',
      'ok',
    ];
    const hostile = () => Array.from({ length: r.int(1, 12) }, () => pieces[r.int(0, pieces.length - 1)]).join('');
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString('utf8')));
    const printer = createListenPrinter({ out, ndjson: false, tty: false, folder: '/rec' });
    const events = 200 * SCALE;
    for (let i = 0; i < events; i += 1) {
      const job = { channelId: hostile(), key: `k${i}`, url: 'https://s3.amazonaws.com/b/x.mp4' } as RecordingJob;
      const which = i % 3;
      if (which === 0) printer.received(job, []);
      else if (which === 1)
        printer.failed({ job, error: new Error(hostile()), willRetry: false, nextAttemptAt: null } as never);
      else printer.expired({ job, reason: hostile() } as never);
    }
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(events);
    // eslint-disable-next-line no-control-regex -- control characters are what is being checked
    for (const line of lines) expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u);
  });
});
