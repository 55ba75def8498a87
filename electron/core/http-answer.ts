/**
 * The one way Tally's own HTTP servers answer with JSON (receiver, upload route, sandbox). Every answer is
 * sized, never cached, never sniffed as something else, and may ask to close the connection when the
 * request body was left unread (reading it would cost more than a new connection).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Lingering close: after an early answer (a 413 before the body was read) the rest of the body is read and
 * dropped, at most this much for at most this long, before the connection closes. Closing with unread bytes in
 * the socket makes the kernel send a reset, and a sender still writing its body then sees EPIPE or ECONNRESET
 * and never reads the status (issue 32: a 1 MiB webhook got a reset instead of its 413 in 2 of 3 tries).
 */
export const LINGER_MAX_BYTES = 32 * 1024 * 1024;
export const LINGER_MAX_MS = 2_000;

export interface JsonAnswerOptions {
  headers?: Record<string, string>;
  /** A HEAD request: the same headers, no body. */
  head?: boolean;
  /** Close the connection after the answer (an unread body, or the server is stopping). */
  close?: boolean;
  /**
   * With `close`: the request whose body is still arriving. The answer is written at once, and the connection
   * ends only once the rest of the body was read and dropped (bounded: LINGER_MAX_BYTES, LINGER_MAX_MS).
   */
  linger?: IncomingMessage;
}

/** Writes `body` as a complete JSON answer with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown, options: JsonAnswerOptions = {}): void {
  const text = JSON.stringify(body ?? null);
  // One flat list handed to writeHead: no header map to build and read back for an answer sent at once (this
  // runs for every webhook).
  const headers: string[] = [];
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.push(name, value);
  headers.push(
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(Buffer.byteLength(text)),
    'Cache-Control',
    'no-store',
    'X-Content-Type-Options',
    'nosniff',
  );
  if (options.close) headers.push('Connection', 'close');
  res.writeHead(status, headers);
  const req = options.linger;
  if (!options.close || !req || req.complete || req.destroyed) {
    res.end(options.head ? undefined : text);
    return;
  }
  // The whole answer goes out now (the client can read it while it still writes); `end`, which closes the
  // connection, waits until the body is read to its end or the bounds are reached.
  if (!options.head) res.write(text);
  lingering.add(res);
  void discardRest(req).then(() => {
    lingering.delete(res);
    if (!res.writableEnded && !res.destroyed) res.end();
  });
}

const lingering = new WeakSet<ServerResponse>();

/** Whether `res` is a complete answer whose connection waits for the rest of the body (see `linger`). */
export function isLingering(res: ServerResponse): boolean {
  return lingering.has(res);
}

/** Reads and drops the rest of `req`, bounded by LINGER_MAX_BYTES and LINGER_MAX_MS; resolves when done either way. */
function discardRest(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', finish);
      req.off('close', finish);
      req.off('error', finish);
      req.pause();
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > LINGER_MAX_BYTES) finish();
    };
    const timer = setTimeout(finish, LINGER_MAX_MS);
    timer.unref();
    req.on('data', onData);
    req.on('end', finish);
    req.on('close', finish);
    req.on('error', finish);
    req.resume();
  });
}
