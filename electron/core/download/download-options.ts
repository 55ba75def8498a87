/**
 * What `downloadFile` takes and gives back (split from fetch-file.ts, which re-exports both).
 */
import type { DownloadFs } from './download-fs.js';
import type { DownloadPolicy } from './http-request.js';
import type { DownloadProgress } from './progress.js';

export interface DownloadOptions {
  url: string;
  /**
   * Final path, or a function choosing it once the file is verified (e.g. `chooseFreeName`, which reserves
   * the name with an empty file). The part is renamed onto it only if it is absent or an empty reservation.
   */
  dest: string | (() => Promise<string>);
  /** The part file; must be in the same folder (file system) as `dest` for an atomic rename. */
  partPath: string;
  /** Size announced by the webhook; the file must match it, and no byte beyond it is written. */
  expectedBytes?: number | null;
  /**
   * The webhook's announced size even when it is not trusted for verification (`expectedBytes` null): a body
   * without a length never goes past it, every time (a size measured by cutting is not the server's).
   */
  announcedBytes?: number | null;
  /**
   * The most bytes one recording may have when neither the server nor the webhook says how many (a body with no
   * Content-Length stops here instead of filling the disk). Default DEFAULT_MAX_RECORDING_BYTES.
   */
  maxBytes?: number;
  policy: DownloadPolicy;
  signal?: AbortSignal;
  onProgress?(p: DownloadProgress): void;
  /** Called after every write with the bytes it put in the part (not throttled: keep it cheap). */
  onBytesWritten?(bytes: number): void;
  /**
   * The most bytes `onBytesWritten` may be late by. On the engine's worker thread the writes are told in batches
   * (every 100 ms); a batch then also goes as soon as this many bytes wait (the queue's free-space watch).
   */
  bytesWrittenEvery?: number;
  /** Called once every byte has arrived: what follows is local (verification, the rename). */
  onReceived?(): void;
  /**
   * Called with the `Date` header (ms since the epoch, on the origin's clock) of every answer that serves the file
   * (200/206): the service's own time, which the download queue judges the service's deadline by. An error answer
   * carries its Date in HttpStatusError.serviceDate instead.
   */
  onServiceDate?(date: number): void;
  /**
   * Maximum parallel ranges (default 4; 1 disables segmenting). A download starts with one connection and adds
   * ranges only while they add throughput (see `rampWindowMs`, `splitBelowBytesPerSec`).
   */
  segments?: number;
  /** How long each connection count is measured before the next step of the ramp (default 250 ms). */
  rampWindowMs?: number;
  /**
   * Ranges are added only while one connection gets less than this many bytes per second (default 100 MB/s):
   * above it the link, the disk or the CPU is the limit, and more connections would only share it.
   */
  splitBelowBytesPerSec?: number;
  /** Files larger than this are fetched in parallel ranges (default 32 MiB). */
  segmentThresholdBytes?: number;
  /** Idle timeout per connection, and the time allowed for each response's headers (default 30 s). */
  timeoutMs?: number;
  /**
   * The stall rule: after each `windowMs`, a download that received less than `bytesPerSec` on average over the
   * window, or that at its rate cannot finish before `deadlineAt`, stops with StallError (part kept).
   */
  stallRule?: StallRule;
  /** Test seam: replaces file-system calls (e.g. to inject ENOSPC). */
  fs?: Partial<DownloadFs>;
  /**
   * How a flush of the part (fsync, fdatasync) waits for its turn behind the recordings journal's commits. By
   * default this thread's flush order (flush-priority.ts); the engine's worker asks the main thread's.
   */
  flushTurn?: <T>(flush: () => Promise<T>) => Promise<T>;
  /**
   * Keep the sidecar (with the name the file was saved under) after the rename, so a caller that records
   * the result durably can remove it afterwards with `forgetCommit`. A restart in between then finds the
   * saved file instead of downloading a second copy.
   */
  keepCommitRecord?: boolean;
  /**
   * SHA-256 of an earlier download of this recording whose MD5 did not match the ETag: the same bytes again
   * prove the ETag is not an MD5 (S3 encrypted objects), and the file is saved with the `repeat` check.
   */
  repeatOf?: string | null;
  /** Minimum time between two `onProgress` calls (default 250 ms; 0 reports every write). */
  progressIntervalMs?: number;
  /** Minimum time between durable checkpoints of segment progress (default 1000 ms). */
  checkpointIntervalMs?: number;
  /** A running segment is split for an idle connection when at least twice this is left (default 4 MiB). */
  minSplitBytes?: number;
  /** A background fdatasync of the part after every this many bytes (default 32 MiB; see write-behind.ts). */
  writeBehindBytes?: number;
}

export interface StallRule {
  bytesPerSec: number;
  windowMs: number;
  /** When the file disappears, on the clock `now` (monotonic by default), or null. */
  deadlineAt?: number | null;
  /** Clock of `deadlineAt` (default: the monotonic clock of core/time.ts). */
  now?: () => number;
}

export interface DownloadResult {
  /** Where the file now is. */
  path: string;
  bytes: number;
  /** MD5 of the file when it was computed (the ETag carried one), else null. */
  md5: string | null;
  /** What the file was checked against before it was named: size, MD5, both, or nothing (nothing was known). */
  checks: ('size' | 'md5' | 'repeat' | 'short')[];
  etag: string | null;
  /** The server's Last-Modified for the object (with `etag` and the size, which object version this was). */
  lastModified: string | null;
  /** Bytes that were already in the part when this call started (0 for a fresh download). */
  resumedFrom: number;
  /** The part had to be discarded because the server ignored the range or its copy changed. */
  restarted: boolean;
  /** Highest number of parallel connections used. */
  connections: number;
  /** The file had already been saved by an earlier run (nothing was downloaded). */
  alreadySaved: boolean;
}
