/**
 * What object a download URL names right now, without downloading it: one `Range: bytes=0-0` request (a GET, so
 * a presigned URL signed for GET works too; at most one byte of body) for the object's validators: its ETag, its
 * Last-Modified and its size. A webhook carries none of them, so this is how a repeated webhook for a URL already
 * saved is told apart from a new recording published under the same URL (a reused channel ID, issue 31).
 */
import type { SocketResponse } from './socket-response.js';
import { contentLength, openResponse, parseContentRange, type DownloadPolicy } from './http-request.js';

/** The object's validators, as far as the origin gives them. */
export interface ObjectVersion {
  etag: string | null;
  lastModified: string | null;
  /** The object's whole size (Content-Range total, else Content-Length of a full answer), when said. */
  bytes: number | null;
}

/**
 * `found`: the origin named the object; `gone`: it answered that there is none (403, 404, 410); `unknown`: no
 * answer to judge by (a refusal, a timeout, another status): the caller must not drop anything on it.
 */
export type OriginProbe =
  ({ kind: 'found' } & ObjectVersion) | { kind: 'gone'; status: number } | { kind: 'unknown'; reason: string };

/** Asks the origin which object `url` names now; never throws (an answer it cannot read is `unknown`). */
export async function probeOrigin(
  url: string,
  policy: DownloadPolicy,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<OriginProbe> {
  let target: URL;
  if (policy.check) {
    const verdict = await policy.check(url);
    if (!verdict.ok) return { kind: 'unknown', reason: verdict.reason };
    target = verdict.url;
  } else {
    try {
      target = new URL(url);
    } catch {
      return { kind: 'unknown', reason: 'not a valid absolute URL' };
    }
  }
  let res: SocketResponse | null = null;
  try {
    ({ res } = await openResponse({
      url: target,
      headers: { range: 'bytes=0-0' },
      policy,
      timeoutMs: opts.timeoutMs ?? 10_000,
      ...(opts.signal ? { signal: opts.signal } : {}),
    }));
    const status = res.statusCode ?? 0;
    if (status === 403 || status === 404 || status === 410) return { kind: 'gone', status };
    const etag = res.headers.etag ?? null;
    const lastModified = res.headers['last-modified'] ?? null;
    if (status === 206 || status === 416) {
      // 416: `bytes=0-0` of an empty object (S3); its Content-Range still says `*/0`.
      const total = parseContentRange(res.headers['content-range'])?.total ?? null;
      return { kind: 'found', etag, lastModified, bytes: total };
    }
    if (status === 200) return { kind: 'found', etag, lastModified, bytes: contentLength(res) };
    return { kind: 'unknown', reason: `the server answered ${status}` };
  } catch (error) {
    return { kind: 'unknown', reason: error instanceof Error ? error.message : String(error) };
  } finally {
    res?.destroy();
  }
}

/**
 * Whether two sightings of an object are the same version: the ETag decides when both have one (with the size
 * when both know it), else Last-Modified with the size, else the size alone. Null when nothing can be compared.
 */
export function sameVersion(a: ObjectVersion, b: ObjectVersion): boolean | null {
  const sizes = a.bytes !== null && b.bytes !== null ? a.bytes === b.bytes : null;
  if (a.etag !== null && b.etag !== null) return a.etag === b.etag && sizes !== false;
  if (a.lastModified !== null && b.lastModified !== null) return a.lastModified === b.lastModified && sizes !== false;
  return sizes;
}

/**
 * `probeOrigin` for one policy, with the answer about each URL shared by the calls in flight: a burst of one
 * webhook repeated at once asks the origin once. A settled answer is never reused: the next day's recording may be
 * published under the same URL a moment later (issue 31).
 */
export function originIdentifier(
  policy: DownloadPolicy,
  opts: { timeoutMs?: number } = {},
): (url: string) => Promise<OriginProbe> {
  const asking = new Map<string, Promise<OriginProbe>>();
  return (url) => {
    const known = asking.get(url);
    if (known) return known;
    const probe = probeOrigin(url, policy, opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs });
    asking.set(url, probe);
    void probe.finally(() => asking.delete(url));
    return probe;
  };
}
