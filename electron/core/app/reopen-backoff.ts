/**
 * The bounded backoff that reopens the receiver when a restart left nothing receiving (see PipelineHost.failed):
 * one timer at a time, the wait doubling up to a minute.
 */
import { backoffDelay, type BackoffPolicy } from '../backoff.js';

/** First wait before reopening, and the longest: a receiver that cannot open is retried at most once a minute. */
export const REOPEN_FIRST_MS = 1_000;
export const REOPEN_MAX_MS = 60_000;
/** Exact waits (no jitter): one app reopens its own receiver, nobody else retries in step with it. */
const REOPEN_BACKOFF: BackoffPolicy = { baseMs: REOPEN_FIRST_MS, maxMs: REOPEN_MAX_MS };

/**
 * Retries reopening the receiver while nothing receives: one timer at a time, the wait doubling up to
 * REOPEN_MAX_MS, so a lasting failure costs one attempt a minute rather than a busy loop.
 */
export class ReopenBackoff {
  #timer: NodeJS.Timeout | null = null;
  /** The attempt the next schedule is for; it counts only attempts that ran (a replaced one waits the same). */
  #attempt = 1;

  /** Schedules `attempt` after the current wait (replacing any attempt already scheduled); returns the wait. */
  schedule(attempt: () => void): number {
    this.cancel();
    const wait = backoffDelay(this.#attempt, REOPEN_BACKOFF);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#attempt += 1;
      attempt();
    }, wait);
    // A retry alone must not keep a headless process (or a test run) alive.
    this.#timer.unref();
    return wait;
  }

  cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** Something opened: the next failure starts again from the first wait. */
  reset(): void {
    this.cancel();
    this.#attempt = 1;
  }
}
