/**
 * The one retry loop of the core for work that is retried from a timer (a receiver that cannot listen, a
 * tunnel to reopen, a hook call the service refused, a pipeline that cannot open): after a failure it waits
 * what the policy of backoff.ts says, on the monotonic clock, and runs the attempt again; a success starts
 * again from the first wait. One timer at a time, unref'd (a retry alone never keeps a process alive),
 * cancelled by `cancel()`, `reset()` or an AbortSignal, and never armed past a deadline: the last attempt
 * happens at the deadline itself, the last moment the work could still succeed.
 *
 * Async loops that await each attempt use `retrying` (backoff.ts); the download manager's 5,000 jobs share one
 * timer (pipeline/retry-schedule.ts) and take their due times from `nextAttemptAt` here. A spec
 * (tests/architecture/retry-loops.spec.ts) counts the timers armed in a retry's catch or failure path elsewhere.
 */
import { retryDelay, type BackoffPolicy, type NextAttemptOptions } from './backoff.js';

/** A monotonic clock (`Clock` of the core's time module fits): only differences of `now()` mean something. */
export interface MonotonicClock {
  now(): number;
}

/** `performance.now()`: never steps with the wall clock. */
export const monotonicClock: MonotonicClock = { now: () => performance.now() };

/** When retry `attempt` of work that failed at `now` is due (see `retryDelay`), or null past the deadline. */
export function nextAttemptAt(attempt: number, policy: BackoffPolicy, options: NextAttemptOptions): number | null {
  const delay = retryDelay(attempt, policy, options);
  return delay === null ? null : options.now + delay;
}

export interface RetryLoopOptions {
  policy: BackoffPolicy;
  random?: () => number;
  /** The clock a `deadline` is on (in the core, time.ts's `systemClock`); default `performance.now()`. */
  clock?: MonotonicClock;
  /** Stops the loop for good: the pending attempt is dropped and `retry` schedules nothing. */
  signal?: AbortSignal;
}

/** One scheduled attempt: the wait and when it is due on the loop's clock. */
export interface ScheduledRetry {
  attempt: number;
  delayMs: number;
  at: number;
}

/**
 * Retries one thing from a timer. After each failure call `retry(run)`: it counts the failure and runs `run`
 * after the policy's wait (replacing an attempt still pending, which never ran and so waits the same); after a
 * success call `reset()`.
 */
export class RetryLoop {
  readonly #policy: BackoffPolicy;
  readonly #random: (() => number) | undefined;
  readonly #clock: MonotonicClock;
  readonly #signal: AbortSignal | undefined;
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(options: RetryLoopOptions) {
    this.#policy = options.policy;
    this.#random = options.random;
    this.#clock = options.clock ?? monotonicClock;
    this.#signal = options.signal;
  }

  /** Failures since the last reset. */
  get attempt(): number {
    return this.#attempt;
  }

  /** Whether an attempt is waiting for its time. */
  get pending(): boolean {
    return this.#timer !== null;
  }

  /**
   * Counts a failure and schedules `run` after the wait for it, or at `deadline` (monotonic, on the loop's clock)
   * when that comes first. Null, and nothing scheduled, once the deadline has passed or the signal aborted.
   */
  retry(run: () => void, options: { deadline?: number } = {}): ScheduledRetry | null {
    if (this.#signal?.aborted) return null;
    const replacing = this.#timer !== null;
    this.cancel();
    const attempt = replacing ? this.#attempt : this.#attempt + 1;
    const now = this.#clock.now();
    const delayMs = retryDelay(attempt, this.#policy, { now, deadline: options.deadline, random: this.#random });
    if (delayMs === null) return null;
    this.#attempt = attempt;
    this.#arm(run, delayMs);
    return { attempt, delayMs, at: now + delayMs };
  }

  /**
   * Runs `run` again on the next turn, with no wait and no failure counted: the work made progress (a relay
   * that carried a request is replaced at once) or someone asked for it now (a page came back into view).
   */
  again(run: () => void): void {
    if (this.#signal?.aborted) return;
    this.cancel();
    this.#arm(run, 0);
  }

  #arm(run: () => void, delayMs: number): void {
    const timer = setTimeout(() => {
      if (this.#timer !== timer) return;
      this.cancel();
      run();
    }, delayMs);
    // A retry alone must not keep a headless process (or a test run) alive.
    if (typeof timer === 'object' && 'unref' in timer) timer.unref();
    this.#timer = timer;
    // Listened to only while an attempt is pending: one signal may stop many loops over a long life.
    this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  readonly #onAbort = (): void => this.cancel();

  /** Drops the pending attempt; the failures counted so far stay. */
  cancel(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }

  /** The work succeeded (or starts afresh): the next failure waits the first wait again. */
  reset(): void {
    this.cancel();
    this.#attempt = 0;
  }
}
