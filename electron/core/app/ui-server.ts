/**
 * The browser face of the headless core (`tally serve`): the built renderer over HTTP on loopback and the
 * contract over a WebSocket. The page itself holds no data and is served to anyone on loopback; every
 * request and event travels over the WebSocket, which needs the random token printed by `tally serve`.
 *
 * Guards, because a page on any website can try to talk to loopback:
 * - Host must be this server's own loopback name (DNS rebinding gives another Host);
 * - the WebSocket Origin must be this server's own origin (cross-site pages send theirs);
 * - the token is compared in constant time;
 * - the link handed to a browser opener carries a one-time code, not the token: an opener's command line is
 *   visible to every local user (`ps`), so the code is spent on first use (and expires within a minute) and
 *   traded for an HttpOnly, SameSite=Strict cookie that carries the token from then on.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { z } from 'zod';
import { EVENT_NAMES, type EventName } from '../../contract.js';
import { dispatchRequest } from './dispatch.js';
import type { AppCore } from './types.js';
import { nodeHttp } from '../node-http.js';
import { systemClock } from '../time.js';

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
  /** Ready-to-open URL including the token (to print: stdout is not visible to other users). */
  readonly url: string;
  /** A link for a browser opener: a one-time code instead of the token (see the header). */
  oneTimeUrl(): string;
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
  /** Fixed token (tests); random 128-bit otherwise. */
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

/** How long a one-time code stays valid: long enough for a browser to start. */
export const ONE_TIME_CODE_TTL_MS = 60_000;

/** The token from the session cookie, if the request carries one for this server's port. */
function cookieToken(req: IncomingMessage, name: string): string {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return '';
}

export async function startUiServer(opts: UiServerOptions): Promise<UiServer> {
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token ?? randomBytes(16).toString('base64url');
  const root = resolve(opts.staticDir);
  const sockets = new Set<Socket>();
  let port = 0;
  /** Unspent one-time codes and when they expire. */
  const codes = new Map<string, number>();
  const now = opts.now ?? systemClock.now;
  // Cookies are not isolated by port: the name carries it, so two `tally serve` on one host keep their own.
  const cookieName = () => `tally_ui_${port}`;

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
    if (code !== null && (pathname === '/' || pathname === '/index.html')) {
      const expires = codes.get(code);
      codes.delete(code);
      if (expires === undefined || expires < now()) {
        res
          .writeHead(401, { ...baseHeaders, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' })
          .end('This link was already used or has expired. Use the link `tally serve` printed, or start it again.\n');
        return;
      }
      // The fragment (#settings) survives a redirect without one, so the page opens where it was asked to.
      res
        .writeHead(303, {
          ...baseHeaders,
          Location: '/',
          'Cache-Control': 'no-store',
          'Set-Cookie': `${cookieName()}=${token}; HttpOnly; SameSite=Strict; Path=/`,
        })
        .end();
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

  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
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
    const offered = url.searchParams.get('token') ?? cookieToken(req, cookieName());
    if (!sameToken(offered, token)) return refuse(401, 'Unauthorized');
    wss.handleUpgrade(req, socket, head, (ws) => onClient(ws));
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
    url: `${origin}/?token=${token}`,
    oneTimeUrl() {
      const at = now();
      for (const [c, expires] of codes) if (expires < at) codes.delete(c);
      const fresh = randomBytes(16).toString('base64url');
      codes.set(fresh, at + ONE_TIME_CODE_TTL_MS);
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
