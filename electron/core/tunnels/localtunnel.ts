/**
 * localtunnel, against the public server or a self-hosted one: the control request here (one abortable call
 * with a deadline, its answer validated), the tunnel sockets in localtunnel-sockets.ts. The server's `ip` field
 * is ignored, so every connection the client makes goes to the configured `host` only. Why this is not the
 * `localtunnel` package any more: localtunnel-sockets.ts.
 */
import { z } from 'zod';
import { note } from '../notes.js';
import { ConfigError } from '../errors.js';
import { tunnelRequest, TunnelHttpError, withCause } from './http.js';
import { LocaltunnelSockets } from './localtunnel-sockets.js';
import { TunnelError, TunnelProviderBase, abortError, throwIfAborted } from './types.js';
import type { LocalTarget, TunnelOpenResult } from './types.js';

/** The public server, as the client package defaults to it. */
export const DEFAULT_LOCALTUNNEL_HOST = 'https://localtunnel.me';

/** Upper bound on tunnel sockets, whatever the server asks for. */
const MAX_CONNECTIONS = 10;

export interface LocaltunnelOptions {
  /** Tunnel server base URL; defaults to the public server. Self-hosting keeps webhooks off a shared service. */
  host?: string | null;
  /** Ask for this subdomain (the server may hand out another one when it is taken). */
  subdomain?: string | null;
  /** Deadline for the control request and the first tunnel socket. Default 15 s. */
  openTimeoutMs?: number;
}

/** What a localtunnel server answers to `GET /?new` or `GET /<id>`. */
const TunnelInfoSchema = z.object({
  id: z.string().min(1).max(253),
  port: z.number().int().min(1).max(65535),
  max_conn_count: z.number().int().min(1).optional(),
  url: z
    .string()
    .max(2048)
    .refine((s) => /^https?:\/\//i.test(s) && URL.canParse(s), 'must be an http(s) URL'),
  cached_url: z.string().max(2048).optional(),
});
type TunnelInfo = z.infer<typeof TunnelInfoSchema>;

/**
 * Checks a localtunnel server setting: an http(s) URL without credentials, query or fragment.
 * @throws ConfigError naming what is wrong.
 */
export function normalizeLocaltunnelHost(value: string): string {
  const text = value.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(note('localtunnelNotUrl', { url: text }));
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(note('localtunnelScheme'));
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new ConfigError(note('localtunnelParts'));
  }
  return url.href.replace(/\/+$/, '');
}

/** localtunnel: a random (or requested) subdomain of the server, which changes on every reconnect. */
export class LocalTunnel extends TunnelProviderBase {
  readonly kind = 'localtunnel' as const;
  readonly host: string;
  readonly #subdomain: string | null;
  readonly #openTimeoutMs: number;
  #tunnel: { sockets: LocaltunnelSockets; clientId: string } | null = null;
  #session = 0;

  /** @throws ConfigError when the host or subdomain is unusable. */
  constructor(options: LocaltunnelOptions = {}) {
    super();
    this.host = normalizeLocaltunnelHost(options.host ?? DEFAULT_LOCALTUNNEL_HOST);
    const subdomain = options.subdomain?.trim().toLowerCase() || null;
    if (subdomain !== null && !/^[a-z0-9][a-z0-9-]{2,61}[a-z0-9]$/.test(subdomain)) {
      throw new ConfigError('A localtunnel subdomain is 4 to 63 lowercase letters, digits or hyphens.');
    }
    this.#subdomain = subdomain;
    this.#openTimeoutMs = options.openTimeoutMs ?? 15_000;
  }

  async open(local: LocalTarget, signal?: AbortSignal): Promise<TunnelOpenResult> {
    throwIfAborted(signal);
    this.#closeTunnel();
    const session = ++this.#session;
    const deadline = AbortSignal.timeout(this.#openTimeoutMs);
    const opening = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const failure = (error: unknown): Error =>
      error instanceof TunnelError || (error instanceof Error && error.name === 'AbortError')
        ? error
        : opening.aborted
          ? signal?.aborted
            ? abortError(signal)
            : openTimeout(this.host, this.#openTimeoutMs)
          : new TunnelError(note('localtunnelNoTunnel', { host: this.host, ...withCause(error) }));

    let info: TunnelInfo;
    try {
      info = await requestTunnel(this.host, this.#subdomain, opening);
    } catch (error) {
      throw failure(error);
    }
    if (session !== this.#session) throw new TunnelError(note('localtunnelClosedOpening'));

    const sockets = new LocaltunnelSockets({
      // No `ip`: tunnel sockets go to the host's own name, never to an address the server picks.
      remoteHost: new URL(this.host).hostname,
      remotePort: info.port,
      count: Math.min(info.max_conn_count ?? 1, MAX_CONNECTIONS),
      localHost: local.host,
      localPort: local.port,
    });
    this.#tunnel = { sockets, clientId: info.id };
    let ready = false;
    // Always listened to: a late socket error after close must not become an uncaught 'error'.
    sockets.on('error', (error: Error) => {
      if (ready && session === this.#session) {
        this.emit('error', new TunnelError(note('localtunnelFailed', withCause(error))));
      }
    });

    try {
      await new Promise<void>((resolve, reject) => {
        const settle = (error?: Error): void => {
          opening.removeEventListener('abort', onAbort);
          sockets.off('open', onOpen);
          sockets.off('error', settle);
          if (error) reject(error);
          else resolve();
        };
        const onAbort = (): void => settle(failure(new Error('aborted')));
        const onOpen = (): void => settle();
        if (opening.aborted) return onAbort();
        opening.addEventListener('abort', onAbort, { once: true });
        // 'open' comes when the first tunnel socket is connected: only then can a request get through.
        sockets.once('open', onOpen);
        sockets.once('error', settle);
        sockets.open();
      });
    } catch (error) {
      if (session === this.#session) this.#closeTunnel();
      throw failure(error);
    }
    if (session !== this.#session) throw new TunnelError(note('localtunnelClosedOpening'));
    ready = true;
    return { publicBaseUrl: info.url.replace(/\/+$/, '') };
  }

  async close(): Promise<void> {
    this.#session++;
    this.#closeTunnel();
  }

  /** The subdomain the server assigned to the current tunnel, if any. */
  get clientId(): string | null {
    return this.#tunnel?.clientId ?? null;
  }

  #closeTunnel(): void {
    const tunnel = this.#tunnel;
    this.#tunnel = null;
    // Closing destroys every tunnel socket and cancels every reconnect.
    tunnel?.sockets.close();
  }
}

function openTimeout(host: string, ms: number): TunnelError {
  return new TunnelError(note('localtunnelSlow', { host, seconds: Math.round(ms / 1000) }));
}

/** One control request: `GET <host>/?new` or `GET <host>/<subdomain>`. Follows a redirect only on the same host. */
async function requestTunnel(host: string, subdomain: string | null, signal: AbortSignal): Promise<TunnelInfo> {
  let url = new URL(`${host}/${subdomain === null ? '?new' : encodeURIComponent(subdomain)}`);
  const hostname = url.hostname;
  for (let hop = 0; ; hop++) {
    let response;
    try {
      response = await tunnelRequest(url, { headers: { accept: 'application/json' }, signal, timeoutMs: 15_000 });
    } catch (error) {
      if (error instanceof TunnelHttpError && error.reason === 'aborted') throw abortError(signal);
      throw new TunnelError(note('localtunnelUnreachable', { host, ...withCause(error) }));
    }
    const location = response.headers.location;
    if (response.status >= 300 && response.status < 400 && location !== undefined && hop < 2) {
      const next = new URL(location, url);
      if (next.hostname !== hostname || (next.protocol !== 'https:' && next.protocol !== 'http:')) {
        throw new TunnelError(note('localtunnelRedirects', { host, origin: next.origin }));
      }
      url = next;
      continue;
    }
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      body = undefined;
    }
    if (response.status !== 200) {
      const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
      // The server's own words stay as they are; the popover translates the sentence around them.
      throw new TunnelError(
        typeof message === 'string'
          ? note('localtunnelAnsweredSaying', { host, status: response.status, detail: message.slice(0, 200) })
          : note('localtunnelAnswered', { host, status: response.status }),
      );
    }
    const parsed = TunnelInfoSchema.safeParse(body);
    if (!parsed.success) {
      throw new TunnelError(note('localtunnelNotServer', { host }));
    }
    return parsed.data;
  }
}
