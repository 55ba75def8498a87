/**
 * Watcher counts of a live broadcast: a smooth, seeded curve over virtual time, so the live list shows
 * audiences that rise and fall like real ones yet are identical on every run with the same seed.
 */
import { hash32 } from './rng.js';

/** Virtual milliseconds between two changes of the watcher count. */
export const WATCHER_STEP_MS = 5000;
/** Bound on the steps replayed to accumulate the session count (beyond it the count stops growing). */
const MAX_REPLAY_STEPS = 100_000;

export class WatcherCurve {
  private readonly base: number;
  private readonly phase: number;
  private lastStep = 0;
  private sessions: number;

  /**
   * @param seed per-broadcast seed
   * @param startedAt virtual time the broadcast started
   */
  constructor(
    private readonly seed: number,
    private readonly startedAt: number,
  ) {
    this.base = 2 + (hash32(seed, 1) % 60);
    this.phase = (hash32(seed, 2) % 628) / 100;
    // The broadcaster's own session, plus whoever watches at step 0.
    this.sessions = 1 + this.valueAt(0);
  }

  /** Watching sessions at virtual time `now`. */
  watchersAt(now: number): number {
    return this.valueAt(this.stepAt(now));
  }

  /** Cumulative sessions up to virtual time `now` (every rise of the curve counts as new joins). */
  sessionsAt(now: number): number {
    const step = this.stepAt(now);
    if (step - this.lastStep > MAX_REPLAY_STEPS) this.lastStep = step - MAX_REPLAY_STEPS;
    for (let s = this.lastStep + 1; s <= step; s++) {
      const rise = this.valueAt(s) - this.valueAt(s - 1);
      // Some viewers leave while others join within one step: a little churn on top of the net rise.
      const churn = hash32(this.seed, s, 3) % 3 === 0 ? 1 : 0;
      this.sessions += Math.max(0, rise) + churn;
    }
    this.lastStep = Math.max(this.lastStep, step);
    return this.sessions;
  }

  private stepAt(now: number): number {
    return Math.max(0, Math.floor((now - this.startedAt) / WATCHER_STEP_MS));
  }

  private valueAt(step: number): number {
    const rampUp = Math.min(1, (step + 1) / 6);
    const wave = 1 + 0.35 * Math.sin(step / 9 + this.phase);
    const noise = ((hash32(this.seed, step) % 1000) / 1000 - 0.5) * 0.3;
    return Math.max(0, Math.round(this.base * rampUp * (wave + noise)));
  }
}
