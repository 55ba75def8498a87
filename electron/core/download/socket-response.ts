/**
 * One GET on a raw `net`/`tls` socket, the download engine's wire (issue 34). Node's `http` costs a parser
 * callback, a stream push, an event and a buffer per 64 KiB chunk: 0.65-0.80x curl over plain HTTP, where a
 * socket read straight into a reused buffer and written at its offset is at the disk's pace. So the socket reads
 * into one staging buffer per connection (the `onread` option: no buffer per read, no stream), the head is
 * checked by response-head.ts, a chunked body is decoded in place (chunked-decoder.ts), and the body goes to a
 * sink in runs of up to STAGING_BYTES: a TLS record is 16 KiB, and a write per record would cost more than the
 * TLS itself. A slow connection's bytes never wait: what arrived is handed over at the end of the turn.
 *
 * TLS is verified exactly as https.request does (Node's roots plus NODE_EXTRA_CA_CERTS, the host name checked
 * against the certificate, SNI sent for names). Proxies: the engine before this one (an `http.Agent` of its own)
 * did not use one either. There is no keep-alive: every request asks `Connection: close`.
 */
import type { LookupFunction, Socket } from 'node:net';
import net from 'node:net';
import { TimeoutError } from './errors.js';
import { ChunkedDecoder } from './chunked-decoder.js';
import { HeadReader, type BodyFraming } from './response-head.js';

/** Bytes gathered before they are handed to the sink (and the most one read may bring). */
export const STAGING_BYTES = 512 * 1024;
/** A read is never offered less room than this: below it the staged bytes are handed over first. */
const MIN_READ_BYTES = 64 * 1024;
/**
 * Room past STAGING_BYTES for reads that come while the socket is paused: a TLS socket hands over the records it
 * has already decrypted after a pause (one to a few of 16 KiB each, measured), and none may be lost.
 */
const SLACK_BYTES = 128 * 1024;
const USER_AGENT = 'Tally (recording downloader)';

/** Where a body goes. */
export interface BodySink {
  /**
   * Takes `piece` (a view into the staging buffer, valid only until this returns or its promise settles) and
   * answers whether the body may go on: false once the sink has all it wants (its limit), and the connection is
   * closed. A promise holds the socket paused until it settles.
   */
  write(piece: Buffer): boolean | Promise<boolean>;
}

export interface SocketRequest {
  url: URL;
  headers: Record<string, string>;
  lookup?: LookupFunction;
  signal?: AbortSignal;
  /** Idle time without a byte before TimeoutError; also the time allowed for the whole head. */
  timeoutMs: number;
  /** Names the download in errors (host only). */
  endpoint: string;
  /** Makes the error of a failed connection (the engine's mapping). */
  mapError(error: unknown): Error;
}

type Phase = 'head' | 'held' | 'body' | 'done';

/** A connection closed in the middle of a body: the same error Node's http gives, so the same message. */
function cutShort(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

/** The answer to one GET: its head, and its body read on demand with `pump`. */
export class SocketResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string | undefined>;
  /** The body arrived whole (its length, its last chunk, or the close that ends a body without a length). */
  complete = false;
  #exchange: Exchange;

  constructor(exchange: Exchange, status: number, headers: Record<string, string | undefined>) {
    this.#exchange = exchange;
    this.statusCode = status;
    this.headers = headers;
  }

  get destroyed(): boolean {
    return this.#exchange.socket.destroyed;
  }

  /** Closes the connection (the rest of the body is not read). */
  destroy(error?: Error): void {
    this.#exchange.close(error);
  }

  /** Drops the body: the connection is not reused, so it is closed. */
  resume(): void {
    this.destroy();
  }

  /**
   * Reads the body into `sink` until it is complete or the sink takes less than it was offered.
   * Resolves with whether the body was complete; rejects with the connection's error after the bytes that had
   * arrived intact were given to the sink (the part keeps them, the next attempt resumes after them).
   */
  pump(sink: BodySink): Promise<{ complete: boolean }> {
    return this.#exchange.pump(sink).then((complete) => {
      this.complete = complete;
      return { complete };
    });
  }

  /**
   * Up to `max` bytes of the body (an error page's start, a thumbnail), then the connection is closed.
   * @throws the connection's error when the body broke off before its end or `max`.
   */
  async readSome(max: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      await this.pump({
        write: (piece) => {
          const take = Math.min(piece.length, max - size);
          chunks.push(Buffer.from(piece.subarray(0, take)));
          size += take;
          return size < max;
        },
      });
    } finally {
      this.destroy();
    }
    return Buffer.concat(chunks);
  }
}

/** The one connection of a SocketResponse and its reading state. */
class Exchange {
  socket!: Socket;
  #phase: Phase = 'head';
  #staging = Buffer.allocUnsafe(STAGING_BYTES + SLACK_BYTES);
  /** Bytes of the body staged (from offset 0). */
  #filled = 0;
  #head = new HeadReader();
  #framing: BodyFraming = { kind: 'close' };
  /** Body bytes still to come under Content-Length. */
  #left = 0;
  #chunks: ChunkedDecoder | null = null;
  #sink: BodySink | null = null;
  /** A handover to the sink is running (the socket is paused until it ends). */
  #writing = false;
  #flushQueued = false;
  #ended = false;
  #failure: Error | null = null;
  #settle: { resolve(complete: boolean): void; reject(error: Error): void } | null = null;
  #opened!: { resolve(res: SocketResponse): void; reject(error: Error): void };
  #headTimer: NodeJS.Timeout | null = null;
  #onAbort = (): void => this.close(this.#abortReason());

  constructor(private readonly req: SocketRequest) {}

  open(): Promise<SocketResponse> {
    const { url, signal } = this.req;
    return new Promise<SocketResponse>((resolve, reject) => {
      this.#opened = { resolve, reject };
      if (signal?.aborted) {
        reject(this.#abortReason());
        return;
      }
      const head = requestHead(url, this.req.headers);
      const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
      const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
      const onread = {
        buffer: () => this.#room(),
        callback: (bytes: number) => this.#read(bytes),
      };
      const common = { host: hostname, port, onread, ...(this.req.lookup ? { lookup: this.req.lookup } : {}) };
      const secure = url.protocol === 'https:';
      // SNI names a host, never an address (RFC 6066); the certificate is checked against either.
      // TLS is loaded with the first https download, not with every process that imports the engine (issue 22).
      const socket = secure
        ? process.getBuiltinModule('node:tls').connect({
            ...common,
            ...(net.isIP(hostname) ? {} : { servername: hostname }),
            ALPNProtocols: ['http/1.1'],
          })
        : net.connect(common);
      this.socket = socket;
      socket.once(secure ? 'secureConnect' : 'connect', () => socket.write(head));
      socket.setTimeout(this.req.timeoutMs, () => this.close(new TimeoutError(this.req.endpoint, this.req.timeoutMs)));
      // The idle timer counts only silence: a head trickled a byte a second gets this much in all (issue 20).
      this.#headTimer = setTimeout(() => {
        if (this.#phase === 'head') this.close(new TimeoutError(this.req.endpoint, this.req.timeoutMs));
      }, this.req.timeoutMs);
      socket.on('error', (error) => this.#fail(error));
      socket.on('end', () => this.#end());
      socket.on('close', () => {
        this.#clearHeadTimer();
        signal?.removeEventListener('abort', this.#onAbort);
        if (!this.#ended) this.#fail(this.#failure ?? cutShort());
      });
      signal?.addEventListener('abort', this.#onAbort, { once: true });
    });
  }

  #abortReason(): Error {
    const reason: unknown = this.req.signal?.reason;
    return reason instanceof Error ? reason : new DOMException('The download was stopped.', 'AbortError');
  }

  #clearHeadTimer(): void {
    if (this.#headTimer) clearTimeout(this.#headTimer);
    this.#headTimer = null;
  }

  /** The buffer the next read goes into: the free end of the staging buffer (handed over first when short). */
  #room(): Buffer {
    if (this.#phase === 'body' && STAGING_BYTES - this.#filled < MIN_READ_BYTES) this.#handOver();
    const used = this.#phase === 'held' ? this.#heldRest : this.#phase === 'body' ? this.#filled : 0;
    if (this.#staging.length - used < 2 * 16 * 1024) {
      // Paused, and still more records than the slack holds (never seen): a bigger buffer rather than a lost byte.
      const bigger = Buffer.allocUnsafe(this.#staging.length * 2);
      this.#staging.copy(bigger, 0, 0, used);
      this.#staging = bigger;
    }
    this.#readAt = used;
    // The slack past STAGING_BYTES is only for reads that come while paused (see SLACK_BYTES).
    const paused = this.#writing || this.#phase === 'held';
    return this.#staging.subarray(used, paused ? this.#staging.length : Math.max(STAGING_BYTES, used + MIN_READ_BYTES));
  }

  /**
   * Where the next read lands. Node asks for the next read's buffer right after each read's callback, so a
   * handover between reads (the end of a turn, the start of pump) leaves it past the staged bytes: #read moves it.
   */
  #readAt = 0;

  /** One read of `bytes` into the staging buffer at #filled. Returns false to pause the socket. */
  #read(bytes: number): boolean {
    const at = this.#readAt;
    const start = this.#phase === 'held' ? this.#heldRest : this.#filled;
    // The read landed where the buffer was asked for; the staged bytes may have moved since (see #readAt).
    if (this.#phase !== 'head' && at !== start) this.#staging.copyWithin(start, at, at + bytes);
    try {
      if (this.#phase === 'head') return this.#readHead(at, bytes);
      if (this.#phase === 'held') {
        // Read after the pause (TLS records already decrypted): kept behind the rest of the first read.
        this.#heldRest += bytes;
        return false;
      }
      if (this.#phase !== 'body') return false;
      this.#takeBody(start, bytes);
    } catch (error) {
      this.close(error as Error);
      return false;
    }
    return this.#afterBody();
  }

  #readHead(start: number, bytes: number): boolean {
    const got = this.#head.feed(this.#staging.subarray(start, start + bytes));
    if (!got) return true; // the head reader keeps what it needs: the staging buffer starts over
    this.#clearHeadTimer();
    const { head, used } = got;
    this.#framing = head.framing;
    this.#left = head.framing.kind === 'length' ? head.framing.length : 0;
    this.#chunks = head.framing.kind === 'chunked' ? new ChunkedDecoder() : null;
    this.#phase = 'held';
    // The body bytes of this read wait at the start of the buffer until the caller pumps the body.
    const rest = bytes - used;
    this.#staging.copyWithin(0, start + used, start + bytes);
    this.#heldRest = rest;
    this.#opened.resolve(new SocketResponse(this, head.status, head.headers));
    // Nothing more is read until the caller has decided what to do with the answer.
    return false;
  }

  /** Raw body bytes received with the head, not yet decoded (they sit at the start of the staging buffer). */
  #heldRest = 0;

  /** Decodes the `bytes` read at `start` into the staged body (in place). */
  #takeBody(start: number, bytes: number): void {
    const framing = this.#framing;
    if (framing.kind === 'length') {
      const take = Math.min(bytes, this.#left);
      this.#left -= take;
      this.#filled = start + take;
      if (this.#left === 0) this.#ended = true;
      return;
    }
    if (framing.kind === 'chunked' && this.#chunks) {
      let end = start;
      const staging = this.#staging;
      this.#chunks.push(staging.subarray(start, start + bytes), (piece) => {
        // Decoded pieces move left over the chunk lines between them (copyWithin handles the overlap).
        staging.copyWithin(
          end,
          piece.byteOffset - staging.byteOffset,
          piece.byteOffset - staging.byteOffset + piece.length,
        );
        end += piece.length;
      });
      this.#filled = end;
      if (this.#chunks.done) this.#ended = true;
      return;
    }
    if (framing.kind === 'none') {
      this.#ended = true;
      return;
    }
    this.#filled = start + bytes;
  }

  /** After body bytes were staged: hand over now, at the end of the turn, or when the body is complete. */
  #afterBody(): boolean {
    if (this.#ended) {
      this.#finish();
      return false;
    }
    if (STAGING_BYTES - this.#filled < MIN_READ_BYTES) return this.#handOver();
    if (this.#filled > 0 && !this.#flushQueued) {
      this.#flushQueued = true;
      setImmediate(() => {
        this.#flushQueued = false;
        if (this.#phase === 'body' && !this.#writing && this.#filled > 0) this.#handOver();
      });
    }
    return true;
  }

  /**
   * Gives the staged bytes to the sink. Returns false (socket paused) while an asynchronous write runs. The sink's
   * callbacks may stop the download (progress reports run inside it): a failure that comes during a write is
   * only recorded, and acted on once the write is over, so no staged byte is written twice.
   */
  #handOver(): boolean {
    const sink = this.#sink;
    if (!sink || this.#filled === 0 || this.#writing) return !this.#writing;
    const offered = this.#filled;
    const piece = this.#staging.subarray(0, offered);
    let taken: boolean | Promise<boolean>;
    this.#writing = true;
    try {
      taken = sink.write(piece);
    } catch (error) {
      this.#writing = false;
      this.#sinkFailed(error as Error);
      return false;
    }
    if (typeof taken === 'boolean') {
      this.#writing = false;
      return this.#handedOver(taken, offered);
    }
    this.socket.pause();
    taken.then(
      (more) => {
        this.#writing = false;
        if (this.#handedOver(more, offered)) {
          if (this.#ended) this.#finish();
          else this.socket.resume();
        }
      },
      (error: unknown) => {
        this.#writing = false;
        this.#sinkFailed(error as Error);
      },
    );
    return false;
  }

  /** After the sink took the `offered` staged bytes: whether reading goes on. */
  #handedOver(more: boolean, offered: number): boolean {
    // Bytes staged while an asynchronous write ran (reads after a pause) move to the front.
    if (this.#filled > offered) this.#staging.copyWithin(0, offered, this.#filled);
    this.#filled -= offered;
    if (this.#phase !== 'body') return false;
    if (!more) {
      // The sink's limit is reached: the rest of the body is not needed.
      this.#phase = 'done';
      this.socket.destroy();
      const settle = this.#settle;
      this.#settle = null;
      settle?.resolve(false);
      return false;
    }
    if (this.#failure) {
      // The connection failed (or was stopped) while the sink wrote: what is still staged goes, then the error.
      this.#fail(this.#failure);
      return false;
    }
    return true;
  }

  #sinkFailed(error: Error): void {
    this.#phase = 'done';
    this.socket.destroy();
    const settle = this.#settle;
    this.#settle = null;
    settle?.reject(error);
  }

  pump(sink: BodySink): Promise<boolean> {
    if (this.#phase !== 'held') return Promise.reject(this.#failure ?? cutShort());
    return new Promise<boolean>((resolve, reject) => {
      this.#settle = { resolve, reject };
      this.#sink = sink;
      this.#phase = 'body';
      const rest = this.#heldRest;
      this.#heldRest = 0;
      try {
        if (rest > 0) {
          this.#filled = 0;
          this.#takeBody(0, rest);
        } else if (this.#framing.kind === 'none' || (this.#framing.kind === 'length' && this.#left === 0)) {
          this.#ended = true;
        }
      } catch (error) {
        this.close(error as Error);
        return;
      }
      if (this.#ended) {
        this.#finish();
        return;
      }
      if (this.#failure) {
        // The connection ended while the answer waited: what had arrived is still handed over first.
        this.#handOver();
        this.#fail(this.#failure);
        return;
      }
      if (this.#handOver()) this.socket.resume();
    });
  }

  /** The body is complete: hand over the rest, then settle. */
  #finish(): void {
    if (this.#writing) return; // the running write settles (see #handOver)
    if (this.#filled > 0 && !this.#handOver()) return;
    if (this.#phase !== 'body') return;
    this.#ended = true;
    this.#phase = 'done';
    this.socket.destroy();
    const settle = this.#settle;
    this.#settle = null;
    settle?.resolve(true);
  }

  /** The server closed its side: the end of a body without a length, else a cut. */
  #end(): void {
    if (this.#framing.kind === 'close' && (this.#phase === 'body' || this.#phase === 'held')) {
      this.#ended = true;
      if (this.#phase === 'body') this.#finish();
      return;
    }
    if (!this.#ended) this.#fail(cutShort());
  }

  /** The connection failed: before the head, the open fails; in the body, the staged bytes go first. */
  #fail(error: Error): void {
    this.#failure ??= error;
    const failure = this.#failure;
    if (this.#phase === 'head') {
      this.#phase = 'done';
      this.#clearHeadTimer();
      this.socket.destroy();
      this.#opened.reject(this.req.mapError(failure));
      return;
    }
    if (this.#phase === 'held' || this.#writing) {
      // Held: pump() hands over the bytes that came with the head, then fails. Writing: its end does (#handedOver).
      this.socket.destroy();
      return;
    }
    if (this.#phase !== 'body') return;
    this.#phase = 'done';
    const settle = this.#settle;
    this.#settle = null;
    const staged = this.#filled > 0 ? this.#sinkTakes() : null;
    this.socket.destroy();
    if (!settle) return;
    if (staged)
      staged.then(
        () => settle.reject(failure),
        (e: unknown) => settle.reject(e as Error),
      );
    else settle.reject(failure);
  }

  /** Hands the staged bytes to the sink after the connection failed (they arrived intact). */
  #sinkTakes(): Promise<void> | null {
    const sink = this.#sink;
    if (!sink) return null;
    const piece = this.#staging.subarray(0, this.#filled);
    this.#filled = 0;
    try {
      const taken = sink.write(piece);
      return typeof taken === 'boolean' ? null : taken.then(() => undefined);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** Closes the connection; with an error, the pending open or pump fails with it. */
  close(error?: Error): void {
    if (error) {
      this.#failure ??= error;
      if (this.#phase === 'head' || this.#phase === 'body') {
        this.#fail(error);
        return;
      }
    }
    if (this.#phase !== 'body') this.#phase = 'done';
    this.socket.destroy();
  }
}

/** The request head: a GET with our headers; values with line breaks are refused (they would split the head). */
function requestHead(url: URL, headers: Record<string, string>): string {
  const all: Record<string, string> = {
    host: url.host,
    'user-agent': USER_AGENT,
    'accept-encoding': 'identity',
    connection: 'close',
    ...headers,
  };
  let text = `GET ${url.pathname}${url.search} HTTP/1.1\r\n`;
  for (const [name, value] of Object.entries(all)) {
    if (/[\r\n\0]/.test(value)) {
      throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), {
        code: 'ERR_INVALID_CHAR',
      });
    }
    text += `${name}: ${value}\r\n`;
  }
  return `${text}\r\n`;
}

/**
 * Sends one GET and resolves once the answer's head is read; the socket then waits, paused, for `pump`.
 * @throws what `mapError` makes of a connection, TLS or head failure; TimeoutError; the signal's reason.
 */
export function requestOverSocket(req: SocketRequest): Promise<SocketResponse> {
  try {
    requestHead(req.url, req.headers);
  } catch (error) {
    return Promise.reject(req.mapError(error));
  }
  return new Exchange(req).open();
}
