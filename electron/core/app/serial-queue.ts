/**
 * Runs tasks one after another, each after the previous settled: everything that changes what runs goes
 * through one queue, so two settings changes never reconcile at the same time.
 */
export class SerialQueue {
  #tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /** Settles when everything queued so far has. */
  idle(): Promise<void> {
    return this.#tail;
  }
}
