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

/** `Atomics.waitAsync` (Node 16+; ES2024, past the project's TypeScript lib). */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(
      array: Int32Array,
      index: number,
      value: number,
      timeoutMs: number,
    ): { async: false; value: string } | { async: true; value: Promise<string> };
  }
).waitAsync;

export class FlushPriority {
  /**
   * Urgent flushes running now, in memory another thread can read: the download engine's worker thread builds
   * its own order on the main thread's count (`new FlushPriority(MAX_DEFER_MS, flushes.urgentCount)`), so its
   * flushes wait behind the journal's commits without a message to the main thread and back for each.
   */
  readonly urgentCount: Int32Array;
  private readonly maxDeferMs: number;

  constructor(maxDeferMs = MAX_DEFER_MS, urgentCount: Int32Array = new Int32Array(new SharedArrayBuffer(4))) {
    this.maxDeferMs = maxDeferMs;
    this.urgentCount = urgentCount;
  }

  #idle: (() => void)[] = [];
  #background: Promise<unknown> = Promise.resolve();

  /** Runs `flush` now, marked urgent for the background flushes that wait for it (in any thread). */
  async urgent<T>(flush: () => Promise<T>): Promise<T> {
    Atomics.add(this.urgentCount, 0, 1);
    try {
      return await flush();
    } finally {
      if (Atomics.sub(this.urgentCount, 0, 1) === 1) {
        Atomics.notify(this.urgentCount, 0);
        for (const wake of this.#idle.splice(0)) wake();
      }
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
    return Atomics.load(this.urgentCount, 0) > 0;
  }

  #quiet(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.maxDeferMs);
      timer.unref?.();
      let over = false;
      const idle = this.#idle;
      function done(): void {
        if (over) return;
        over = true;
        clearTimeout(timer);
        const at = idle.indexOf(done);
        if (at >= 0) idle.splice(at, 1);
        resolve();
      }
      idle.push(done);
      // The count may belong to another thread, whose end of an urgent flush wakes this one through memory.
      void this.#sharedQuiet(() => over).then(done);
    });
  }

  /** Resolves once no urgent flush runs (as the shared count says), or once `stop()` says the wait is over. */
  async #sharedQuiet(stop: () => boolean): Promise<void> {
    for (;;) {
      const pending = Atomics.load(this.urgentCount, 0);
      if (pending === 0 || stop()) return;
      const waited = waitAsync(this.urgentCount, 0, pending, this.maxDeferMs);
      if (waited.async) await waited.value;
    }
  }
}

/** The process's one flush order: the recordings journal commits through `urgent`, downloads through `background`. */
export const flushes = new FlushPriority();
