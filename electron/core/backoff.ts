/**
 * The one retry policy of the core: how long to wait before the next attempt of anything that failed for a
 * reason that may pass (the service's API, a download, a tunnel, a receiver that cannot open, the team
 * server). The wait doubles per attempt up to a cap, and a share of it is random so that many clients (or
 * many recordings) do not retry in step. Every retry loop of the core asks this module for its wait, never past
 * the deadline of the work (`retryDelay`); a lint rule keeps backoff formulas from being written anywhere else
 * (eslint.config.js). Browser-safe (no Node import): the renderer's reconnect waits the same formula.
 */

/** One retry policy. */
export interface BackoffPolicy {
  /** Wait before the first retry (attempt 1). */
  baseMs: number;
  /** Longest wait. */
  maxMs: number;
  /**
   * Share of each wait that is random, 0..1: 0 waits exactly (a single local retry), 0.5 is "equal jitter"
   * (never less than half the wait), 1 is "full jitter" (anywhere from 0 to the wait). Default 0.
   */
  jitter?: number;
}

const unit = (value: number): number => (Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0);

/**
 * The wait before retry `attempt` (1-based): `baseMs · 2^(attempt-1)`, capped at `maxMs`, of which the
 * `jitter` share is scaled by `random()` (a value in [0, 1)).
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  // 2 ** 1024 is Infinity, which the cap turns back into maxMs.
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  const jitter = unit(policy.jitter ?? 0);
  return Math.round(exponential * (1 - jitter) + exponential * jitter * unit(random()));
}

export interface NextAttemptOptions {
  /** The monotonic moment of the failure. */
  now: number;
  /** The monotonic moment after which no attempt can succeed (undefined: none). */
  deadline?: number;
  random?: () => number;
  /** The shortest wait (e.g. 1 ms so that a retry never runs in the same turn). Default 0. */
  minMs?: number;
}

/**
 * The wait before retry `attempt` (1-based) of work that failed at `now`: the policy's wait, but never past
 * `deadline` (the final attempt is made at the deadline itself). Null once the deadline has passed.
 */
export function retryDelay(attempt: number, policy: BackoffPolicy, options: NextAttemptOptions): number | null {
  const { now, deadline } = options;
  if (deadline !== undefined && now >= deadline) return null;
  const wait = Math.max(options.minMs ?? 0, backoffDelay(attempt, policy, options.random));
  return deadline === undefined ? wait : Math.min(deadline - now, wait);
}

export interface RetryOptionsBase {
  policy: BackoffPolicy;
  /** Attempts after the first (Infinity: until it succeeds, is refused or aborted). */
  retries: number;
  /** Whether the failure of attempt `attempt` (1-based) is worth another one. */
  shouldRetry: (error: unknown, attempt: number) => boolean;
  /** Called before each wait, e.g. to say that another attempt follows. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** Stops the waiting: `retrying` then rejects with `aborted()`, or the signal's reason. */
  signal?: AbortSignal;
  aborted?: () => Error;
  random?: () => number;
}

/**
 * `deadline`: the moment (on `now`'s clock, monotonic) after which no attempt can succeed: no wait runs past it
 * (the last attempt is made at the deadline itself) and a failure after it is thrown. `now` is given with it (in
 * the core `systemClock.now` of time.ts; this module stays browser-safe, so it reads no clock of its own).
 */
export type RetryOptions = RetryOptionsBase &
  ({ deadline?: undefined; now?: undefined } | { deadline: number; now: () => number });

/**
 * The one awaited retry loop of the core: runs `attempt` until it succeeds, a failure is not worth another attempt,
 * the retries run out or the deadline passes (the last failure is thrown) or the signal aborts; between attempts it
 * waits what `retryDelay` says. Work retried from a timer uses `RetryLoop` (retry-loop.ts). Loops with more to do between attempts (a queue to reorder, credentials to reload) use
 * `backoffDelay` directly.
 */
export async function retrying<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const stopped = (): Error => {
    if (options.aborted) return options.aborted();
    const reason: unknown = options.signal?.reason;
    return reason instanceof Error
      ? reason
      : Object.assign(new Error('The operation was aborted.'), { name: 'AbortError' });
  };
  for (let n = 1; ; n += 1) {
    if (options.signal?.aborted) throw stopped();
    try {
      return await attempt(n);
    } catch (error) {
      if (options.signal?.aborted) throw stopped();
      if (n > options.retries || !options.shouldRetry(error, n)) throw error;
      const now = options.deadline === undefined ? 0 : options.now();
      const delayMs = retryDelay(n, options.policy, { now, deadline: options.deadline, random: options.random });
      if (delayMs === null) throw error;
      options.onRetry?.(error, n, delayMs);
      await abortableDelay(delayMs, options.signal);
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (a retry loop then says it stopped). */
export function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
