/**
 * A small HTTP client for tunnel traffic: the self-check through the public URL and the localtunnel
 * control request. It never follows redirects (the caller decides), caps the body it reads, and honours
 * an AbortSignal and a timeout. `testOnlyConnectTo` lets tests reach a public-looking host name
 * (`abc.lt.test`) on a loopback port while the Host header and TLS name stay those of the URL.
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';

/** Where to open the TCP connection instead of resolving the URL's host. */
export interface ConnectTarget {
  host: string;
  port: number;
}

/** Test seam: returns a loopback address for a URL whose host cannot be resolved in tests. */
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
  testOnlyConnectTo?: ConnectToOverride;
}

export interface TunnelHttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** True when the body was longer than `maxBodyBytes`. */
  truncated: boolean;
}

/** Why a request got no answer. */
export class TunnelHttpError extends Error {
  override name = 'TunnelHttpError';
  constructor(
    readonly reason: 'timeout' | 'network' | 'aborted',
    message: string,
  ) {
    super(message);
  }
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
  const override = options.testOnlyConnectTo?.(url);
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
    const onAbort = (): void => finish(new TunnelHttpError('aborted', 'the request was cancelled'));
    const timer = setTimeout(
      () => finish(new TunnelHttpError('timeout', `no answer within ${Math.round(timeoutMs / 100) / 10} s`)),
      timeoutMs,
    );
    timer.unref();

    const requestOptions: https.RequestOptions = {
      method: options.method ?? 'GET',
      host: override?.host ?? url.hostname.replace(/^\[|\]$/g, ''),
      port: override?.port ?? (url.port === '' ? (secure ? 443 : 80) : Number(url.port)),
      path: `${url.pathname}${url.search}`,
      headers,
      // One request per connection: a kept-alive socket through a tunnel could hide a dropped tunnel.
      agent: false,
    };
    if (secure) requestOptions.servername = url.hostname;
    const request = (secure ? https : http).request(requestOptions, (response) => {
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
      response.on('error', (error) => finish(new TunnelHttpError('network', describeNetworkError(error))));
    });
    request.on('error', (error) => finish(new TunnelHttpError('network', describeNetworkError(error))));
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    request.end(options.body);
  });
}

function describeNetworkError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'network unreachable';
    default:
      return code ? `${error.message} (${code})` : error.message;
  }
}
