/**
 * How many recordings a member mirrors at once. One at a time, a member spent half of each small recording
 * waiting (three fsyncs and a few round trips to the team server per clip: about 50 clips/s), so a receiver
 * saving a burst of clips built a backlog the member worked off seconds later (issue 22: p95 2.3-3.8 s after the
 * save). Small recordings now go a few at a time; a large one goes alone, once those in flight are done, so its
 * memory and speed are what they were (the member's < 100 MB peak for 1 GiB). The same recording is never
 * mirrored twice at once: a second announcement of it waits for the first to settle (its ledger then answers).
 */

/** At or above this size a recording is mirrored alone (the publisher's own line for a large put). */
export const LARGE_MIRROR_BYTES = 64 * 1024 * 1024;
/** Small recordings mirrored at once. */
export const MIRRORS_AT_ONCE = 3;

export interface SlotItem {
  /** The recording's identity: two of the same never run at once. */
  key: string;
  bytes: number;
}

export class MirrorSlots<T> {
  readonly #limit: number;
  readonly #run: (item: T) => Promise<void>;
  readonly #describe: (item: T) => SlotItem;
  readonly #onError: (error: unknown) => void;
  readonly #inFlight = new Map<string, Promise<void>>();

  /**
   * `run` settles one item (its errors go to `onError`, so one failure does not stop the others); `describe`
   * names its recording and size. A `limit` of 1 mirrors one at a time (a member capped by `--max-rate`, whose
   * cap is per transfer, keeps its bandwidth that way).
   */
  constructor(
    limit: number,
    run: (item: T) => Promise<void>,
    describe: (item: T) => SlotItem,
    onError: (error: unknown) => void,
  ) {
    this.#limit = Math.max(1, limit);
    this.#run = run;
    this.#describe = describe;
    this.#onError = onError;
  }

  /**
   * Resolves once `item` has started (a large one: once it is done), so the caller reads the next one then: one
   * take at a time, so nothing else starts while this one waits.
   */
  async take(item: T): Promise<void> {
    const { key, bytes } = this.#describe(item);
    const large = bytes >= LARGE_MIRROR_BYTES;
    await this.#inFlight.get(key);
    if (large) await this.drain();
    while (this.#inFlight.size >= this.#limit) await Promise.race(this.#inFlight.values());
    const running = this.#run(item)
      .catch((error: unknown) => this.#onError(error))
      .finally(() => {
        if (this.#inFlight.get(key) === running) this.#inFlight.delete(key);
      });
    this.#inFlight.set(key, running);
    if (large) await running;
  }

  /** Resolves once every item taken so far is settled. */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight.values());
  }
}
