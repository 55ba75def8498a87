/**
 * The one way Tally's own HTTP servers answer with JSON (receiver, upload route, sandbox). Every answer is
 * sized, never cached, never sniffed as something else, and may ask to close the connection when the
 * request body was left unread (reading it would cost more than a new connection).
 */
import type { ServerResponse } from 'node:http';

export interface JsonAnswerOptions {
  headers?: Record<string, string>;
  /** A HEAD request: the same headers, no body. */
  head?: boolean;
  /** Close the connection after the answer (an unread body, or the server is stopping). */
  close?: boolean;
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
  res.end(options.head ? undefined : text);
}
