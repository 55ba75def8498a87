/**
 * The single-file download engine. It streams into `<part>` (memory stays flat whatever the size), resumes
 * a part left by an earlier run with `Range` + `If-Range`, switches to parallel ranges for big files, verifies
 * size and MD5, and only then renames the part onto the final name and fsyncs the folder. A file that is not
 * proven complete is never given its final name.
 */
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import type { SocketResponse } from './socket-response.js';
import path from 'node:path';
import type { EngineContext } from './engine-context.js';
import { ifRangeValidator, RestartFromZero, transferError } from './engine-context.js';
import { ensureFreeSpace } from './disk.js';
import type { DownloadFs } from './download-fs.js';
import { downloadFs, fsyncDir, removeIfExists, sizeOf } from './download-fs.js';
import {
  DestinationExistsError,
  DownloadRefusedError,
  HttpStatusError,
  NetworkError,
  VerificationError,
} from './errors.js';
import { pumpToFile } from './file-sink.js';
import { WRITE_BEHIND_BYTES, WriteBehind } from './write-behind.js';
import {
  contentLength,
  describeEndpoint,
  errorHint,
  openResponse,
  parseContentRange,
  toDownloadError,
} from './http-request.js';
import type { PartState } from './part-state.js';
import { readPartState, removePartState, statePathFor, writePartState } from './part-state.js';
import { ProgressMeter } from './progress.js';
import { watchStall } from './stall-rule.js';
import { planSegments, runSegmented, segmentBytes } from './segmented.js';
import { DEFAULT_MAX_RECORDING_BYTES, overflowError, refuseServerLength, sizeCeiling } from './size-limits.js';
import { hashOfFile, md5FromEtag, md5OfFile, verifyPart, type VerifyCheck } from './verify.js';
import { httpDate } from '../time.js';

export type { DownloadPolicy } from './http-request.js';
export type { DownloadProgress } from './progress.js';
export type { DownloadFs, PartHandle } from './download-fs.js';

export const DEFAULT_SEGMENTS = 4;
export const DEFAULT_SEGMENT_THRESHOLD_BYTES = 32 * 1024 * 1024;
/** How long each connection count of the ramp is measured (segmented.ts). */
export const DEFAULT_RAMP_WINDOW_MS = 250;
/**
 * One connection faster than this (100 MB/s, 800 Mbit/s) is not joined by another: the link, the disk or the
 * CPU is then the limit (on loopback one stream measured 0.92x curl, four ranges 0.70x). Throttling CDNs and
 * long-distance links give one connection far less.
 */
export const DEFAULT_SPLIT_BELOW_BYTES_PER_SEC = 100e6;
export { DEFAULT_MAX_RECORDING_BYTES } from './size-limits.js';
/** Idle time (no byte received) before a connection is given up. */
export const DEFAULT_TIMEOUT_MS = 30_000;

export type { DownloadOptions, DownloadResult } from './download-options.js';
import type { DownloadOptions, DownloadResult } from './download-options.js';

interface TransferOutcome {
  total: number | null;
  etag: string | null;
  lastModified: string | null;
  /** MD5 computed while streaming the whole file from byte 0, else null. */
  md5: string | null;
  /** The server sent the whole file instead of the rest: the part was rewritten from byte 0. */
  restarted?: boolean;
}

/**
 * Downloads `url` to `dest` through `partPath`, resuming whatever an earlier call left there.
 * @throws DownloadRefusedError (policy), HttpStatusError, NetworkError/TimeoutError (part kept),
 *   VerificationError (part deleted), DiskFullError (part kept), DestinationExistsError (verified part kept),
 *   or the signal's abort reason (part kept).
 */
export async function downloadFile(opts: DownloadOptions): Promise<DownloadResult> {
  const fsx = downloadFs(opts.fs, opts.flushTurn);
  const segments = Math.max(1, Math.floor(opts.segments ?? DEFAULT_SEGMENTS));
  // The stall rule stops this download (not the caller's): its own signal, joined with the caller's.
  const stall = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stall.signal]) : stall.signal;
  const ctx: EngineContext = {
    fsx,
    policy: opts.policy,
    signal,
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    partPath: opts.partPath,
    folder: path.dirname(path.resolve(opts.partPath)),
    meter: new ProgressMeter(opts.onProgress, opts.progressIntervalMs, undefined, opts.onBytesWritten),
    onServiceDate: opts.onServiceDate,
    segments,
    minSplitBytes: opts.minSplitBytes ?? 4 * 1024 * 1024,
    checkpointIntervalMs: opts.checkpointIntervalMs ?? 1000,
    writeBehindBytes: opts.writeBehindBytes ?? WRITE_BEHIND_BYTES,
    maxConnections: 0,
    ramp: {
      windowMs: opts.rampWindowMs ?? DEFAULT_RAMP_WINDOW_MS,
      splitBelowBytesPerSec: opts.splitBelowBytesPerSec ?? DEFAULT_SPLIT_BELOW_BYTES_PER_SEC,
    },
  };
  const unwatch = opts.stallRule
    ? watchStall(opts.stallRule, ctx.meter, opts.url, (error) => stall.abort(error))
    : () => undefined;
  try {
    return await run(ctx, opts);
  } catch (error) {
    // Whatever the abort surfaced as (a body error, an abort error), a tripped stall rule is the reason.
    if (stall.signal.aborted && !opts.signal?.aborted) throw stall.signal.reason as Error;
    throw error;
  } finally {
    unwatch();
  }
}

async function run(ctx: EngineContext, opts: DownloadOptions): Promise<DownloadResult> {
  const { fsx, partPath } = ctx;
  opts.signal?.throwIfAborted();
  let url: URL;
  if (opts.policy.check) {
    const verdict = await opts.policy.check(opts.url);
    if (!verdict.ok) throw new DownloadRefusedError(verdict.reason);
    url = verdict.url;
  } else {
    try {
      url = new URL(opts.url);
    } catch {
      throw new DownloadRefusedError('the download URL is not a valid absolute URL');
    }
  }

  let state = await readPartState(fsx, partPath);
  let partSize = await sizeOf(fsx, partPath);
  let preferredDest: string | null = null;

  if (state?.committed) {
    const { path: savedPath, bytes } = state.committed;
    if (partSize === null) {
      if ((await sizeOf(fsx, savedPath)) === bytes) {
        if (!opts.keepCommitRecord) await removePartState(fsx, partPath);
        return {
          path: savedPath,
          bytes,
          md5: null,
          checks: state.committed.checks ?? [],
          etag: state.etag,
          lastModified: state.lastModified,
          resumedFrom: bytes,
          restarted: false,
          connections: 0,
          alreadySaved: true,
        };
      }
    } else {
      // Interrupted between the commit record and the rename: finish onto the same reserved name if still ours.
      const existing = await sizeOf(fsx, savedPath);
      if (existing === null || existing === 0) preferredDest = savedPath;
    }
  }
  if (partSize === null && state) {
    await removePartState(fsx, partPath);
    state = null;
  }
  const resumedFrom = state?.mode === 'segmented' && state.segments ? segmentBytes(state.segments) : (partSize ?? 0);

  const knownTotal = state?.total ?? opts.expectedBytes ?? null;
  ctx.meter.reset(resumedFrom, knownTotal);
  // Only a size a server reported is trusted for the disk check: an announcement is webhook text, and an absurd
  // one ("9007199254740991") would otherwise read as "disk full" for ever.
  if (state?.total != null) await ensureFreeSpace(ctx.folder, state.total - resumedFrom, fsx.statfs);

  let outcome: TransferOutcome;
  let restarted = false;
  if (state && state.total !== null && partSize === state.total && isComplete(state)) {
    // Everything is already here (crash after the last byte): verify locally, no request.
    outcome = { total: state.total, etag: state.etag, lastModified: state.lastModified, md5: null };
  } else {
    let allowSegments = true;
    for (let attempt = 0; ; attempt += 1) {
      try {
        outcome =
          state?.mode === 'segmented'
            ? await resumeSegmented(ctx, url, state)
            : await transferSequential(ctx, url, state, partSize ?? 0, opts, allowSegments);
        break;
      } catch (error) {
        if (!(error instanceof RestartFromZero)) throw error;
        if (attempt >= 2) {
          throw new NetworkError(describeEndpoint(url), `the server kept changing the file (${error.message})`);
        }
        restarted = true;
        allowSegments = false;
        await removeIfExists(fsx, partPath);
        await removePartState(fsx, partPath);
        state = null;
        partSize = 0;
        ctx.meter.reset(0, ctx.meter.total);
      }
    }
  }
  ctx.meter.flush();
  ctx.meter.done = true;
  opts.onReceived?.();

  return finalize(ctx, opts, outcome, {
    resumedFrom,
    restarted: restarted || outcome.restarted === true,
    preferredDest,
  });
}

function isComplete(state: PartState): boolean {
  return state.mode === 'sequential' || (state.segments ?? []).every((s) => s.pos === s.end);
}

async function resumeSegmented(ctx: EngineContext, url: URL, state: PartState): Promise<TransferOutcome> {
  if (state.total !== null)
    await ensureFreeSpace(ctx.folder, state.total - segmentBytes(state.segments ?? []), ctx.fsx.statfs);
  await runSegmented(ctx, url, state, null);
  return { total: state.total, etag: state.etag, lastModified: state.lastModified, md5: null };
}

/**
 * One request from `offset` (a Range request even from 0, which tells whether ranges work), then either the
 * body is streamed into the part, or, for a big file on a range-capable server, the segmented download takes
 * over with this response as its first segment.
 */
async function transferSequential(
  ctx: EngineContext,
  url: URL,
  state: PartState | null,
  startOffset: number,
  opts: DownloadOptions,
  allowSegments: boolean,
): Promise<TransferOutcome> {
  let offset = startOffset;
  const headers: Record<string, string> = { range: `bytes=${offset}-` };
  const validator = offset > 0 ? ifRangeValidator(state) : null;
  if (validator) headers['if-range'] = validator;
  let opened = await openResponse({
    url,
    headers,
    policy: ctx.policy,
    signal: ctx.signal,
    timeoutMs: ctx.timeoutMs,
  });
  let res: SocketResponse = opened.res;
  let status = res.statusCode ?? 0;
  let ranged = true;

  if (status === 416) {
    const range = parseContentRange(res.headers['content-range']);
    res.resume();
    const serverTotal = range?.total ?? null;
    if (offset > 0 && (serverTotal === offset || (serverTotal === null && state?.total === offset))) {
      // The part already holds the whole file: only verification is left.
      return { total: offset, etag: state?.etag ?? null, lastModified: state?.lastModified ?? null, md5: null };
    }
    if (offset > 0) throw new RestartFromZero('the part is larger than the file on the server');
    // `bytes=0-` on an empty object is unsatisfiable (S3 does this): ask again without a range.
    opened = await openResponse({
      url,
      policy: ctx.policy,
      signal: ctx.signal,
      timeoutMs: ctx.timeoutMs,
    });
    res = opened.res;
    status = res.statusCode ?? 0;
    ranged = false;
  }
  if (status === 200 || status === 206) {
    // A captive portal or proxy login page answers 200 with HTML, and a broken proxy 200 with nothing: without
    // an announced size or an MD5 ETag either would "verify" and be saved as the recording, which is then lost.
    // Neither is what a recording host serves (S3 answers 416, not an empty 200, to a range on an empty object).
    const type = String(res.headers['content-type'] ?? '').toLowerCase();
    const notTheFile = /^\s*(text\/html|application\/xhtml\+xml)\b/.test(type)
      ? 'an HTML page instead of the recording'
      : ranged && contentLength(res) === 0
        ? 'an empty answer to a range request'
        : null;
    if (notTheFile) {
      res.destroy();
      throw new HttpStatusError(status, opened.url.host, notTheFile);
    }
    // The origin serves the file: its Date is the service's clock (a portal's page above is not the origin's).
    const date = httpDate(res.headers.date);
    if (date !== null) ctx.onServiceDate?.(date);
  }

  let total: number | null;
  let rangesWork: boolean;
  if (status === 200) {
    // Either no range support or If-Range saw a different file: the body is the whole file from byte 0.
    total = contentLength(res);
    rangesWork = res.headers['accept-ranges'] === 'bytes';
    offset = 0;
  } else if (status === 206) {
    const range = parseContentRange(res.headers['content-range']);
    if (!range || range.start !== offset) {
      res.destroy();
      throw new RestartFromZero('the server answered a different range than asked');
    }
    total = range.total;
    rangesWork = true;
    const etag = res.headers.etag ?? null;
    if (offset > 0 && state) {
      const changed =
        (state.etag !== null && etag !== null && etag !== state.etag) ||
        (state.total !== null && total !== null && total !== state.total);
      if (changed) {
        res.destroy();
        throw new RestartFromZero('the file on the server changed since the part was written');
      }
    }
  } else {
    throw new HttpStatusError(status, opened.url.host, await errorHint(res), httpDate(res.headers.date));
  }

  const limits = {
    expected: opts.expectedBytes ?? null,
    announced: opts.announcedBytes ?? null,
    maxBytes: opts.maxBytes ?? DEFAULT_MAX_RECORDING_BYTES,
  };
  // The server says how big the file is: refuse before reading a byte when that cannot be the recording.
  const refusal = refuseServerLength(total, limits);
  if (refusal) {
    res.destroy();
    throw refusal;
  }

  const etag = res.headers.etag ?? null;
  const lastModified = res.headers['last-modified'] ?? null;
  ctx.meter.reset(offset, total ?? opts.expectedBytes ?? null);
  ctx.meter.flush();
  try {
    if (total !== null) await ensureFreeSpace(ctx.folder, total - offset, ctx.fsx.statfs);
  } catch (error) {
    res.destroy();
    throw error;
  }

  const threshold = opts.segmentThresholdBytes ?? DEFAULT_SEGMENT_THRESHOLD_BYTES;
  if (allowSegments && offset === 0 && total !== null && total > threshold && ctx.segments > 1 && rangesWork) {
    const segState: PartState = {
      version: 1,
      mode: 'segmented',
      etag,
      lastModified,
      total,
      // One segment for the one connection it starts with; the ramp splits it as it adds connections.
      segments: planSegments(total, 1),
    };
    try {
      // The sidecar goes first: a segmented part without it would be a file with holes nobody can trust.
      await writePartState(ctx.fsx, ctx.partPath, segState);
      const created = await ctx.fsx.open(ctx.partPath, 'w');
      await created.close();
    } catch (error) {
      res.destroy();
      throw transferError(ctx, error, opened.url);
    }
    // The probe's stream is hashed as it is written; what other connections fetched is hashed from disk after.
    const prefix = await runSegmented(ctx, opened.url, segState, res, md5FromEtag(etag) ? createHash('md5') : null);
    const md5 = prefix ? await md5OfFile(ctx.fsx, ctx.partPath, ctx.signal, prefix) : null;
    return { total, etag, lastModified, md5 };
  }

  const seqState: PartState = { version: 1, mode: 'sequential', etag, lastModified, total };
  const hash: Hash | null = offset === 0 && md5FromEtag(etag) ? createHash('md5') : null;
  let written: number;
  const ceiling = sizeCeiling(total, limits);
  try {
    await writePartState(ctx.fsx, ctx.partPath, seqState);
    const handle = await ctx.fsx.open(ctx.partPath, offset === 0 ? 'w' : 'r+');
    try {
      const behind = new WriteBehind(handle, ctx.writeBehindBytes);
      const result = await pumpToFile(res, {
        handle,
        position: offset,
        limit: () => ceiling,
        hash,
        onWritten: (bytes) => {
          ctx.meter.add(bytes);
          behind.written(bytes);
        },
      }).finally(() => behind.settle().catch(() => undefined));
      written = result.written;
      await behind.settle();
      await handle.sync();
    } finally {
      await handle.close().catch(() => undefined);
    }
  } catch (error) {
    res.destroy();
    throw transferError(ctx, error, opened.url);
  }
  const size = offset + written;
  if (total === null && size >= ceiling) {
    // The part is useless (it is not the announced file, or it is endless): the next attempt starts afresh.
    await removeIfExists(ctx.fsx, ctx.partPath);
    await removePartState(ctx.fsx, ctx.partPath);
    throw overflowError(size, limits);
  }
  if (total !== null && size < total) {
    throw new NetworkError(describeEndpoint(opened.url), 'the connection closed before the whole file arrived');
  }
  return {
    // Null when the server gave no length: the size is then checked against nothing but the announced one.
    total,
    etag,
    lastModified,
    md5: hash ? hash.digest('hex') : null,
    restarted: startOffset > 0 && offset === 0,
  };
}

async function finalize(
  ctx: EngineContext,
  opts: DownloadOptions,
  outcome: TransferOutcome,
  info: { resumedFrom: number; restarted: boolean; preferredDest: string | null },
): Promise<DownloadResult> {
  const { fsx, partPath } = ctx;
  const size = (await sizeOf(fsx, partPath)) ?? 0;
  // Shorter than the webhook announced, and saved anyway: the queue stopped trusting the announcement because the
  // server kept sending this much (the strikes rule). Such a file is never "verified" (issue 31), and an MD5 ETag
  // that does not match it is the announced file's, not "not an MD5": it is not checked, and the file is labelled.
  const short = opts.expectedBytes == null && opts.announcedBytes != null && size < opts.announcedBytes;
  let md5: string | null;
  let checks: VerifyCheck[];
  try {
    ({ md5, checks } = await verifyPart(
      fsx,
      partPath,
      size,
      {
        serverBytes: outcome.total,
        announcedBytes: opts.expectedBytes ?? null,
        md5: short ? null : md5FromEtag(outcome.etag),
      },
      outcome.md5,
      ctx.signal,
    ));
  } catch (error) {
    if (!(error instanceof VerificationError)) throw error;
    // An ETag of 32 hex digits that is not the MD5 (S3 documents this for SSE-KMS and SSE-C objects) failed every
    // download for ever. The same bytes twice, of the right size, are the file: saved, labelled as such.
    const sha256 = error.kind === 'md5' ? await hashOfFile('sha256', fsx, partPath, ctx.signal) : null;
    if (sha256 !== null && sha256 === opts.repeatOf) {
      md5 = String(error.actual);
      checks = [...(outcome.total !== null || opts.expectedBytes != null ? (['size'] as const) : []), 'repeat'];
    } else {
      // A corrupt part must not be resumed: the next attempt starts from byte 0.
      await removeIfExists(fsx, partPath);
      await removePartState(fsx, partPath);
      if (sha256 !== null) throw new VerificationError('md5', error.expected, error.actual, false, sha256);
      throw error;
    }
  }

  // A file whose size differs from the webhook's announcement (trusted or not) was not checked against it: it
  // never says "size", whatever the server's own length said (issue 20, a server serving half the file).
  if (opts.announcedBytes != null && size !== opts.announcedBytes) checks = checks.filter((c) => c !== 'size');
  if (short) checks = [...checks, 'short'];
  ctx.signal?.throwIfAborted();
  const dest = info.preferredDest ?? (typeof opts.dest === 'function' ? await opts.dest() : opts.dest);
  const base: PartState = {
    version: 1,
    mode: 'sequential',
    etag: outcome.etag,
    lastModified: outcome.lastModified,
    total: size,
  };
  try {
    await writePartState(fsx, partPath, { ...base, committed: { path: dest, bytes: size, checks } });
    const existing = await sizeOf(fsx, dest);
    if (existing !== null && existing > 0) {
      await writePartState(fsx, partPath, base);
      throw new DestinationExistsError(dest);
    }
    await fsx.rename(partPath, dest);
    await fsyncDir(fsx, path.dirname(dest));
    if (path.dirname(dest) !== path.dirname(partPath)) await fsyncDir(fsx, path.dirname(partPath));
    if (!opts.keepCommitRecord) await removePartState(fsx, partPath);
  } catch (error) {
    if (error instanceof DestinationExistsError) throw error;
    throw transferError(ctx, error, new URL(opts.url));
  }
  return {
    path: dest,
    bytes: size,
    md5,
    checks,
    etag: outcome.etag,
    lastModified: outcome.lastModified,
    resumedFrom: info.resumedFrom,
    restarted: info.restarted,
    connections: ctx.maxConnections || 1,
    alreadySaved: false,
  };
}

/** Removes the commit record kept by `keepCommitRecord` once the caller has recorded the result durably. */
export async function forgetCommit(partPath: string, fs?: Partial<DownloadFs>): Promise<void> {
  await removePartState(downloadFs(fs), partPath);
}

/** Deletes a part and its sidecar (a job the user gave up on). */
export async function discardPart(partPath: string, fs?: Partial<DownloadFs>): Promise<void> {
  const fsx = downloadFs(fs);
  await removeIfExists(fsx, partPath);
  await removePartState(fsx, partPath);
}

export { statePathFor, toDownloadError };
