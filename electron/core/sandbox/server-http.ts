/**
 * Plumbing shared by the sandbox's servers: body reading with a cap, socket tracking for a clean close, and
 * one body pump that every response goes through so the delivery faults (throttle, mid-body drop, lying
 * Content-Length) behave the same on the API and the download server.
 */
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { FaultSpec } from './types.js';

/** An error that maps to an HTTP answer (code and message go into the body). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: OutgoingHttpHeaders = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Anything a body can be read from at any offset (a Buffer or a generated recording). */
export interface BodySource {
  readonly size: number;
  read(offset: number, target: Buffer): number;
}

/** Wraps a buffer as a BodySource. */
export function bufferSource(buffer: Buffer): BodySource {
  return {
    size: buffer.length,
    read: (offset, target) => buffer.copy(target, 0, offset, Math.min(buffer.length, offset + target.length)),
  };
}

/** Keeps every socket of a server so close() can end keep-alive connections instead of waiting for them. */
export function trackSockets(server: Server): { destroyAll(): void } {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    destroyAll() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
}

/** Listens and resolves with the bound port. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** Closes a server and destroys its sockets; resolves once the listener is gone. */
export function closeServer(server: Server, sockets: { destroyAll(): void }): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      sockets.destroyAll();
      resolve();
      return;
    }
    server.close(() => resolve());
    sockets.destroyAll();
  });
}

/** Reads the whole request body, refusing more than `limit` bytes with 413. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new HttpError(413, 'payload_too_large', `request body is larger than ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limit) {
      req.resume();
      throw new HttpError(413, 'payload_too_large', `request body is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The path of a request without its query string, exactly as sent (still percent-encoded). */
export function rawPath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The query string of a request as URLSearchParams. */
export function queryOf(req: IncomingMessage): URLSearchParams {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
}

/** An AbortSignal that fires when the response is closed (finished, or the client went away). */
export function responseSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => controller.abort());
  return controller.signal;
}

/** Waits `ms` real milliseconds unless `signal` aborts first (then rejects). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal });
}

/** Extra bytes declared by the wrongContentLength fault. */
const EXTRA_DECLARED_BYTES = 1024;
const CHUNK = 1024 * 1024;

export interface SendOptions {
  status: number;
  headers: OutgoingHttpHeaders;
  source: BodySource;
  /** First byte of `source` to send. Default 0. */
  start?: number;
  /** Bytes to send. Default: to the end of `source`. */
  length?: number;
  /** HEAD: headers only (Content-Length still announces the body). */
  head?: boolean;
  fault?: FaultSpec | null;
}

/**
 * Sends a response body from `source`, honouring the delivery faults: `rateBytesPerSec` throttles,
 * `resetAfterBytes` drops the connection after that many body bytes, `wrongContentLength` announces more
 * than it sends and then closes. Two buffers alternate so a 2 GiB body streams with flat memory.
 * Never rejects: a client that goes away simply ends the pump.
 */
export async function sendBody(res: ServerResponse, options: SendOptions): Promise<void> {
  const { source, fault } = options;
  const start = options.start ?? 0;
  const length = options.length ?? source.size - start;
  const declared = fault?.wrongContentLength ? length + EXTRA_DECLARED_BYTES : length;
  res.writeHead(options.status, { ...options.headers, 'Content-Length': String(declared) });
  if (options.head) {
    res.end();
    return;
  }
  const cut = fault?.resetAfterBytes !== undefined && fault.resetAfterBytes < length;
  const toSend = cut ? (fault?.resetAfterBytes ?? 0) : length;
  const rate = fault?.rateBytesPerSec;
  const chunkSize = rate ? Math.max(1, Math.min(64 * 1024, Math.floor(rate / 10))) : CHUNK;
  const signal = responseSignal(res);
  const writer = new ChunkWriter(res);
  try {
    const started = performance.now();
    let sent = 0;
    while (sent < toSend) {
      if (rate) {
        const due = started + (sent / rate) * 1000 - performance.now();
        if (due > 0) await sleep(due, signal);
      }
      const buffer = await writer.freeBuffer(Math.min(chunkSize, CHUNK));
      const n = source.read(start + sent, buffer.subarray(0, Math.min(buffer.length, toSend - sent)));
      if (n === 0) break;
      writer.write(buffer.subarray(0, n));
      sent += n;
    }
    await writer.flushed();
    if (cut || fault?.wrongContentLength) {
      // End the connection after what was queued: the client gets the headers and exactly `sent` body
      // bytes, then EOF before the announced length.
      if (sent === 0) res.flushHeaders();
      res.socket?.destroySoon();
      return;
    }
    res.end();
  } catch {
    // The client left (or the sandbox closed) mid-body: nothing more to do.
    res.destroy();
  }
}

/** Double-buffered writes: a buffer is reused only after the socket has taken its previous content. */
class ChunkWriter {
  private readonly buffers: Buffer[] = [];
  private readonly pending: Array<Promise<void> | null> = [null, null];
  private next = 0;
  private closedError: Error | null = null;

  constructor(private readonly res: ServerResponse) {
    res.once('close', () => {
      this.closedError ??= new Error('response closed');
    });
  }

  async freeBuffer(size: number): Promise<Buffer> {
    const i = this.next;
    const pending = this.pending[i];
    if (pending) await pending;
    if (this.closedError) throw this.closedError;
    let buffer = this.buffers[i];
    if (!buffer || buffer.length < size) {
      buffer = Buffer.allocUnsafe(size);
      this.buffers[i] = buffer;
    }
    return buffer.subarray(0, size);
  }

  write(chunk: Buffer): void {
    const i = this.next;
    this.next = 1 - i;
    this.pending[i] = new Promise<void>((resolve, reject) => {
      const onClose = () => reject(this.closedError ?? new Error('response closed'));
      this.res.once('close', onClose);
      this.res.write(chunk, (error) => {
        this.res.off('close', onClose);
        if (error) reject(error);
        else resolve();
      });
    });
    // Rejections are observed by freeBuffer/flushed; this keeps an unobserved one from crashing the process.
    this.pending[i].catch(() => {});
  }

  async flushed(): Promise<void> {
    await Promise.all(this.pending);
    if (this.closedError) throw this.closedError;
  }
}
