/**
 * One small throttle per key, on the monotonic clock of time.ts: a download's or a mirror's progress is said at
 * most once per `everyMs` each, however often the engine reports it, and a clock step neither floods nor silences
 * it. Its keys are forgotten when their work ends (saved, failed for good, expired), so a long run never piles up
 * the keys of finished work.
 */
import { systemClock, type Clock } from './time.js';

export class KeyedThrottle {
  readonly #everyMs: number;
  readonly #clock: Pick<Clock, 'now'>;
  /** key → the monotonic moment it last went through. */
  readonly #last = new Map<string, number>();

  constructor(everyMs: number, clock: Pick<Clock, 'now'> = systemClock) {
    this.#everyMs = everyMs;
    this.#clock = clock;
  }

  /**
   * Whether `key` may go through now: the first time, and then once `everyMs` has passed since it last did.
   * `force` lets it through whatever the time (the last report of a finished transfer). A key that goes through
   * counts from now.
   */
  pass(key: string, force = false): boolean {
    const now = this.#clock.now();
    const last = this.#last.get(key);
    if (!force && last !== undefined && now - last < this.#everyMs) return false;
    this.#last.set(key, now);
    return true;
  }

  /** `key`'s work ended: forgotten, so its next report (if it starts again) goes through at once. */
  forget(key: string): void {
    this.#last.delete(key);
  }

  /** How many keys are remembered (work under way). */
  get size(): number {
    return this.#last.size;
  }
}
