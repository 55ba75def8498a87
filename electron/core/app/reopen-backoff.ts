/**
 * The bounded backoff policy that reopens the receiver when a restart left nothing receiving (see
 * PipelineHost.failed, which retries on a RetryLoop with it): the wait doubling up to a minute.
 */
import type { BackoffPolicy } from '../backoff.js';

/** First wait before reopening, and the longest: a receiver that cannot open is retried at most once a minute. */
export const REOPEN_FIRST_MS = 1_000;
export const REOPEN_MAX_MS = 60_000;
/**
 * Exact waits (no jitter): one app reopens its own receiver, nobody else retries in step with it. A lasting
 * failure costs one attempt a minute rather than a busy loop (the host retries on a RetryLoop with it).
 */
export const REOPEN_BACKOFF: BackoffPolicy = { baseMs: REOPEN_FIRST_MS, maxMs: REOPEN_MAX_MS };
