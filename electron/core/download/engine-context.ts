/**
 * State shared by the sequential and the segmented halves of one `downloadFile` call.
 */
import type { DownloadFs } from './download-fs.js';
import { isNoSpaceError } from './disk.js';
import { DiskFullError } from './errors.js';
import type { DownloadPolicy } from './http-request.js';
import { toDownloadError } from './http-request.js';
import type { PartState } from './part-state.js';
import type { ProgressMeter } from './progress.js';

export interface EngineContext {
  fsx: DownloadFs;
  policy: DownloadPolicy;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  partPath: string;
  /** Folder of the part, named in DiskFullError. */
  folder: string;
  meter: ProgressMeter;
  /** Told the `Date` of every answer that serves the file (see DownloadOptions.onServiceDate). */
  onServiceDate: ((date: number) => void) | undefined;
  /** Maximum parallel connections (1 disables segmenting). */
  segments: number;
  /** A running segment is split for an idle connection only when at least twice this much is left. */
  minSplitBytes: number;
  /** Minimum time between two durable checkpoints of segment progress. */
  checkpointIntervalMs: number;
  /** Bytes between two background syncs of the part (see write-behind.ts). */
  writeBehindBytes: number;
  /** Highest number of connections that were open at once. */
  maxConnections: number;
  /** When a segmented download adds connections (see segmented.ts). */
  ramp: {
    /** Length of one measurement of the total rate. */
    windowMs: number;
    /** Connections are added only while one of them gets less than this (bytes per second). */
    splitBelowBytesPerSec: number;
  };
}

/**
 * The server's copy changed or stopped honouring ranges in a way the current part cannot survive: the part
 * is dropped and the download starts again from byte 0 (sequentially). Never escapes `downloadFile`.
 */
export class RestartFromZero extends Error {
  override name = 'RestartFromZero';
}

const FS_SYSCALLS = new Set(['open', 'write', 'writev', 'fsync', 'fdatasync', 'ftruncate', 'close', 'rename']);

/** Maps an error raised while transferring into the engine's vocabulary (disk full, network, abort...). */
export function transferError(ctx: EngineContext, error: unknown, url: URL): Error {
  if (isNoSpaceError(error)) return new DiskFullError(ctx.folder, null, null, { cause: error });
  const errno = error as NodeJS.ErrnoException | null;
  if (errno && typeof errno.syscall === 'string' && FS_SYSCALLS.has(errno.syscall)) {
    return errno as Error;
  }
  return toDownloadError(error, url, ctx.signal);
}

/** The validator to send with `If-Range`: a strong ETag, else Last-Modified, else none. */
export function ifRangeValidator(state: Pick<PartState, 'etag' | 'lastModified'> | null): string | null {
  if (!state) return null;
  if (state.etag && !state.etag.startsWith('W/')) return state.etag;
  return state.lastModified ?? null;
}
