/**
 * TEST HELPER (not used by the app): a small Range-capable origin on 127.0.0.1 for the download specs. It
 * serves deterministic, position-dependent bytes (a byte written at the wrong offset changes the hash) and
 * can misbehave on demand: reset mid-body, error statuses, no Range support, per-connection throttling,
 * a wrong Content-Length, a pause after N bytes (for kill tests), redirects.
 */
import { createHash } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const BLOCK = 1 << 16;

function xorshift(seed: number): () => number {
  let x = seed | 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

function mix32(n: number): number {
  let h = Math.imul(n ^ 0x85ebca6b, 0xc2b2ae35);
  h ^= h >>> 13;
  h = Math.imul(h, 0x27d4eb2f);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Deterministic content: byte i depends on i and the seed, with no short period. */
export class TestContent {
  readonly #pattern: Uint32Array;
  constructor(
    readonly size: number,
    readonly seed = 1,
    /** Bytes that replace the start of the content (a container signature, for type sniffing). */
    readonly head: Buffer | null = null,
  ) {
    const next = xorshift(seed * 7919 + 17);
    this.#pattern = new Uint32Array(BLOCK / 4).map(() => next());
  }

  #block(index: number): Buffer {
    const words = new Uint32Array(this.#pattern);
    const key = mix32(index ^ Math.imul(this.seed, 0x9e3779b1));
    for (let i = 0; i < words.length; i += 1) words[i] = (words[i] ?? 0) ^ key;
    const block = Buffer.from(words.buffer);
    if (index === 0 && this.head) this.head.copy(block, 0, 0, Math.min(this.head.length, block.length));
    return block;
  }

  /** Bytes [start, end) (end exclusive), produced block by block. */
  *chunks(start: number, end: number, chunkSize = BLOCK): Generator<Buffer> {
    let pos = start;
    let cached: { index: number; data: Buffer } | null = null;
    while (pos < end) {
      const index = Math.floor(pos / BLOCK);
      if (!cached || cached.index !== index) cached = { index, data: this.#block(index) };
      const offset = pos - index * BLOCK;
      const take = Math.min(BLOCK - offset, end - pos, chunkSize);
      yield cached.data.subarray(offset, offset + take);
      pos += take;
    }
  }

  slice(start: number, end: number): Buffer {
    return Buffer.concat([...this.chunks(start, end)]);
  }

  digest(algorithm: 'md5' | 'sha256'): string {
    const hash = createHash(algorithm);
    for (const chunk of this.chunks(0, this.size)) hash.update(chunk);
    return hash.digest('hex');
  }
}

export interface TestFileSpec {
  size: number;
  /** Changes the content (a "new version" of the same URL). Default 1. */
  seed?: number;
  /** 'md5' (default for files up to 64 MiB): `"<md5>"` like S3; a string: sent as is; null: none. */
  etag?: 'md5' | string | null;
  lastModified?: string | null;
  /** Bytes the file starts with (see TestContent). */
  head?: Buffer;
}

export interface TestFileInfo {
  content: TestContent;
  etag: string | null;
  size: number;
  md5(): string;
  sha256(): string;
}

export interface TestFaults {
  /** Answer this status (with a small body) instead of the file. */
  status?: number;
  /** The error body is an HTML page. */
  html?: boolean;
  /** Close the connection after sending this many body bytes (the client sees a premature end). */
  resetAfterBytes?: number;
  /** Declare 1000 bytes more than are sent, then close. */
  wrongContentLength?: boolean;
  /** Ignore Range and If-Range: always 200 with the whole file. */
  noRange?: boolean;
  /** Send the body chunked, without Content-Length (and without range support): the size is unknown. */
  noContentLength?: boolean;
  /** Throttle every response body to this rate (per connection, like nginx limit_rate). */
  rateBytesPerSec?: number;
  /** Throttle all response bodies together to this rate (a link they share: more connections do not help). */
  linkBytesPerSec?: number;
  /** Stop sending after this many body bytes (of one response) until `releasePaused()`; emits 'paused'. */
  pauseAfterBytes?: number;
  /**
   * The `Date` header of every answer: a text sent as is (a garbled one), or null for none at all. Default: Node's,
   * the real time.
   */
  date?: string | null;
  /** Only the next N file requests get these faults. Default: until changed. */
  times?: number;
}

export interface RequestRecord {
  method: string;
  path: string;
  range: string | undefined;
  ifRange: string | undefined;
  status: number;
  /** Body bytes sent so far in this response. */
  sent: number;
}

interface Redirect {
  to: string;
  status: number;
}

export class TestServer extends EventEmitter {
  readonly requests: RequestRecord[] = [];
  /** Responses being sent right now, and the most seen at once. */
  active = 0;
  maxActive = 0;
  /** Body bytes sent over all responses. */
  bytesSent = 0;
  /** TCP connections currently open; 'socket-closed' fires whenever one closes. */
  openSockets = 0;
  readonly #files = new Map<string, { content: TestContent; etag: string | null; lastModified: string | null }>();
  readonly #redirects = new Map<string, Redirect>();
  #faults: TestFaults | null = null;
  #paused: Array<() => void> = [];
  /** The shared link of `linkBytesPerSec`: when it started and what went through it since. */
  #link: { began: number; sent: number } | null = null;
  #server: http.Server;
  origin = '';

  private constructor() {
    super();
    this.#server = http.createServer((req, res) => {
      void this.#handle(req, res).catch(() => res.destroy());
    });
    this.#server.keepAliveTimeout = 1000;
    this.#server.on('connection', (socket) => {
      this.openSockets += 1;
      socket.once('close', () => {
        this.openSockets -= 1;
        this.emit('socket-closed', this.openSockets);
      });
    });
  }

  /** Resolves once no connection is open (every client closed its sockets). */
  async allSocketsClosed(): Promise<void> {
    while (this.openSockets > 0) await once(this, 'socket-closed');
  }

  /** Starts a server on 127.0.0.1 and an ephemeral port. */
  static async start(): Promise<TestServer> {
    const server = new TestServer();
    server.#server.listen(0, '127.0.0.1');
    await once(server.#server, 'listening');
    const { port } = server.#server.address() as AddressInfo;
    server.origin = `http://127.0.0.1:${port}`;
    return server;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** Publishes (or replaces) a file; `sha256()`/`md5()` hash the content on demand. */
  addFile(path: string, spec: TestFileSpec): TestFileInfo {
    const content = new TestContent(spec.size, spec.seed ?? 1, spec.head ?? null);
    let md5: string | null = null;
    const md5Of = (): string => (md5 ??= content.digest('md5'));
    const wantMd5 = spec.etag === undefined ? spec.size <= 64 * 1024 * 1024 : spec.etag === 'md5';
    const etag = wantMd5 ? `"${md5Of()}"` : spec.etag === 'md5' || spec.etag === undefined ? null : spec.etag;
    this.#files.set(path, { content, etag, lastModified: spec.lastModified ?? null });
    return { content, etag, size: spec.size, md5: md5Of, sha256: () => content.digest('sha256') };
  }

  removeFile(path: string): void {
    this.#files.delete(path);
  }

  /** `from` answers `status` with `Location: to` (absolute or relative, as given). */
  addRedirect(from: string, to: string, status = 302): void {
    this.#redirects.set(from, { to, status });
  }

  setFaults(faults: TestFaults | null): void {
    this.#faults = faults;
    this.#link = null;
  }

  /** Lets every paused response continue. */
  releasePaused(): void {
    const waiting = this.#paused;
    this.#paused = [];
    for (const resume of waiting) resume();
  }

  /** File requests (redirects excluded) in arrival order. */
  fileRequests(path?: string): RequestRecord[] {
    return this.requests.filter((r) => !this.#redirects.has(r.path) && (path === undefined || r.path === path));
  }

  async close(): Promise<void> {
    this.releasePaused();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #takeFaults(): TestFaults | null {
    const faults = this.#faults;
    if (!faults) return null;
    if (faults.times !== undefined) {
      const left = faults.times - 1;
      this.#faults = left > 0 ? { ...faults, times: left } : null;
    }
    return faults;
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const record: RequestRecord = {
      method: req.method ?? 'GET',
      path,
      range: req.headers.range,
      ifRange: typeof req.headers['if-range'] === 'string' ? req.headers['if-range'] : undefined,
      status: 0,
      sent: 0,
    };
    this.requests.push(record);
    this.emit('request', record);

    const redirect = this.#redirects.get(path);
    if (redirect) {
      record.status = redirect.status;
      res.writeHead(redirect.status, { location: redirect.to, 'content-length': '0' }).end();
      return;
    }
    const file = this.#files.get(path);
    const faults = this.#takeFaults();
    if (faults?.date === null) res.sendDate = false;
    else if (faults?.date !== undefined) res.setHeader('Date', faults.date);
    if (faults?.status) {
      record.status = faults.status;
      const body = faults.html
        ? `<html><head><title>${faults.status} Error</title></head><body>error</body></html>`
        : `<?xml version="1.0"?><Error><Code>${faults.status === 404 ? 'NoSuchKey' : 'InternalError'}</Code></Error>`;
      res.writeHead(faults.status, { 'content-type': faults.html ? 'text/html' : 'application/xml' }).end(body);
      return;
    }
    if (!file) {
      record.status = 404;
      res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code></Error>');
      return;
    }

    const size = file.content.size;
    let start = 0;
    let end = size;
    let status = 200;
    const validatorOk =
      req.headers['if-range'] === undefined ||
      req.headers['if-range'] === file.etag ||
      (file.lastModified !== null && req.headers['if-range'] === file.lastModified);
    const range = faults?.noRange ? undefined : req.headers.range;
    if (range && validatorOk) {
      const m = /^bytes=(\d*)-(\d*)$/.exec(range);
      if (m && (m[1] !== '' || m[2] !== '')) {
        if (m[1] === '') {
          start = Math.max(0, size - Number(m[2]));
        } else {
          start = Number(m[1]);
          if (m[2] !== '') end = Math.min(size, Number(m[2]) + 1);
        }
        if (start >= size || start >= end) {
          record.status = 416;
          res.writeHead(416, { 'content-range': `bytes */${size}`, 'content-length': '0' }).end();
          return;
        }
        status = 206;
      }
    }
    const headers: http.OutgoingHttpHeaders = {
      'content-type': 'video/mp4',
      'content-length': String(end - start + (faults?.wrongContentLength ? 1000 : 0)),
    };
    if (faults?.noContentLength) delete headers['content-length'];
    if (!faults?.noRange && !faults?.noContentLength) headers['accept-ranges'] = 'bytes';
    if (status === 206) headers['content-range'] = `bytes ${start}-${end - 1}/${size}`;
    if (file.etag) headers.etag = file.etag;
    if (file.lastModified) headers['last-modified'] = file.lastModified;
    record.status = status;
    res.writeHead(status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }

    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    res.once('close', () => {
      this.active -= 1;
    });
    await this.#sendBody(res, file.content, start, end, faults, record);
  }

  async #sendBody(
    res: http.ServerResponse,
    content: TestContent,
    start: number,
    end: number,
    faults: TestFaults | null,
    record: RequestRecord,
  ): Promise<void> {
    const rate = faults?.rateBytesPerSec;
    const link = faults?.linkBytesPerSec;
    const slowest = Math.min(rate ?? Infinity, link ?? Infinity);
    const chunkSize = Number.isFinite(slowest) ? Math.max(1024, Math.min(BLOCK, Math.floor(slowest / 50))) : BLOCK;
    const stopAt = faults?.resetAfterBytes;
    let pauseAt = faults?.pauseAfterBytes;
    let began = performance.now();
    let sentSinceRateStart = 0;
    for (const full of content.chunks(start, end, chunkSize)) {
      let chunk = full;
      while (chunk.length > 0) {
        if (res.destroyed) return;
        const limits = [stopAt, pauseAt].filter((n): n is number => n !== undefined);
        const limit = limits.length > 0 ? Math.min(...limits) : undefined;
        const piece =
          limit !== undefined && record.sent + chunk.length > limit ? chunk.subarray(0, limit - record.sent) : chunk;
        if (piece.length > 0) {
          record.sent += piece.length;
          this.bytesSent += piece.length;
          sentSinceRateStart += piece.length;
          chunk = chunk.subarray(piece.length);
          if (!res.write(piece)) await drained(res);
        }
        if (stopAt !== undefined && record.sent >= stopAt) {
          this.emit('reset', record);
          // FIN after the queued bytes: the client gets exactly `stopAt` bytes, then a premature end.
          res.socket?.end();
          return;
        }
        if (pauseAt !== undefined && record.sent >= pauseAt) {
          await new Promise<void>((resolve) => {
            this.#paused.push(resolve);
            this.emit('paused', record);
          });
          pauseAt = undefined;
        }
      }
      if (link) {
        this.#link ??= { began: performance.now(), sent: 0 };
        this.#link.sent += full.length;
        const wait = this.#link.began + (this.#link.sent * 1000) / link - performance.now();
        if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
        // The link makes up for a short stall of this process (the downloader shares its event loop: on a loaded
        // machine its turns run late), so one connection is not read as slower than two; not for a long one
        // (no catch-up burst of more than a quarter of a second's bytes).
        else if (wait < -250) this.#link = { began: performance.now(), sent: 0 };
      }
      if (rate) {
        const wait = began + (sentSinceRateStart * 1000) / rate - performance.now();
        if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
        // Like the link above, no catch-up burst after this process was busy: a connection never beats its rate.
        if (sentSinceRateStart > 4 * rate || wait < -50) {
          began = performance.now();
          sentSinceRateStart = 0;
        }
      }
    }
    if (res.destroyed) return;
    if (faults?.wrongContentLength) {
      res.socket?.end();
      return;
    }
    res.end();
  }
}

function drained(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
