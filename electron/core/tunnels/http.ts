/**
 * A small HTTP client for tunnel traffic: the self-check through the public URL and the localtunnel
 * control request. It never follows redirects (the caller decides), caps the body it reads, and honours
 * an AbortSignal and a timeout. An injected `connectTo` decides where a public host name is really reached
 * (a self-hosted tunnel server on this machine, `abc.lt.test` on a loopback port) while the Host header and TLS
 * name stay those of the URL; without one, the name is resolved by DNS.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestOptions } from 'node:https';
import { note, noteText, type Note, type NoteParams } from '../notes.js';
import { TallyError } from '../errors.js';
import { nodeHttp, nodeHttps } from '../node-http.js';

/** Where to open the TCP connection instead of resolving the URL's host. */
export interface ConnectTarget {
  host: string;
  port: number;
}

/** Where a public URL's host is really connected to, or undefined to resolve it by DNS (injected, like a lookup). */
export type ConnectToOverride = (url: URL) => ConnectTarget | undefined;

export interface TunnelHttpOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole-request deadline (connect, send, read). Default 10 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Bytes of body kept; the rest is discarded. Default 64 KiB. */
  maxBodyBytes?: number;
  connectTo?: ConnectToOverride;
}

export interface TunnelHttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** True when the body was longer than `maxBodyBytes`. */
  truncated: boolean;
}

/** Why a request got no answer; `note` says it for the popover when it is one of the common reasons. */
export class TunnelHttpError extends Error {
  override name = 'TunnelHttpError';
  readonly note: Note | null;
  constructor(
    readonly reason: 'timeout' | 'network' | 'aborted',
    message: string | Note,
    said: Note | null = null,
  ) {
    super(typeof message === 'string' ? message : noteText(message));
    this.note = typeof message === 'string' ? said : message;
  }
}

/**
 * Why a connection failed, as a note: a TunnelHttpError's own, a TallyError's message note, or one read from
 * a system error's code.
 */
function causeNote(error: unknown): Note | null {
  if (error instanceof TunnelHttpError) return error.note;
  if (error instanceof TallyError) {
    const { note: code, ...params } = error.params ?? {};
    return typeof code === 'string' ? { code, params } : null;
  }
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? networkNote(code) : null;
}

/**
 * The `detail` params of a note that ends with why a connection failed: the English text as it was, and the
 * reason as a nested note (`detailNote`) so the popover can say it in another language.
 */
export function withCause(error: unknown): NoteParams {
  const detail = error instanceof Error ? error.message : String(error);
  const why = causeNote(error);
  return why ? { ...why.params, detail, detailNote: why.code } : { detail };
}

/**
 * Sends one request and reads the answer.
 * @throws TunnelHttpError when there is no HTTP answer (refused, reset, DNS, timeout, aborted).
 */
export function tunnelRequest(target: string | URL, options: TunnelHttpOptions = {}): Promise<TunnelHttpResponse> {
  const url = typeof target === 'string' ? new URL(target) : target;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new TunnelHttpError('network', `unsupported protocol ${url.protocol}`));
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024;
  const override = options.connectTo?.(url);
  const secure = url.protocol === 'https:';
  const headers: Record<string, string> = { 'user-agent': 'Tally-tunnel-check', ...options.headers, host: url.host };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));

  return new Promise<TunnelHttpResponse>((resolve, reject) => {
    let settled = false;
    const finish = (error: TunnelHttpError | null, response?: TunnelHttpResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (error) {
        request.destroy();
        reject(error);
      } else if (response) {
        resolve(response);
      }
    };
    const onAbort = (): void => finish(new TunnelHttpError('aborted', note('netCancelled')));
    const timer = setTimeout(
      () => finish(new TunnelHttpError('timeout', note('netTimeout', { seconds: Math.round(timeoutMs / 100) / 10 }))),
      timeoutMs,
    );
    timer.unref();

    const requestOptions: RequestOptions = {
      method: options.method ?? 'GET',
      host: override?.host ?? url.hostname.replace(/^\[|\]$/g, ''),
      port: override?.port ?? (url.port === '' ? (secure ? 443 : 80) : Number(url.port)),
      path: `${url.pathname}${url.search}`,
      headers,
      // One request per connection: a kept-alive socket through a tunnel could hide a dropped tunnel.
      agent: false,
    };
    if (secure) requestOptions.servername = url.hostname;
    const request = (secure ? nodeHttps() : nodeHttp()).request(requestOptions, (response) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      let truncated = false;
      response.on('data', (chunk: Buffer) => {
        if (kept >= maxBodyBytes) {
          truncated = true;
          return;
        }
        const slice = chunk.subarray(0, maxBodyBytes - kept);
        if (slice.length < chunk.length) truncated = true;
        chunks.push(slice);
        kept += slice.length;
      });
      response.on('end', () =>
        finish(null, {
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
          truncated,
        }),
      );
      response.on('error', (error) => finish(networkError(error)));
    });
    request.on('error', (error) => finish(networkError(error)));
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    request.end(options.body);
  });
}

function networkError(error: Error): TunnelHttpError {
  const code = (error as NodeJS.ErrnoException).code;
  if (!code) return new TunnelHttpError('network', error.message);
  const said = networkNote(code);
  return said
    ? new TunnelHttpError('network', said)
    : new TunnelHttpError('network', `${error.message} (${code})`, note('netFailed', { errno: code }));
}

/** The common system error codes of a connection, as notes; null for others. */
function networkNote(code: string): Note | null {
  switch (code) {
    case 'ECONNREFUSED':
      return note('netRefused');
    case 'ECONNRESET':
      return note('netReset');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return note('netUnknownHost');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return note('netUnreachable');
    default:
      return null;
  }
}
