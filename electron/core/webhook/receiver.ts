/**
 * The front door of the recording pipeline: a small HTTP server that takes recording-complete webhooks and
 * writes them into the durable inbox. It answers 200 only after the job is fsync'd, and does nothing slow (no
 * download, no DNS): the service documents no retries, so the answer must be fast and truthful.
 *
 * Routes are `/<prefix>/<token>[/<subpath>]`; anything else is 404, with tokens compared in constant time.
 * Built in: `/hooks/<hooks token>` (recording webhooks, and the channel lifecycle hook's `GET ?action=…&chid=…`)
 * and `/healthz/<hooks token>` (self-check through a tunnel).
 * Other features (web client uploads) mount their own prefix with `addRoute` and their own token.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { nested, note, noteText, type Note } from '../notes.js';
import { ConfigError } from '../errors.js';
import type { DownloadOriginPolicy } from '../net/url-policy.js';
import type { Inbox } from '../recordings/inbox.js';
import type { RecordingJob } from '../recordings/types.js';
import { WebhookRejection, parseWebhook } from './parse.js';
import { parseChannelHook, type ChannelHookCall } from './channel-hook.js';
import type { TokenName, TokenStore } from './token.js';
import { isLingering, sendJson } from '../http-answer.js';
import { ConnectionSlots } from './connection-slots.js';
import { nodeHttp } from '../node-http.js';
import { systemClock } from '../time.js';

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

export interface ReceiverTimeouts {
  /** Time allowed for the request headers (slowloris). */
  headersMs?: number;
  /** Time allowed for the whole request including the body (raised for uploads, which can take hours). */
  requestMs?: number;
  /**
   * Time allowed for a webhook's body once its headers arrived, whatever `requestMs` is: a webhook is a few
   * hundred bytes, so a body trickled byte by byte is refused instead of holding a connection for hours.
   */
  webhookBodyMs?: number;
  /** Idle keep-alive connections are closed after this. */
  keepAliveMs?: number;
  /** How often Node checks the two limits above (tests use a short interval). */
  checkIntervalMs?: number;
}

/**
 * Unfinished recordings beyond which new webhooks are refused (503). A studio has dozens a day; only a flood of
 * forged webhooks gets here, and refusing then keeps the journal, memory and retries bounded for the real ones.
 */
export const DEFAULT_MAX_UNFINISHED_JOBS = 5_000;

export interface WebhookReceiverOptions {
  inbox: Pick<Inbox, 'add'> & { readonly unfinished?: number };
  /** See DEFAULT_MAX_UNFINISHED_JOBS. */
  maxUnfinishedJobs?: number;
  policy: DownloadOriginPolicy;
  tokens: TokenStore;
  /** Loopback by default: the public side is a tunnel, never an open port. */
  host?: string;
  port?: number;
  maxBodyBytes?: number;
  timeouts?: ReceiverTimeouts;
  maxConnections?: number;
}

/** Why a request was refused, for the activity log. Never carries a token or a full URL. */
export interface Rejection {
  status: number;
  reason: string;
  /** The reason as a note, where the producer reads it (a 503: new recordings are being refused). */
  reasonNote?: Note;
  remoteAddress: string;
  /** The channel of a webhook that parsed but could not be taken (its recording is lost unless resent). */
  channelId?: string;
}

export interface RouteInfo {
  /** What follows `/<prefix>/<token>`, without the leading slash ('' for the route itself). */
  subpath: string;
  /** The request URL (path and query) parsed against a placeholder origin. */
  url: URL;
  remoteAddress: string;
}

/**
 * A mounted route's handler. It owns the request: method checks, body reading and the answer. If it throws
 * before answering, the receiver answers 500.
 */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, info: RouteInfo) => void | Promise<void>;

interface ReceiverEvents {
  /** A new job is on disk. `warnings` names webhook fields that were ignored (e.g. a malformed filesize). */
  received: [job: RecordingJob, warnings: string[]];
  duplicate: [job: RecordingJob];
  rejected: [rejection: Rejection];
  /** The channel lifecycle hook: a channel opened or closed (nothing is stored or downloaded). */
  channel: [call: ChannelHookCall];
  /** The last webhook being handled has been answered (see `webhooksWaiting`). */
  quiet: [];
}

interface Route {
  token: TokenName;
  handler: RouteHandler;
}

/** The client went away mid-request: there is nobody to answer. */
class ClientGone extends Error {}

/** See the file comment. Create, `start()`, hand `localUrl` to the tunnel, `stop()` on quit. */
export class WebhookReceiver extends EventEmitter<ReceiverEvents> {
  /** Random per instance: the tunnel health check compares it to know it reached this very receiver. */
  readonly instanceId = randomBytes(12).toString('base64url');
  readonly #probeKey = randomBytes(32);
  readonly #inbox: WebhookReceiverOptions['inbox'];
  readonly #policy: DownloadOriginPolicy;
  readonly #tokens: TokenStore;
  readonly #host: string;
  readonly #port: number;
  readonly #maxBody: number;
  readonly #timeouts: Required<ReceiverTimeouts>;
  readonly #maxUnfinished: number;
  readonly #routes = new Map<string, Route>();
  readonly #inFlight = new Set<Promise<void>>();
  /** Sockets that got an answer before their request was fully read (they close after it). */
  readonly #answered = new WeakSet<Duplex>();
  /** Open connections; a full house makes room for the newcomer (see connection-slots.ts). */
  readonly #slots: ConnectionSlots;
  #server: Server | null = null;
  #stopping = false;
  #webhooksWaiting = 0;
  /** When the last webhook arrived and was answered, and the timer that says `quiet` QUIET_AFTER_MS later. */
  #arrivedAt = -Infinity;
  #answeredAt = 0;
  /** The webhooks being handled include one that came beside another or within QUIET_AFTER_MS of it: a burst. */
  #inBurst = false;
  #quietTimer: NodeJS.Timeout | null = null;

  constructor(opts: WebhookReceiverOptions) {
    super();
    this.#inbox = opts.inbox;
    this.#policy = opts.policy;
    this.#tokens = opts.tokens;
    this.#host = opts.host ?? '127.0.0.1';
    this.#port = opts.port ?? 0;
    this.#maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#slots = new ConnectionSlots(opts.maxConnections ?? 1024);
    this.#maxUnfinished = opts.maxUnfinishedJobs ?? DEFAULT_MAX_UNFINISHED_JOBS;
    this.#timeouts = {
      headersMs: opts.timeouts?.headersMs ?? 5_000,
      requestMs: opts.timeouts?.requestMs ?? 30_000,
      webhookBodyMs: opts.timeouts?.webhookBodyMs ?? 10_000,
      keepAliveMs: opts.timeouts?.keepAliveMs ?? 5_000,
      checkIntervalMs: opts.timeouts?.checkIntervalMs ?? 1_000,
    };
    this.#routes.set('hooks', { token: 'hooks', handler: (req, res, info) => this.#onWebhook(req, res, info) });
    this.#routes.set('healthz', { token: 'hooks', handler: (req, res, info) => this.#onHealth(req, res, info) });
  }

  /**
   * Mounts `/<prefix>/<token of tokenName>[/...]`. The token is loaded (created if needed) before this resolves.
   * Works before or after `start()`.
   */
  async addRoute(prefix: string, tokenName: TokenName, handler: RouteHandler): Promise<void> {
    if (!/^[a-z][a-z0-9-]{0,31}$/.test(prefix)) throw new Error(`Invalid route prefix "${prefix.slice(0, 40)}".`);
    if (this.#routes.has(prefix)) throw new Error(`The route /${prefix} is already mounted.`);
    await this.#tokens.get(tokenName);
    this.#routes.set(prefix, { token: tokenName, handler });
  }

  /**
   * The signature of a self-check nonce (HMAC-SHA256 under a key that never leaves this process): the public-path
   * check proves with it that its probe arrived at this very receiver, now.
   */
  signProbe(nonce: string): string {
    return createHmac('sha256', this.#probeKey).update(nonce).digest('base64url');
  }

  /** Whether it listens now. */
  get listening(): boolean {
    return this.#server !== null;
  }

  /** The address it is configured for (the port may be 0: any free one). */
  get configured(): { host: string; port: number } {
    return { host: this.#host, port: this.#port };
  }

  /** Listens on host:port (port 0 picks a free one); `port` replaces the configured one for this start. */
  async start(port: number = this.#port): Promise<void> {
    if (this.#server) return;
    for (const route of this.#routes.values()) await this.#tokens.get(route.token);
    const server = nodeHttp().createServer({
      headersTimeout: this.#timeouts.headersMs,
      requestTimeout: this.#timeouts.requestMs,
      keepAliveTimeout: this.#timeouts.keepAliveMs,
      connectionsCheckingInterval: this.#timeouts.checkIntervalMs,
    });
    // Not server.maxConnections: it refuses the newcomer, which is the genuine webhook under a slow-client flood.
    server.on('connection', (socket: Socket) => this.#slots.admit(socket));
    server.on('request', (req, res) => this.#track(req, res));
    server.on('clientError', (error, socket) => this.#onClientError(error, socket));
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException): void => {
        const where = `${this.#host}:${port}`;
        const why =
          error.code === 'EADDRINUSE'
            ? nested('why', note('receiverPortBusy'))
            : error.code === 'EACCES'
              ? nested('why', note('receiverNoPermission'))
              : { why: error.code ?? error.message };
        reject(new ConfigError(note('receiverCannotListen', { where, ...why }), { cause: error }));
      };
      server.once('error', onError);
      server.listen(port, this.#host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    // After listen, a server error must not crash the app; there is nobody to hand it to.
    server.on('error', () => undefined);
    this.#stopping = false;
    this.#server = server;
  }

  /**
   * Stops accepting, lets in-flight requests (a webhook waiting for its journal write) answer, then closes every
   * socket. A request still running after `graceMs` (a stalled upload) is cut off.
   */
  async stop(graceMs = 10_000): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#stopping = true;
    if (this.#quietTimer) clearTimeout(this.#quietTimer);
    this.#quietTimer = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    const drained = (async () => {
      while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    })();
    await Promise.race([drained, grace]);
    clearTimeout(timer);
    server.closeAllConnections();
    await closed;
    this.#server = null;
  }

  get port(): number {
    const address = this.#server?.address();
    if (!address || typeof address === 'string') throw new Error('The webhook receiver is not listening.');
    return (address as AddressInfo).port;
  }

  /**
   * Webhooks being handled now: read, checked, or waiting for their journal commit. The download queue lets them
   * go first (DownloadManagerOptions.acksFirst) and starts its downloads on `quiet`.
   */
  get webhooksWaiting(): number {
    return this.#webhooksWaiting;
  }

  /**
   * Whether webhooks are arriving: one is being handled, or, in a burst (webhooks less than QUIET_AFTER_MS apart),
   * the last was answered less than QUIET_AFTER_MS ago: a sender with several connections sends its next one as
   * soon as an answer arrives, so a burst passes through zero after every journal commit. A lone webhook is quiet
   * as soon as it is answered, so its download starts at once. `quiet` is emitted when this turns false.
   */
  get busy(): boolean {
    return this.#webhooksWaiting > 0 || this.#quietTimer !== null;
  }

  /** Whether new webhooks are refused now because the unfinished-job cap is reached (see DEFAULT_MAX_UNFINISHED_JOBS). */
  get full(): boolean {
    return (this.#inbox.unfinished ?? 0) >= this.#maxUnfinished;
  }

  /** `/hooks/<token>`: the path to register with the service (behind the tunnel's origin). */
  get hookPath(): string {
    return this.routePath('hooks');
  }

  /** `/healthz/<token>`: answers `{ok:true,id:instanceId}`. */
  get healthPath(): string {
    return this.routePath('healthz');
  }

  /** The path of a mounted route, with its current token. */
  routePath(prefix: string): string {
    const route = this.#routes.get(prefix);
    const token = route ? this.#tokens.peek(route.token) : undefined;
    if (!route || token === undefined) throw new Error(`The route /${prefix} is not mounted or not loaded.`);
    return `/${prefix}/${token}`;
  }

  /** The loopback origin, e.g. `http://127.0.0.1:40123`. */
  get origin(): string {
    const host = this.#host.includes(':') ? `[${this.#host}]` : this.#host;
    return `http://${host}:${this.port}`;
  }

  /** The full local webhook URL (contains the token: treat it as a secret). */
  get localUrl(): string {
    return `${this.origin}${this.hookPath}`;
  }

  /** New webhook token; the old URL answers 404 from now on. Resolves to the new local URL. */
  async rotateToken(): Promise<string> {
    await this.#tokens.rotate('hooks');
    return this.#server ? this.localUrl : this.hookPath;
  }

  #track(req: IncomingMessage, res: ServerResponse): void {
    res.once('close', this.#slots.started(req));
    const done = new Promise<void>((resolve) => {
      res.once('close', resolve);
      this.#dispatch(req, res)
        .catch((error: unknown) => {
          if (error instanceof ClientGone) {
            res.destroy();
            return;
          }
          if (!res.headersSent) this.#json(req, res, 500, { error: 'internal error' });
          else res.destroy();
        })
        .finally(() => {
          // An answer sent before the body was read ends itself once the rest is dropped (lingering close).
          if (res.writableEnded || res.destroyed || isLingering(res)) return;
          // A handler that returned without answering would hang the client and stop().
          if (!res.headersSent) this.#json(req, res, 500, { error: 'internal error' });
          else res.end();
        });
    });
    this.#inFlight.add(done);
    void done.then(() => this.#inFlight.delete(done));
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const remoteAddress = req.socket.remoteAddress ?? '';
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://receiver.invalid');
    } catch {
      return this.#reject(req, res, 400, 'bad request target');
    }
    const [, prefix = '', token = '', ...rest] = url.pathname.split('/');
    const route = this.#routes.get(prefix);
    // Compare even when the route is unknown, so timing says nothing about which prefixes exist.
    const tokenOk = this.#tokens.matches(route?.token ?? 'hooks', token);
    if (!route || !tokenOk) return this.#reject(req, res, 404, 'unknown path');
    await route.handler(req, res, { subpath: rest.join('/'), url, remoteAddress });
  }

  async #onWebhook(req: IncomingMessage, res: ServerResponse, info: RouteInfo): Promise<void> {
    const arrived = systemClock.now();
    // Another is still being handled, came a moment ago, or the last burst has not ended: this one is in a burst.
    if (this.#webhooksWaiting > 0 || arrived - this.#arrivedAt < QUIET_AFTER_MS || this.#quietTimer !== null) {
      this.#inBurst = true;
    }
    this.#arrivedAt = arrived;
    this.#webhooksWaiting += 1;
    try {
      await this.#takeWebhook(req, res, info);
    } finally {
      this.#webhooksWaiting -= 1;
      if (this.#webhooksWaiting === 0) {
        this.#answeredAt = systemClock.now();
        if (this.#inBurst) this.#quietTimer ??= setTimeout(() => this.#maybeQuiet(), QUIET_AFTER_MS).unref();
        else this.emit('quiet');
      }
    }
  }

  /** One timer per pause in the traffic: quiet once QUIET_AFTER_MS passed since the last answer. */
  #maybeQuiet(): void {
    this.#quietTimer = null;
    // Still busy: the next time the count falls to zero arms the timer again.
    if (this.#webhooksWaiting > 0) return;
    const left = this.#answeredAt + QUIET_AFTER_MS - systemClock.now();
    if (left > 0) {
      this.#quietTimer = setTimeout(() => this.#maybeQuiet(), left).unref();
      return;
    }
    this.#inBurst = false;
    this.emit('quiet');
  }

  async #takeWebhook(req: IncomingMessage, res: ServerResponse, info: RouteInfo): Promise<void> {
    if (info.subpath !== '') return this.#reject(req, res, 404, 'unknown path');
    const method = req.method ?? '';
    if (method !== 'GET' && method !== 'POST') {
      return this.#reject(req, res, 405, `method ${method.slice(0, 16)} not allowed`, { Allow: 'GET, POST' });
    }
    const lifecycle = method === 'GET' ? parseChannelHook(info.url.searchParams) : null;
    if (lifecycle) {
      this.#json(req, res, 200, { ok: true });
      this.emit('channel', lifecycle);
      return;
    }
    const body =
      method === 'POST' ? await readCapped(req, this.#maxBody, this.#timeouts.webhookBodyMs) : Buffer.alloc(0);
    if (body === 'late') {
      const seconds = Math.max(1, Math.round(this.#timeouts.webhookBodyMs / 1000));
      return this.#reject(req, res, 408, `the body did not arrive within ${seconds} s`);
    }
    if (body === null) return this.#reject(req, res, 413, `the body is larger than ${this.#maxBody} bytes`);

    let parsed;
    try {
      parsed = parseWebhook({ method, query: info.url.searchParams, contentType: req.headers['content-type'], body });
    } catch (error) {
      if (error instanceof WebhookRejection) {
        return this.#reject(req, res, error.status, error.reason, error.status === 405 ? { Allow: 'GET, POST' } : {});
      }
      throw error;
    }
    const verdict = this.#policy.check(parsed.parsedUrl ?? parsed.url);
    if (!verdict.ok) return this.#reject(req, res, 422, verdict.reason);
    const unfinished = this.#inbox.unfinished ?? 0;
    if (unfinished >= this.#maxUnfinished) {
      // Loud on purpose: the 'rejected' event carries the reason to the CLI output and the app.
      return this.#reject(
        req,
        res,
        503,
        note('webhooksFull', { count: unfinished }),
        { 'Retry-After': '60' },
        parsed.channelId,
      );
    }

    let outcome;
    try {
      outcome = await this.#inbox.add(parsed);
    } catch (error) {
      // Not on disk means not acknowledged: a 5xx lets a retrying sender try again. The line names the channel
      // and the cause: the service does not resend, so this is the producer's only word of a lost recording.
      return this.#reject(
        req,
        res,
        503,
        note('webhookNotStored', nested('cause', storeFailure(error))),
        { 'Retry-After': '5' },
        parsed.channelId,
      );
    }
    if (outcome.duplicate) {
      this.#json(req, res, 200, { ok: true, duplicate: true });
      this.emit('duplicate', outcome.job);
    } else {
      this.#json(req, res, 200, { ok: true });
      this.emit('received', outcome.job, parsed.warnings);
    }
  }

  #onHealth(req: IncomingMessage, res: ServerResponse, info: RouteInfo): void {
    if (info.subpath !== '') return this.#reject(req, res, 404, 'unknown path');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return this.#reject(req, res, 405, `method ${(req.method ?? '').slice(0, 16)} not allowed`, {
        Allow: 'GET, HEAD',
      });
    }
    // A probe nonce gets this process's signature: only this receiver can answer it, and no cache can replay it.
    const probe = info.url.searchParams.get('probe');
    const signed = probe !== null && PROBE_NONCE.test(probe) ? { sig: this.signProbe(probe) } : {};
    this.#json(req, res, 200, { ok: true, id: this.instanceId, ...signed });
  }

  #reject(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    why: string | Note,
    headers: Record<string, string> = {},
    channelId?: string,
  ): void {
    const reason = typeof why === 'string' ? why : noteText(why);
    this.#json(req, res, status, { error: reason }, headers);
    const remoteAddress = req.socket.remoteAddress ?? '';
    this.emit('rejected', {
      status,
      reason,
      ...(typeof why === 'string' ? {} : { reasonNote: why }),
      remoteAddress,
      ...(channelId !== undefined ? { channelId } : {}),
    });
  }

  #json(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    // An unread body (rejected early, too large) is not read for its content: the answer goes out at once and
    // the rest is dropped as it arrives (bounded), so the connection is closed without a reset.
    const close = this.#stopping || !req.complete;
    if (close) this.#answered.add(req.socket);
    // Lingering close: a sender still writing the body it was refused for reads the answer (http-answer.ts).
    const linger = close && !this.#stopping ? { linger: req } : {};
    sendJson(res, status, body, { headers, close, head: req.method === 'HEAD', ...linger });
  }

  #onClientError(error: Error & { code?: string }, socket: Duplex): void {
    const remoteAddress = (socket as Socket).remoteAddress ?? '';
    // After an early answer the rest of the request may not parse; the client already has its answer.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (this.#answered.has(socket)) {
      // Ended, not destroyed: the answer may still sit in the socket's buffer (a lingering close writes it first).
      socket.end();
      return;
    }
    const status =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? 431
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'ERR_HTTP_HEADERS_TIMEOUT'
          ? 408
          : 400;
    socket.end(
      `HTTP/1.1 ${status} ${nodeHttp().STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
    );
    this.emit('rejected', { status, reason: 'malformed or incomplete request', remoteAddress });
  }
}

/** Why the journal refused a job, in a few words: a full disk and a vanished state folder say so. */
function storeFailure(error: unknown): Note {
  let cause: unknown = error;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth += 1) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return note('storeDiskFull', { errno: code });
    if (code === 'EROFS') return note('storeReadOnly', { errno: code });
    if (code === 'EIO') return note('storeDiskFailed', { errno: code });
    if (cause.cause === undefined) break;
    cause = cause.cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  return note('storeOther', { detail: message.replace(/\.$/, '').slice(0, 200) });
}

/**
 * Reads the body, but never more than `max` bytes: a declared larger Content-Length is refused before reading,
 * and a streamed body stops being read at `max + 1`. Resolves null when too large, 'late' when the whole body
 * has not arrived within `deadlineMs`.
 */
function readCapped(req: IncomingMessage, max: number, deadlineMs: number): Promise<Buffer | null | 'late'> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      cleanup();
      req.pause();
      resolve('late');
    }, deadlineMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) {
        cleanup();
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onGone = (): void => {
      cleanup();
      reject(new ClientGone());
    };
    const onClose = (): void => {
      if (!req.complete) onGone();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onClose);
  });
}

/**
 * How long after the last answer the receiver counts as quiet (see `busy`): long enough to span the gap
 * between a journal commit and the next webhooks of a burst, short enough not to matter to a download.
 */
export const QUIET_AFTER_MS = 50;

/** A self-check nonce: 16 to 64 URL-safe characters. */
const PROBE_NONCE = /^[A-Za-z0-9_-]{16,64}$/;

/** Whether `start()` failed because another program holds the port. */
export function isAddressInUse(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return error instanceof ConfigError && cause?.code === 'EADDRINUSE';
}
