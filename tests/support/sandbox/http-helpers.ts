/**
 * Helpers for specs that drive the sandbox over real HTTP: a webhook receiver that records what it gets,
 * a raw GET that reports truncated bodies instead of hiding them, and an MP4 box walker.
 */
import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves with the next request not yet taken. */
  next(): Promise<ReceivedRequest>;
  /** Status the receiver answers with from now on. */
  setStatus(status: number): void;
  close(): Promise<void>;
}

/** Starts a webhook receiver on 127.0.0.1 that records every request. */
export async function startReceiver(status = 200): Promise<Receiver> {
  let answer = status;
  const requests: ReceivedRequest[] = [];
  const waiters: Array<(r: ReceivedRequest) => void> = [];
  let taken = 0;
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(received);
      res.writeHead(answer, { 'Content-Type': 'text/plain' }).end('ok');
      const waiter = waiters.shift();
      if (waiter) {
        taken++;
        waiter(received);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    next() {
      if (taken < requests.length) return Promise.resolve(requests[taken++] as ReceivedRequest);
      return new Promise((resolve) => waiters.push(resolve));
    },
    setStatus(s) {
      answer = s;
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Set when the connection ended before the announced body was complete. */
  error: Error | null;
}

/** A GET (or HEAD) without keep-alive that returns whatever arrived, even when the body is cut short. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let settled = false;
      const done = (error: Error | null) => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), error });
      };
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(res.complete ? null : new Error('incomplete body')));
      res.on('error', (e) => done(e));
      res.on('close', () => done(res.complete ? null : new Error('connection closed before the body was complete')));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends JSON (POST by default; no body for GET/HEAD or `undefined`) and parses the answer (text kept too). */
export async function postJson(
  url: string,
  body: unknown,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const method = init.method ?? 'POST';
  const withBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
  const res = await fetch(url, {
    method,
    headers: withBody ? { 'Content-Type': 'application/json', ...init.headers } : init.headers,
    body: withBody ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Polls `check` until it returns a truthy value or the deadline passes (for states with no event). */
export async function waitFor<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export interface Mp4Box {
  type: string;
  offset: number;
  size: number;
}

/** Walks the top-level boxes of an MP4 held in `bytes` (32-bit sizes and 64-bit largesize). */
export function walkBoxes(bytes: Buffer, fileSize = bytes.length): Mp4Box[] {
  const boxes: Mp4Box[] = [];
  let offset = 0;
  while (offset < fileSize) {
    if (offset + 8 > bytes.length) throw new Error(`box header at ${offset} is outside the bytes given`);
    let size = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    if (size === 1) size = Number(bytes.readBigUInt64BE(offset + 8));
    else if (size === 0) size = fileSize - offset;
    if (size < 8) throw new Error(`box ${type} at ${offset} has impossible size ${size}`);
    boxes.push({ type, offset, size });
    offset += size;
  }
  if (offset !== fileSize) throw new Error(`boxes end at ${offset}, file has ${fileSize} bytes`);
  return boxes;
}
