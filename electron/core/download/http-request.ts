/**
 * One GET with redirects followed by hand: every hop is shown to the download-origin policy before any
 * request goes to it, DNS answers go through the policy's lookup, and the socket has an idle timeout that
 * also covers the body. The request itself runs on a raw socket (socket-response.ts): the byte path is a read
 * into a reused buffer and a positional write, which is what loopback speed needs (issue 34).
 */
import type { LookupFunction } from 'node:net';
import { TallyError } from '../errors.js';
import { DownloadRefusedError, HttpStatusError, NetworkError } from './errors.js';
import { requestOverSocket, type SocketResponse } from './socket-response.js';

export type { SocketResponse } from './socket-response.js';

/** Outcome of a policy check (structurally the download-origin policy's `UrlCheck`). */
export type PolicyVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * What the engine needs from the download-origin policy. The answers may come later (a promise): the engine in
 * its worker thread asks the policy that lives on the main thread (download-thread.ts).
 */
export interface DownloadPolicy {
  /** Checks the first URL; optional because the inbox already checked it on arrival. */
  check?(url: string): PolicyVerdict | Promise<PolicyVerdict>;
  /** Checks a redirect hop; a refusal ends the download with DownloadRefusedError. */
  checkRedirect(from: URL, location: string): PolicyVerdict | Promise<PolicyVerdict>;
  /** A `dns.lookup` replacement for connections to `url` (refuses internal addresses). */
  lookupFor?(url: URL): LookupFunction;
}

export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface OpenOptions {
  url: URL;
  headers?: Record<string, string>;
  policy: DownloadPolicy;
  signal?: AbortSignal;
  /** Idle time without any byte (headers or body) before the request fails with TimeoutError. */
  timeoutMs: number;
}

export interface OpenedResponse {
  res: SocketResponse;
  /** URL that finally answered (after redirects). */
  url: URL;
}

/** Names a URL for messages without path or query (presigned URLs carry signatures). */
export function describeEndpoint(url: URL): string {
  return `the download from ${url.host}`;
}

/** The error a stopped download rejects with. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException('The download was stopped.', 'AbortError');
}

/** Whether an error comes from an abort signal (the caller stopped the download). */
export function isAbortError(error: unknown): boolean {
  return (
    error instanceof Error && (error.name === 'AbortError' || (error as NodeJS.ErrnoException).code === 'ABORT_ERR')
  );
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNRESET: 'the connection was reset',
  ECONNREFUSED: 'the connection was refused',
  ECONNABORTED: 'the connection was aborted',
  EPIPE: 'the connection was closed',
  ETIMEDOUT: 'the connection timed out',
  ENOTFOUND: 'the host name could not be resolved',
  EAI_AGAIN: 'the host name could not be resolved (temporary DNS failure)',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ENETDOWN: 'the network is down',
  ERR_STREAM_PREMATURE_CLOSE: 'the connection closed before the whole file arrived',
};

/**
 * Turns whatever a request or response stream threw into one of our errors. Abort errors pass through
 * untouched so the caller can tell a stop from a failure.
 */
export function toDownloadError(error: unknown, url: URL, signal?: AbortSignal): Error {
  if (signal?.aborted) return abortError(signal);
  if (isAbortError(error)) return error as Error;
  if (error instanceof TallyError) {
    if (error.code === 'address_refused') {
      // A host name the policy does not allow is final. An internal address in a DNS answer is not: captive
      // portals and split-horizon VPNs answer one for a while, and the service keeps the file for 6 hours, so
      // the name is resolved again at the next attempt (issue 20). An IP literal never gets here: the policy
      // refuses it before any request.
      if ((error as { transient?: unknown }).transient !== true) {
        return new DownloadRefusedError(error.message.replace(/\.$/, ''), { cause: error });
      }
      const { address, category } = error as unknown as { address: string; category: string };
      return new NetworkError(
        describeEndpoint(url),
        `${url.hostname} resolved to ${address}, a ${category} address (a captive portal, VPN or DNS hiccup can answer this for a while); Tally resolves it again at the next attempt`,
        { cause: error },
      );
    }
    return error;
  }
  const err = error as NodeJS.ErrnoException;
  const code = err?.code ?? '';
  let reason = NETWORK_REASONS[code];
  if (!reason && err?.message === 'aborted') reason = 'the connection closed before the whole file arrived';
  if (!reason && code.startsWith('HPE_')) reason = 'the server sent a malformed HTTP response';
  if (
    !reason &&
    (code.startsWith('ERR_TLS') || code.includes('CERT') || /certificate|SSL|TLS/i.test(err?.message ?? ''))
  ) {
    reason = 'the secure connection failed (certificate or TLS error)';
  }
  return new NetworkError(describeEndpoint(url), reason ?? (code ? `error ${code}` : 'the connection failed'), {
    cause: error,
  });
}

function requestOnce(url: URL, headers: Record<string, string>, opts: OpenOptions): Promise<SocketResponse> {
  const lookup = opts.policy.lookupFor?.(url);
  return requestOverSocket({
    url,
    headers,
    timeoutMs: opts.timeoutMs,
    endpoint: describeEndpoint(url),
    mapError: (error) => toDownloadError(error, url, opts.signal),
    ...(lookup ? { lookup } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

/**
 * Sends the GET and follows up to five redirects, each checked by the policy first.
 * @throws DownloadRefusedError when a hop is refused or there are too many; NetworkError/TimeoutError; abort.
 */
export async function openResponse(opts: OpenOptions): Promise<OpenedResponse> {
  let url = opts.url;
  const headers = opts.headers ?? {};
  for (let hop = 0; ; hop += 1) {
    opts.signal?.throwIfAborted();
    const res = await requestOnce(url, headers, opts);
    const status = res.statusCode ?? 0;
    if (!REDIRECT_STATUSES.has(status)) return { res, url };
    const location = res.headers.location;
    res.resume();
    if (!location) throw new HttpStatusError(status, url.host, 'redirect without a Location');
    if (hop >= MAX_REDIRECTS) throw new DownloadRefusedError(`the server redirected more than ${MAX_REDIRECTS} times`);
    const verdict = await opts.policy.checkRedirect(url, location);
    if (!verdict.ok) throw new DownloadRefusedError(verdict.reason);
    url = verdict.url;
  }
}

/**
 * Reads at most a few KiB of an error body and turns it into a short hint: the `<Code>` of an S3 XML error,
 * the `<title>` of an HTML page, or the first line of text. Never echoes more than 80 characters.
 */
export async function errorHint(res: SocketResponse): Promise<string> {
  // A broken error body still leaves the status to report.
  const body = await res.readSome(4096).catch(() => Buffer.alloc(0));
  const text = body.toString('utf8').slice(0, 4096);
  const code = /<Code>([^<]{1,80})<\/Code>/i.exec(text)?.[1];
  if (code) return code.trim();
  const title = /<title>([^<]{1,200})<\/title>/i.exec(text)?.[1];
  if (title) return `HTML page: ${title.trim().slice(0, 80)}`;
  if (/<html|<!doctype/i.test(text)) return 'an HTML page';
  const line =
    text
      .split(/\r?\n/, 1)[0]
      ?.replace(/[^\x20-\x7E]/g, '')
      .trim() ?? '';
  return line.slice(0, 80);
}

/** Parsed `Content-Range: bytes start-end/total` (total null for `*`), or `bytes * /total` for a 416. */
export interface ContentRange {
  start: number | null;
  end: number | null;
  total: number | null;
}

export function parseContentRange(header: string | undefined): ContentRange | null {
  if (!header) return null;
  const full = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(header.trim());
  if (full) {
    const start = Number(full[1]);
    const end = Number(full[2]);
    const total = full[3] === '*' ? null : Number(full[3]);
    if (end < start || (total !== null && end >= total)) return null;
    return { start, end, total };
  }
  const unsatisfied = /^bytes\s+\*\/(\d+)$/i.exec(header.trim());
  if (unsatisfied) return { start: null, end: null, total: Number(unsatisfied[1]) };
  return null;
}

/** Content-Length as a safe integer, or null. */
export function contentLength(res: Pick<SocketResponse, 'headers'>): number | null {
  const raw = res.headers['content-length'];
  if (raw === undefined || !/^\d+$/.test(raw)) return null;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : null;
}
