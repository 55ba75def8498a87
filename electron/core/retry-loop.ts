/**
 * The one retry loop of the core for work that is retried from a timer (a receiver that cannot listen, a
 * tunnel to reopen, a hook call the service refused, a pipeline that cannot open): after a failure it waits
 * what the policy of backoff.ts says, on the monotonic clock, and runs the attempt again; a success starts
 * again from the first wait. One timer at a time, unref'd (a retry alone never keeps a process alive),
 * cancelled by `cancel()`, `reset()` or an AbortSignal, and never armed past a deadline: the last attempt
 * happens at the deadline itself, the last moment the work could still succeed.
 *
 * A loop that awaits its attempts (a mirror that retries until saved) awaits `wait()` between them; a loop whose
 * failures came from an outage that is over (the connection is back) calls `recover()`, so no wait grown during
 * the outage is carried past it (issue 30, item 6). Async loops with nothing to do between attempts use
 * `retrying` (backoff.ts); the download manager's 5,000 jobs share one timer (pipeline/retry-schedule.ts). A
 * spec (tests/architecture/retry-loops.spec.ts) counts the timers armed in a retry's catch or failure path
 * elsewhere.
 *
 * Browser-safe (the renderer's reconnect uses it through the contract), so it imports no clock: the core hands it
 * `systemClock` of time.ts, the page its own.
 */
import { retryDelay, type BackoffPolicy } from './backoff.js';

/** A monotonic clock (`Clock` of the core's time module fits): only differences of `now()` mean something. */
export interface MonotonicClock {
  now(): number;
}

export interface RetryLoopOptions {
  policy: BackoffPolicy;
  random?: () => number;
  /** The monotonic clock a `deadline` is on: in the core time.ts's `systemClock` (which counts a suspend). */
  clock: MonotonicClock;
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
  /** The pending attempt, kept for `recover()`. */
  #run: (() => void) | null = null;
  #scheduled: ScheduledRetry | null = null;
  /** Told when the pending attempt is dropped without running (`wait()` then resolves false). */
  #dropped: (() => void) | null = null;

  constructor(options: RetryLoopOptions) {
    this.#policy = options.policy;
    this.#random = options.random;
    this.#clock = options.clock;
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

  /** The attempt waiting for its time after a failure (`retry`, `wait`), to say when it comes; else null. */
  get scheduled(): ScheduledRetry | null {
    return this.#scheduled;
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
    this.#scheduled = { attempt, delayMs, at: now + delayMs };
    return this.#scheduled;
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

  /**
   * For a loop that awaits its attempts: counts a failure like `retry` and resolves true when the next attempt is
   * due, or false when none follows (the deadline has passed, the signal aborted, or `cancel()` / `reset()`).
   */
  wait(options: { deadline?: number } = {}): Promise<boolean> {
    return new Promise((resolve) => {
      if (!this.retry(() => resolve(true), options)) return resolve(false);
      this.#dropped = () => resolve(false);
    });
  }

  /**
   * What made the attempts fail has passed (the team server answers again): the failures counted so far are
   * forgotten, and an attempt still waiting runs on the next turn instead of waiting out a pause grown during it.
   */
  recover(): void {
    const run = this.#run;
    const dropped = this.#dropped;
    this.#dropped = null; // not dropped: moved to now
    this.reset();
    if (!run) return;
    this.again(run);
    this.#dropped = dropped;
  }

  #arm(run: () => void, delayMs: number): void {
    const timer = setTimeout(() => {
      if (this.#timer !== timer) return;
      this.#dropped = null;
      this.cancel();
      run();
    }, delayMs);
    this.#run = run;
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
    this.#run = null;
    this.#scheduled = null;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    const dropped = this.#dropped;
    this.#dropped = null;
    dropped?.();
  }

  /** The work succeeded (or starts afresh): the next failure waits the first wait again. */
  reset(): void {
    this.cancel();
    this.#attempt = 0;
  }
}
