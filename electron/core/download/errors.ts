/**
 * Errors of the download engine. Each one tells the manager what to do next (retry, give up, wait for space)
 * and tells a producer what happened. None carries the download URL's query string: presigned URLs hold
 * signatures, so messages name the host only.
 */
import { TallyError } from '../errors.js';
import { note } from '../notes.js';

export { NetworkError, TimeoutError } from '../errors.js';

/** The origin answered with a status we cannot download from (after following redirects). */
export class HttpStatusError extends TallyError {
  readonly code = 'http_status';
  constructor(
    readonly status: number,
    /** `host` of the URL that answered (no path or query). */
    readonly host: string,
    /** Short, sanitised hint from the body (an S3 error code such as `NoSuchKey`, or an HTML title). */
    readonly detail: string = '',
    /**
     * The answer's `Date` header (ms since the epoch on the origin's clock), or null: the service's own time of
     * the answer, which the manager judges the service's deadline by (never against the local clock).
     */
    readonly serviceDate: number | null = null,
  ) {
    super(`The download server ${host} answered ${status}${detail ? ` (${detail})` : ''}.`);
  }

  /**
   * Whether the status means "the file is not there (any more)". S3 answers 403 rather than 404 for a
   * missing key when listing is not allowed, so both count; the manager decides whether that is final.
   */
  get gone(): boolean {
    return this.status === 403 || this.status === 404 || this.status === 410;
  }
}

/** The download-origin policy refused a URL or a redirect hop; no request was made to it. Final. */
export class DownloadRefusedError extends TallyError {
  readonly code = 'download_refused';
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`The recording was not downloaded: ${reason}.`, options);
  }
}

/**
 * Something had been put where this download writes (a symbolic link at its part or sidecar). It was removed
 * without being followed; unlike a refusal, the download is tried again.
 */
export class UnsafePathError extends TallyError {
  readonly code = 'unsafe_path';
}

/** What a verification compared. */
export type VerificationKind = 'content-length' | 'announced-size' | 'md5';

/** The finished file does not match what the server or the webhook announced. The part was deleted. */
export class VerificationError extends TallyError {
  readonly code = 'verification';
  constructor(
    readonly kind: VerificationKind,
    readonly expected: string | number,
    readonly actual: string | number,
    /**
     * The body had no length: `actual` is where it ended or where Tally stopped reading (one byte past the most
     * that may arrive), not a size the server gave, so it never proves the announcement wrong (issue 20).
     */
    readonly cut = false,
    /** For an MD5 mismatch: the SHA-256 of the bytes that did not match (compared with the next download's). */
    readonly sha256: string | null = null,
  ) {
    super(
      // Fewer bytes than announced, by the server's own length: said as such (issue 31), and retried.
      !cut && kind === 'announced-size' && Number(actual) < Number(expected)
        ? note('downloadShort', { actual: Number(actual), expected: Number(expected) })
        : cut
          ? Number(actual) > Number(expected)
            ? `The server sent more than the ${expected} bytes the service announced without saying how many; Tally stops reading there and tries again.`
            : `The server ended the recording after ${actual} of the ${expected} bytes the service announced, without saying how many it has; it is downloaded again.`
          : kind === 'md5'
            ? `The downloaded recording is corrupt: its MD5 is ${actual} but the server announced ${expected}. It is downloaded again.`
            : kind === 'announced-size'
              ? `The downloaded recording has ${actual} bytes but the service announced ${expected}. It is downloaded again.`
              : `The downloaded recording has ${actual} bytes but the server announced ${expected}. It is downloaded again.`,
    );
  }
}

/**
 * The stall rule: a download far too slow (under the minimum rate for a while, or unable to finish before the
 * service deletes the file at its rate) gives its slot to the next recording. Its part is kept; it is retried.
 */
export class StallError extends TallyError {
  readonly code = 'stalled';
  constructor(
    readonly host: string,
    readonly bytesPerSec: number,
    readonly why: 'slow' | 'late',
  ) {
    super(
      `The download from ${host} was too slow (${formatBytes(Math.round(bytesPerSec))}/s${
        why === 'late' ? ': at that rate it cannot finish before the service deletes the file' : ''
      }): its slot goes to the next recording and it resumes later from the partial download.`,
    );
  }
}

/** No room left for the recording. The partial download is kept. */
export class DiskFullError extends TallyError {
  readonly code = 'disk_full';
  constructor(
    readonly folder: string,
    readonly neededBytes: number | null = null,
    readonly availableBytes: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(
      `The disk is full: free space in ${folder}${
        neededBytes !== null && availableBytes !== null
          ? ` (${formatBytes(neededBytes)} needed, ${formatBytes(availableBytes)} free)`
          : ''
      }; the partial download is kept and resumes automatically.`,
      options,
    );
  }
}

/** The final name is already taken by a non-empty file; nothing was overwritten and the verified part is kept. */
export class DestinationExistsError extends TallyError {
  readonly code = 'destination_exists';
  constructor(readonly path: string) {
    super(`Did not save the recording as ${path}: a different file already has that name.`);
  }
}

/** Human-readable byte count for messages (binary units, one decimal). */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
