/**
 * Fuzzer for the socket engine's wire (issue 34): the response head reader (http-parser-js held strict, see
 * response-head.ts), the chunked decoder, and the whole engine against a raw origin that answers what no
 * well-behaved server would. Seeded (TALLY_FUZZ_SEED) and scaled by TALLY_FUZZ_COUNT like the other fuzzers.
 * What must hold: no input crashes or hangs the reader; every malformed head or body is a MalformedResponseError
 * (for a download, a NetworkError saying "malformed HTTP response", retried like any network failure); a valid
 * answer cut at any points reads the same as in one piece; and a body is never taken from a head that frames it
 * two ways (Content-Length with Transfer-Encoding), nor decoded from a coding Tally never asked for.
 */
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChunkedDecoder } from '../../electron/core/download/chunked-decoder.js';
import { NetworkError } from '../../electron/core/download/errors.js';
import { downloadFile, type DownloadPolicy } from '../../electron/core/download/fetch-file.js';
import { downloadInThread } from '../../electron/core/download/download-thread.js';
import {
  HeadReader,
  MAX_HEAD_BYTES,
  MalformedResponseError,
  type ResponseHead,
} from '../../electron/core/download/response-head.js';
import { RawOrigin } from '../support/download/raw-origin.js';

const SEED = Number(process.env.TALLY_FUZZ_SEED ?? Date.now() % 1_000_000);
const ROUNDS = Math.max(2_000, Math.floor(Number(process.env.TALLY_FUZZ_COUNT ?? 0) / 5));

/** mulberry32: small, seeded, good enough to pick cases. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  return { next, int, pick: <T>(xs: readonly T[]): T => xs[int(0, xs.length - 1)] as T };
}
type Rng = ReturnType<typeof rng>;

/** Cuts `bytes` into pieces at random points (as a socket's reads would). */
function pieces(r: Rng, bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const size = r.next() < 0.3 ? 1 : r.int(1, Math.max(1, bytes.length - at));
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

/** Reads a head from `bytes` in the given pieces: the head and the body bytes after it, or the error. */
function readHead(parts: Buffer[]): { head: ResponseHead; rest: Buffer } | { error: unknown } | null {
  const reader = new HeadReader();
  for (let i = 0; i < parts.length; i += 1) {
    try {
      const got = reader.feed(parts[i] as Buffer);
      if (got) {
        const rest = Buffer.concat([(parts[i] as Buffer).subarray(got.used), ...parts.slice(i + 1)]);
        return { head: got.head, rest };
      }
    } catch (error) {
      return { error };
    }
  }
  return null;
}

const VALID_HEADS = [
  'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: "abc"\r\n\r\n',
  'HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/10\r\nContent-Length: 5\r\n\r\n',
  'HTTP/1.0 200 OK\r\nContent-Type: video/mp4\r\n\r\n',
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n',
  'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n',
  'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n',
  'HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1/x\r\nContent-Length: 0\r\n\r\n',
  'HTTP/1.1 200 \r\nContent-Length: 5\r\n\r\n',
];

/** Heads no strict reader may take (each names why). */
const MALFORMED_HEADS: [string, string][] = [
  ['TE and CL', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n'],
  ['CL and TE', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n'],
  ['gzip transfer coding', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n'],
  ['gzip then chunked', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'],
  ['two lengths', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n'],
  ['signed length', 'HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n'],
  ['hex length', 'HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\n\r\n'],
  ['length list', 'HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n'],
  ['huge length', 'HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n'],
  ['two ranges', 'HTTP/1.1 206 OK\r\nContent-Range: bytes 0-4/10\r\nContent-Range: bytes 5-9/10\r\n\r\n'],
  ['two locations', 'HTTP/1.1 302 OK\r\nLocation: http://a/\r\nLocation: http://b/\r\n\r\n'],
  ['bare LF', 'HTTP/1.1 200 OK\nContent-Length: 5\n\n'],
  ['bare CR', 'HTTP/1.1 200 OK\r\nX-A: b\rc\r\nContent-Length: 5\r\n\r\n'],
  ['folded header', 'HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\nContent-Length: 5\r\n\r\n'],
  ['space before colon', 'HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\n'],
  ['no colon', 'HTTP/1.1 200 OK\r\nContent-Length 5\r\n\r\n'],
  ['NUL in value', 'HTTP/1.1 200 OK\r\nX-A: b\0c\r\n\r\n'],
  ['HTTP/2 status line', 'HTTP/2 200 OK\r\n\r\n'],
  ['HTTP/0.9 body', 'hello world\r\n\r\n'],
  ['status of 2 digits', 'HTTP/1.1 20 OK\r\n\r\n'],
  ['status of 4 digits', 'HTTP/1.1 2000 OK\r\n\r\n'],
  ['protocol switch', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n'],
  ['too many headers', `HTTP/1.1 200 OK\r\n${'X-A: b\r\n'.repeat(300)}\r\n`],
  ['a head over the bound', `HTTP/1.1 200 OK\r\nX-A: ${'b'.repeat(MAX_HEAD_BYTES)}\r\n\r\n`],
];

const CHUNKED_MALFORMED: [string, string][] = [
  ['size not hex', 'zz\r\nhello\r\n0\r\n\r\n'],
  ['size with junk', '5x\r\nhello\r\n0\r\n\r\n'],
  ['negative size', '-5\r\nhello\r\n0\r\n\r\n'],
  ['no CRLF after data', '5\r\nhelloX0\r\n\r\n'],
  ['bare LF size line', '5\nhello\r\n0\r\n\r\n'],
  ['size beyond any file', 'fffffffffffffffff\r\n'],
  ['overlong size line', `5;${'x'.repeat(5000)}\r\nhello\r\n0\r\n\r\n`],
  ['bad trailer', '5\r\nhello\r\n0\r\nnot a trailer\r\n\r\n'],
];

function mutate(r: Rng, text: string): Buffer {
  const bytes = [...Buffer.from(text, 'latin1')];
  const edits = r.int(1, 4);
  const specials = [0x0d, 0x0a, 0x00, 0x20, 0x09, 0x3a, 0x2c, 0x7f, 0xff, 0x30, 0x2d];
  for (let i = 0; i < edits; i += 1) {
    const at = r.int(0, bytes.length);
    switch (r.int(0, 4)) {
      case 0:
        bytes.splice(at, 1);
        break;
      case 1:
        bytes.splice(at, 0, r.pick(specials));
        break;
      case 2:
        bytes[at] = r.int(0, 255);
        break;
      case 3:
        bytes.splice(
          at,
          0,
          ...Buffer.from(r.pick(['Content-Length: 7\r\n', 'Transfer-Encoding: chunked\r\n', ' \r\n'])),
        );
        break;
      default:
        bytes.splice(at);
    }
  }
  return Buffer.from(bytes);
}

describe(`download head fuzzer (seed ${SEED}, ${ROUNDS} rounds)`, () => {
  it('reads every valid head the same whatever the cuts, and leaves the body bytes after it', () => {
    const r = rng(SEED);
    for (const text of VALID_HEADS) {
      const bytes = Buffer.concat([Buffer.from(text, 'latin1'), Buffer.from('hello')]);
      const whole = readHead([bytes]);
      expect(whole && 'head' in whole, text).toBe(true);
      for (let round = 0; round < 50; round += 1) {
        const cut = readHead(pieces(r, bytes));
        expect(cut, text).toEqual(whole);
      }
    }
    const got = readHead([Buffer.from(VALID_HEADS[4] as string)]) as { head: ResponseHead };
    expect(got.head.status).toBe(200); // the 100 Continue before it is skipped
  });

  it('refuses every malformed head with a MalformedResponseError, in one piece or cut anywhere', () => {
    const r = rng(SEED + 1);
    for (const [why, text] of MALFORMED_HEADS) {
      for (let round = 0; round < 20; round += 1) {
        const parts = round === 0 ? [Buffer.from(text, 'latin1')] : pieces(r, Buffer.from(text, 'latin1'));
        const got = readHead(parts);
        expect(got && 'error' in got ? got.error : got, why).toBeInstanceOf(MalformedResponseError);
      }
    }
  });

  it('never throws anything but a MalformedResponseError on mutated heads, and what it accepts is sane', () => {
    const r = rng(SEED + 2);
    let refused = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const bytes = mutate(r, r.pick(VALID_HEADS));
      const got = readHead(pieces(r, bytes));
      if (got === null) continue; // incomplete: the reader waits for more (the head timer ends that)
      if ('error' in got) {
        expect(got.error, bytes.toString('latin1')).toBeInstanceOf(MalformedResponseError);
        refused += 1;
        continue;
      }
      const { head } = got;
      expect(head.status).toBeGreaterThanOrEqual(200);
      expect(head.status).toBeLessThan(1000);
      // A head that frames its body both ways never gets through, nor a length that is not plain digits.
      const framing = head.framing;
      if (framing.kind === 'length') expect(head.headers['content-length']).toMatch(/^\d+$/);
      if (framing.kind === 'chunked') expect(head.headers['content-length']).toBeUndefined();
      for (const [name, value] of Object.entries(head.headers)) {
        expect(name).toMatch(/^[!#$%&'*+.^_`|~0-9a-z-]+$/);
        expect(value).not.toMatch(/[\r\n\0]/);
      }
    }
    expect(refused).toBeGreaterThan(ROUNDS / 4);
  });

  it('decodes chunked bodies cut anywhere, and refuses every malformed one', () => {
    const r = rng(SEED + 3);
    for (let round = 0; round < ROUNDS / 4; round += 1) {
      const body = Buffer.from(Array.from({ length: r.int(0, 3000) }, () => r.int(0, 255)));
      let encoded = '';
      for (let at = 0; at < body.length;) {
        const size = Math.min(body.length - at, r.int(1, 700));
        const ext = r.next() < 0.2 ? ';name=value' : '';
        encoded += `${size.toString(16)}${ext}\r\n${body.subarray(at, at + size).toString('latin1')}\r\n`;
        at += size;
      }
      encoded += r.next() < 0.3 ? '0\r\nX-Trailer: 1\r\n\r\n' : '0\r\n\r\n';
      const wire = Buffer.concat([Buffer.from(encoded, 'latin1'), Buffer.from('AFTER')]);
      const decoder = new ChunkedDecoder();
      const out: Buffer[] = [];
      let used = 0;
      for (const part of pieces(r, wire)) {
        if (decoder.done) break;
        used += decoder.push(part, (piece) => out.push(Buffer.from(piece)));
      }
      expect(decoder.done).toBe(true);
      expect(Buffer.concat(out).equals(body)).toBe(true);
      expect(used).toBe(wire.length - 'AFTER'.length);
    }
    for (const [why, text] of CHUNKED_MALFORMED) {
      const decoder = new ChunkedDecoder();
      expect(() => {
        for (const part of pieces(r, Buffer.from(text, 'latin1'))) decoder.push(part, () => undefined);
      }, why).toThrow(MalformedResponseError);
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      const decoder = new ChunkedDecoder();
      const bytes = mutate(r, '5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n');
      try {
        for (const part of pieces(r, bytes)) decoder.push(part, () => undefined);
      } catch (error) {
        expect(error).toBeInstanceOf(MalformedResponseError);
      }
    }
  });
});

describe('the engine against a raw origin', () => {
  const openPolicy: DownloadPolicy = {
    checkRedirect: (from, location) => ({ ok: true, url: new URL(location, from) }),
  };
  let origin: RawOrigin;
  let dir: string;
  const answers = new Map<string, Buffer>();
  beforeAll(async () => {
    origin = await RawOrigin.start((head, socket) => {
      const path = /^GET (\S+)/.exec(head)?.[1] ?? '';
      socket.end(answers.get(path) ?? Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n'));
    });
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-head-fuzz-'));
  });
  afterAll(async () => {
    await origin.close();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const body = 'x'.repeat(1000);
  const cases: [string, string][] = [
    ...MALFORMED_HEADS.map(([why, text]): [string, string] => [why, `${text}${body}`]),
    ['chunk size not hex', `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n${body}\r\nzz\r\n`],
    ['chunk without its CRLF', `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n${body}XX0\r\n\r\n`],
  ];

  it('fails each malformed answer cleanly as a malformed response, on this thread and on the worker', async () => {
    let n = 0;
    for (const [why, text] of cases) {
      n += 1;
      answers.set(`/bad${n}.mp4`, Buffer.from(text, 'latin1'));
      for (const run of [downloadFile, downloadInThread]) {
        const partPath = path.join(dir, `bad${n}-${run.name}.part`);
        const error = await run({
          url: origin.url(`/bad${n}.mp4`),
          dest: path.join(dir, `bad${n}.mp4`),
          partPath,
          policy: openPolicy,
          timeoutMs: 2000,
        }).catch((e: unknown) => e);
        expect(error, `${why} (${run.name})`).toBeInstanceOf(NetworkError);
        expect((error as Error).message, why).toContain('the server sent a malformed HTTP response');
      }
    }
  });

  it('saves a chunked body, and the bytes of a gzip-labelled body as they are (the MD5 decides)', async () => {
    const chunked = `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1f4\r\n${'a'.repeat(500)}\r\n1f4\r\n${'b'.repeat(500)}\r\n0\r\n\r\n`;
    answers.set('/chunked.mp4', Buffer.from(chunked));
    const saved = await downloadInThread({
      url: origin.url('/chunked.mp4'),
      dest: path.join(dir, 'chunked.mp4'),
      partPath: path.join(dir, 'chunked.mp4.part'),
      policy: openPolicy,
      expectedBytes: 1000,
    });
    expect(await fsp.readFile(saved.path, 'latin1')).toBe(`${'a'.repeat(500)}${'b'.repeat(500)}`);

    // Tally asks for `identity`; a server that compresses anyway sends other bytes than the recording's. They
    // are never inflated into something else: with the webhook's size they fail verification (and are retried).
    const gzip = `HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 20\r\n\r\n${'\x1f\x8b'.padEnd(20, '\0')}`;
    answers.set('/gzip.mp4', Buffer.from(gzip, 'latin1'));
    const error = await downloadInThread({
      url: origin.url('/gzip.mp4'),
      dest: path.join(dir, 'gzip.mp4'),
      partPath: path.join(dir, 'gzip.mp4.part'),
      policy: openPolicy,
      expectedBytes: 1000,
    }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('VerificationError');
  });
});
