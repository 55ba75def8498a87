/**
 * The download server: an S3-like host for recordings. It answers the way an S3 object URL does, which is
 * what a downloader meets in production: byte ranges (206/416), a quoted md5 ETag, Last-Modified,
 * conditional requests, 403 AccessDenied for keys it never had and 404 NoSuchKey once a file is deleted.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { htmlErrorPage, replacesAnswer } from './faults.js';
import { bufferSource, rawPath, responseSignal, sendBody, sleep, type BodySource } from './server-http.js';
import { THUMBNAIL } from './recording-file.js';
import type { SandboxService } from './service.js';
import type { FaultSpec } from './types.js';
import { nodeHttp } from '../node-http.js';

const THUMBNAIL_ETAG = `"${createHash('md5').update(THUMBNAIL).digest('hex')}"`;

/** A byte range resolved against a size: inclusive start and end. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Parses a Range header against `size`. Returns the range, 'unsatisfiable' (416), or null when the header
 * must be ignored (absent, malformed, several ranges: S3 then sends the whole object).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, from = '', to = ''] = match;
  if (from === '' && to === '') return null;
  if (from === '') {
    const suffix = Number(to);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  if (to !== '' && Number(to) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: to === '' ? size - 1 : Math.min(Number(to), size - 1) };
}

function xmlEscape(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Creates (does not start) the download server over `service`. */
export function createDownloadServer(service: SandboxService): Server {
  return nodeHttp().createServer((req, res) => {
    // Every answer is dated by the service's clock (sandbox/clock.ts): a client judges the 6 hours by it.
    res.setHeader('Date', service.now().toUTCString());
    void handle(service, req, res).catch(() => res.destroy());
  });
}

async function handle(service: SandboxService, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  const path = rawPath(req);
  service.events.emit('request', { method, path, target: 'download', range: req.headers.range ?? null });
  const fault = service.faults.download.take(path);
  if (fault?.delayMs) {
    try {
      await sleep(fault.delayMs, responseSignal(res));
    } catch {
      return;
    }
  }
  // Dated when it answers, after any delay.
  if (fault?.delayMs) res.setHeader('Date', service.now().toUTCString());
  req.resume();
  const requestId = randomBytes(8).toString('hex').toUpperCase();
  const base: OutgoingHttpHeaders = {
    'x-amz-request-id': requestId,
    'x-amz-id-2': randomBytes(24).toString('base64'),
    Server: 'AmazonS3',
  };
  const head = method === 'HEAD';
  const fail = (status: number, code: string, message: string, extra = '', headers: OutgoingHttpHeaders = {}) =>
    sendError(res, { status, code, message, extra, requestId, head, fault, headers: { ...base, ...headers } });

  if (fault && replacesAnswer(fault)) {
    await sendInjected(res, fault, head, base, requestId);
    return;
  }
  if (method !== 'GET' && method !== 'HEAD') {
    await fail(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.', '', {
      Allow: 'GET, HEAD',
    });
    return;
  }
  const target = service.resolveDownload(path);
  if (!target) {
    await fail(403, 'AccessDenied', 'Access Denied');
    return;
  }
  const key = xmlEscape(decodeURIComponentSafe(path.slice(1)));
  if (service.isExpired(target.recording)) {
    await fail(404, 'NoSuchKey', 'The specified key does not exist.', `<Key>${key}</Key>`);
    return;
  }
  const { recording } = target;
  const video = target.kind === 'video';
  const source: BodySource = video ? recording.file : bufferSource(THUMBNAIL);
  const etag = video ? `"${recording.md5}"` : THUMBNAIL_ETAG;
  const lastModified = new Date(Math.floor(recording.createdAt.getTime() / 1000) * 1000);
  const headers: OutgoingHttpHeaders = {
    ...base,
    'Last-Modified': lastModified.toUTCString(),
    ETag: etag,
    'Accept-Ranges': 'bytes',
    'Content-Type': video ? 'video/mp4' : 'image/jpeg',
  };

  const precondition = checkPreconditions(req, etag, lastModified);
  if (precondition === 412) {
    await fail(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
    return;
  }
  if (precondition === 304) {
    res.writeHead(304, { ...base, ETag: etag, 'Last-Modified': headers['Last-Modified'] as string });
    res.end();
    return;
  }

  const rangeHeader = req.headers.range;
  const range = fault?.noRange || !ifRangeHolds(req, etag, lastModified) ? null : parseRange(rangeHeader, source.size);
  if (range === 'unsatisfiable') {
    await fail(
      416,
      'InvalidRange',
      'The requested range is not satisfiable',
      `<RangeRequested>${xmlEscape(rangeHeader ?? '')}</RangeRequested><ActualObjectSize>${source.size}</ActualObjectSize>`,
      { 'Content-Range': `bytes */${source.size}` },
    );
    return;
  }
  if (range) {
    headers['Content-Range'] = `bytes ${range.start}-${range.end}/${source.size}`;
    await sendBody(res, {
      status: 206,
      headers,
      source,
      start: range.start,
      length: range.end - range.start + 1,
      head,
      fault,
    });
    return;
  }
  await sendBody(res, { status: 200, headers, source, head, fault });
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** S3's order: If-Match, If-Unmodified-Since (412), then If-None-Match, If-Modified-Since (304). */
function checkPreconditions(req: IncomingMessage, etag: string, lastModified: Date): 200 | 304 | 412 {
  const ifMatch = req.headers['if-match'];
  if (ifMatch !== undefined) {
    if (!etagListHas(ifMatch, etag)) return 412;
  } else {
    const since = parseHttpDate(req.headers['if-unmodified-since']);
    if (since !== null && lastModified.getTime() > since) return 412;
  }
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    if (etagListHas(ifNoneMatch, etag)) return 304;
  } else {
    const since = parseHttpDate(req.headers['if-modified-since']);
    if (since !== null && lastModified.getTime() <= since) return 304;
  }
  return 200;
}

/** If-Range: the Range applies only if the validator still names this exact object. */
function ifRangeHolds(req: IncomingMessage, etag: string, lastModified: Date): boolean {
  const header = req.headers['if-range'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return true;
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag;
  const date = parseHttpDate(value);
  return date !== null && lastModified.getTime() <= date;
}

function etagListHas(list: string, etag: string): boolean {
  return list.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag.replace(/^W\//, '') === etag;
  });
}

function parseHttpDate(value: string | undefined): number | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

interface ErrorAnswer {
  status: number;
  code: string;
  message: string;
  extra: string;
  requestId: string;
  head: boolean;
  fault: FaultSpec | null;
  headers: OutgoingHttpHeaders;
}

/** An S3 error document (HEAD gets the status and headers only, as from S3). */
function sendError(res: ServerResponse, e: ErrorAnswer): Promise<void> {
  const xml =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${e.code}</Code><Message>${e.message}</Message>` +
    `${e.extra}<RequestId>${e.requestId}</RequestId><HostId>${e.headers['x-amz-id-2'] as string}</HostId></Error>`;
  return sendBody(res, {
    status: e.status,
    headers: { ...e.headers, 'Content-Type': 'application/xml' },
    source: bufferSource(Buffer.from(xml)),
    head: e.head,
    fault: e.fault,
  });
}

function sendInjected(
  res: ServerResponse,
  fault: FaultSpec,
  head: boolean,
  base: OutgoingHttpHeaders,
  requestId: string,
): Promise<void> {
  if (fault.redirectTo !== undefined) {
    res.writeHead(fault.status ?? 307, { ...base, location: fault.redirectTo, 'content-length': 0 }).end();
    return Promise.resolve();
  }
  const status = fault.status ?? 200;
  if (fault.emptyBody) {
    return sendBody(res, { status, headers: base, source: bufferSource(Buffer.alloc(0)), head, fault });
  }
  if (fault.html) {
    const page = Buffer.from(htmlErrorPage(status));
    return sendBody(res, {
      status,
      headers: { ...base, 'Content-Type': 'text/html' },
      source: bufferSource(page),
      head,
      fault,
    });
  }
  return sendError(res, {
    status,
    code: status === 503 ? 'SlowDown' : status === 403 ? 'AccessDenied' : 'InternalError',
    message:
      status === 503 ? 'Please reduce your request rate.' : 'We encountered an internal error. Please try again.',
    extra: '',
    requestId,
    head,
    fault,
    headers: base,
  });
}
