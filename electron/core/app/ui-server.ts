/**
 * The browser face of the headless core (`tally serve`): the built renderer over HTTP on loopback and the
 * contract over a WebSocket. The page itself holds no data and is served to anyone on loopback; every
 * request and event travels over the WebSocket, which needs the session key only this server and the pages
 * it let in know.
 *
 * Guards, because a page on any website, or any other server on loopback, can try to talk to it:
 * - Host must be this server's own loopback name (DNS rebinding gives another Host);
 * - the WebSocket Origin must be this server's own origin (cross-site pages send theirs), AND the handshake
 *   must carry the key, compared in constant time: a stolen key from another origin is refused;
 * - no link carries the key: every link (printed, or handed to a browser opener whose command line every
 *   local user can read with `ps`) carries a one-time code. The page presents it at its first handshake, where
 *   it is spent, and is sent the key, which it keeps in sessionStorage (per scheme, host AND port);
 * - nothing travels in a cookie: browsers send cookies to every port of a host, so a page served by another
 *   program on another loopback port would receive it (issue 32). Code and key travel in
 *   `Sec-WebSocket-Protocol` (contract.ts `uiProtocols`), never in a URL that a log or history keeps.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { z } from 'zod';
import { EVENT_NAMES, UI_PROTOCOL, type EventName } from '../../contract.js';
import { dispatchRequest } from './dispatch.js';
import type { AppCore } from './types.js';
import { nodeHttp } from '../node-http.js';
import { systemClock } from '../time.js';
import { registerSecret } from '../redact.js';

/** The page's Content-Security-Policy (the meta tag in index.html says the same). */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self' ws://127.0.0.1:* ws://localhost:*",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

const ClientMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('invoke'), id: z.number().int().nonnegative(), name: z.string(), args: z.unknown() }),
  z.object({ type: z.literal('subscribe'), event: z.string() }),
  z.object({ type: z.literal('unsubscribe'), event: z.string() }),
  z.object({ type: z.literal('visibility'), visible: z.boolean() }),
]);

export interface UiServer {
  /**
   * A link that opens the page once: a one-time code (see the header), valid for `ttlMs` (a minute by
   * default: what a browser opener needs; `tally serve` prints one valid until used).
   */
  oneTimeUrl(ttlMs?: number): string;
  readonly origin: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface UiServerOptions {
  core: AppCore;
  /** Folder of the built renderer (dist/renderer). */
  staticDir: string;
  host?: string;
  port?: number;
  /** Fixed session key (tests); random 128-bit otherwise. */
  token?: string;
  /**
   * Further host names (no port) the page may be reached by, for a deliberate non-loopback bind
   * (`tally serve --allow-remote`). Loopback names are always allowed.
   */
  extraHosts?: readonly string[];
  log?: (line: string) => void;
  /** Clock of the one-time codes' expiry (tests). */
  now?: () => number;
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Close code of a handshake whose key or code is refused (renderer/src/lib/transport-ws.ts says the same). */
export const CLOSE_UNAUTHORIZED = 4401;

/** How long a one-time code stays valid: long enough for a browser to start. */
export const ONE_TIME_CODE_TTL_MS = 60_000;

/** The subprotocols a handshake offers (`Sec-WebSocket-Protocol`, comma-separated). */
function offeredProtocols(req: IncomingMessage): string[] {
  return (req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

export async function startUiServer(opts: UiServerOptions): Promise<UiServer> {
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token ?? randomBytes(16).toString('base64url');
  // The session key never belongs in a log line (a request log, an error quoting a header).
  registerSecret(token);
  const root = resolve(opts.staticDir);
  const sockets = new Set<Socket>();
  let port = 0;
  /** Unspent one-time codes and when they expire. */
  const codes = new Map<string, number>();
  const now = opts.now ?? systemClock.now;
  /** Whether `code` was issued and has not expired (it is not spent here: the handshake spends it). */
  const live = (code: string) => (codes.get(code) ?? -Infinity) >= now();

  /** Host header values that name this server; anything else is DNS rebinding or a proxy. */
  const extra = (opts.extraHosts ?? []).map((h) =>
    (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h).toLowerCase(),
  );
  const allowedHosts = () =>
    new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, ...extra.map((h) => `${h}:${port}`)]);
  const allowedOrigins = () => new Set([...allowedHosts()].map((h) => `http://${h}`));

  const server: Server = nodeHttp().createServer((req, res) => {
    void serveStatic(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });

  async function serveStatic(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const baseHeaders = {
      'Content-Security-Policy': UI_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
    };
    if (!allowedHosts().has(req.headers.host ?? '')) {
      res.writeHead(421, { ...baseHeaders, 'Content-Type': 'text/plain' }).end('Misdirected request: wrong Host.\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...baseHeaders, Allow: 'GET, HEAD' }).end();
      return;
    }
    const { pathname, searchParams } = new URL(req.url ?? '/', 'http://x');
    const code = searchParams.get('code');
    // The page takes the code from its own address and spends it at its first WebSocket handshake; this only
    // says early, in words, that a link is no good.
    if (code !== null && (pathname === '/' || pathname === '/index.html') && !live(code)) {
      res
        .writeHead(401, { ...baseHeaders, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' })
        .end(
          'This link was already used or has expired: each link opens Tally once. ' +
            'Duplicate the tab that is open, or start `tally serve` again for a new link.\n',
        );
      return;
    }
    let rel: string;
    try {
      rel = decodeURIComponent(pathname);
    } catch {
      res.writeHead(400, baseHeaders).end();
      return;
    }
    if (rel === '/' || rel === '') rel = '/index.html';
    const file = normalize(join(root, rel));
    if (!file.startsWith(root + sep) || rel.includes('\0')) {
      res.writeHead(404, baseHeaders).end();
      return;
    }
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) {
      res.writeHead(404, { ...baseHeaders, 'Content-Type': 'text/plain' }).end('Not found\n');
      return;
    }
    res.writeHead(200, {
      ...baseHeaders,
      'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
      'Content-Length': info.size,
      'Cache-Control': extname(file) === '.html' ? 'no-store' : 'public, max-age=31536000, immutable',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file).pipe(res);
  }

  // The page offers UI_PROTOCOL beside its credential; the credential is never echoed back.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 1024 * 1024,
    handleProtocols: (offered) => (offered.has(UI_PROTOCOL) ? UI_PROTOCOL : false),
  });
  const visibility = new Map<WebSocket, boolean>();
  const updateVisibility = () => opts.core.setVisible([...visibility.values()].some(Boolean));

  server.on('upgrade', (req, socket, head) => {
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/ws') return refuse(404, 'Not Found');
    if (!allowedHosts().has(req.headers.host ?? '')) return refuse(421, 'Misdirected Request');
    if (!allowedOrigins().has(req.headers.origin ?? '')) return refuse(403, 'Forbidden');
    const offered = offeredProtocols(req);
    if (!offered.includes(UI_PROTOCOL)) return refuse(400, 'Bad Request');
    const key = offered.find((p) => p.startsWith('tally.key.'))?.slice('tally.key.'.length);
    const code = offered.find((p) => p.startsWith('tally.code.'))?.slice('tally.code.'.length);
    let fresh = false;
    if (key === undefined && code !== undefined) {
      // Any presentation spends the code, in time or not: a code is tried once.
      fresh = live(code);
      codes.delete(code);
    }
    if (!fresh && !(key !== undefined && sameToken(key, token))) {
      // The page itself (its own Origin) with a spent code or an old key: a browser never shows an HTTP status
      // of a handshake, so it is let in only to be told, by close code 4401, that it must be opened anew.
      // Nothing it sends is read. Any other Origin was refused above.
      wss.handleUpgrade(req, socket, head, (ws) => ws.close(CLOSE_UNAUTHORIZED, 'Unauthorized'));
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      // The page keeps the key for its reconnects and reloads (sessionStorage: this origin and this tab only).
      if (fresh) ws.send(JSON.stringify({ type: 'session', key: token }));
      onClient(ws);
    });
  });

  function onClient(ws: WebSocket): void {
    const subscriptions = new Map<EventName, () => void>();
    visibility.set(ws, false);
    // A protocol error (e.g. a frame over maxPayload) is emitted here before ws closes the socket; without a
    // listener it would be an uncaught exception that ends the whole process. 'close' does the cleanup.
    ws.on('error', () => undefined);
    const send = (msg: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    ws.on('message', (data: RawData) => {
      let raw: unknown;
      try {
        raw = JSON.parse(String(data));
      } catch {
        return send({ type: 'error', error: { code: 'invalid_input', message: 'Messages must be JSON.' } });
      }
      const parsed = ClientMessage.safeParse(raw);
      if (!parsed.success) {
        const id = typeof raw === 'object' && raw && 'id' in raw ? (raw as { id: unknown }).id : undefined;
        const error = { code: 'invalid_input', message: 'Malformed message.' };
        return send(typeof id === 'number' ? { id, type: 'result', ok: false, error } : { type: 'error', error });
      }
      const msg = parsed.data;
      switch (msg.type) {
        case 'invoke':
          void dispatchRequest(opts.core.handlers, msg.name, msg.args, opts.log).then((env) =>
            send({ id: msg.id, type: 'result', ...env }),
          );
          break;
        case 'subscribe': {
          const event = msg.event as EventName;
          if (!EVENT_NAMES.includes(event) || subscriptions.has(event)) break;
          subscriptions.set(
            event,
            opts.core.on(event, (payload) => send({ type: 'event', event, payload })),
          );
          break;
        }
        case 'unsubscribe': {
          const event = msg.event as EventName;
          subscriptions.get(event)?.();
          subscriptions.delete(event);
          break;
        }
        case 'visibility':
          visibility.set(ws, msg.visible);
          updateVisibility();
          break;
      }
    });
    ws.on('close', () => {
      for (const off of subscriptions.values()) off();
      subscriptions.clear();
      visibility.delete(ws);
      updateVisibility();
    });
  }

  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(opts.port ?? 0, host, () => res());
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closed: Promise<void> | null = null;
  return {
    oneTimeUrl(ttlMs = ONE_TIME_CODE_TTL_MS) {
      const at = now();
      for (const [c, expires] of codes) if (expires < at) codes.delete(c);
      const fresh = randomBytes(16).toString('base64url');
      codes.set(fresh, at + ttlMs);
      return `${origin}/?code=${fresh}`;
    },
    origin,
    port,
    close() {
      closed ??= (async () => {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        await new Promise<void>((res) => {
          server.close(() => res());
          for (const s of sockets) s.destroy();
        });
      })();
      return closed;
    },
  };
}
