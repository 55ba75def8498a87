/**
 * How big a recording may be, decided from what each side says: the server's length (Content-Length or
 * Content-Range), the webhook's announced size and the maxRecordingBytes cap. Nothing beyond these is written: a
 * body without a length stops one byte past what may arrive, and that byte proves the excess.
 */
import { DownloadRefusedError, VerificationError } from './errors.js';

/** 64 GiB: a day of broadcast at a high bitrate, far beyond any real recording, far below a full disk loop. */
export const DEFAULT_MAX_RECORDING_BYTES = 64 * 1024 ** 3;

export interface SizeLimits {
  /** The webhook's announced size, when trusted. */
  expected: number | null;
  /** The webhook's announced size even when not trusted for verification: a body without a length stops there. */
  announced?: number | null;
  maxBytes: number;
}

/** Before reading a byte: the error for a server length that cannot be the recording, or null. */
export function refuseServerLength(total: number | null, limits: SizeLimits): Error | null {
  if (total === null) return null;
  if (limits.expected !== null && total !== limits.expected) {
    return new VerificationError('announced-size', limits.expected, total);
  }
  if (total > limits.maxBytes) {
    return new DownloadRefusedError(
      `the server's file has ${total} bytes, more than the ${limits.maxBytes} allowed by the maxRecordingBytes setting`,
    );
  }
  return null;
}

/** The most bytes the part may reach: the server's length, else one past the announced size or the cap. */
export function sizeCeiling(total: number | null, limits: SizeLimits): number {
  return total ?? Math.min(limits.expected ?? limits.announced ?? Number.MAX_SAFE_INTEGER, limits.maxBytes) + 1;
}

/** After a body without a length reached the ceiling: what to report. */
export function overflowError(size: number, limits: SizeLimits): Error {
  // `size` is the announcement + 1 because Tally stopped there: marked `cut`, it never counts as the server's size.
  const announced = limits.expected ?? limits.announced ?? null;
  if (announced !== null && announced < limits.maxBytes) {
    return new VerificationError('announced-size', announced, size, true);
  }
  return new DownloadRefusedError(
    `the server sent more than ${limits.maxBytes} bytes without saying how many (the maxRecordingBytes setting)`,
  );
}
