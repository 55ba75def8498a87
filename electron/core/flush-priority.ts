/**
 * The order in which this process asks the disk to flush its cache. A flush (fsync, fdatasync, an O_DSYNC
 * write) waits for every flush the disk is already doing, so a download's fsync of its part, its sidecar or
 * its folder, issued a moment before a journal commit, delays the webhooks that commit acknowledges. Measured
 * on the shared 2-core test machine with three 1 MiB downloads saving back to back beside a committing journal:
 * commit p50 0.45 ms alone, 4.1-5.4 ms with the downloads' flushes beside it, 0.8-1.7 ms when those wait
 * their turn as below (docs/performance.md, issue 22).
 *
 * Urgent flushes (a journal commit somebody waits on) run at once. Background ones (downloads) run one at a
 * time, each after the urgent ones pending when its turn came, but never deferred longer than
 * MAX_DEFER_MS, so a continuous flood of webhooks slows downloads without stopping them.
 */

/** The longest a background flush waits for urgent ones before it runs anyway. */
export const MAX_DEFER_MS = 50;

export class FlushPriority {
  constructor(private readonly maxDeferMs = MAX_DEFER_MS) {}

  #urgent = 0;
  #idle: (() => void)[] = [];
  #background: Promise<unknown> = Promise.resolve();

  /** Runs `flush` now, marked urgent for the background flushes that wait for it. */
  async urgent<T>(flush: () => Promise<T>): Promise<T> {
    this.#urgent += 1;
    try {
      return await flush();
    } finally {
      this.#urgent -= 1;
      if (this.#urgent === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  /**
   * Runs `flush` once the background flushes queued before it are done and no urgent one is pending (or
   * MAX_DEFER_MS have passed). Must not be called from inside another background flush (it would wait for
   * itself).
   */
  background<T>(flush: () => Promise<T>): Promise<T> {
    const run = this.#background.then(async () => {
      await this.#quiet();
      return flush();
    });
    this.#background = run.catch(() => undefined);
    return run;
  }

  /** Whether an urgent flush is running now. */
  get busy(): boolean {
    return this.#urgent > 0;
  }

  #quiet(): Promise<void> {
    if (this.#urgent === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.maxDeferMs);
      timer.unref?.();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#idle.push(done);
    });
  }
}

/** The process's one flush order: the recordings journal commits through `urgent`, downloads through `background`. */
export const flushes = new FlushPriority();
