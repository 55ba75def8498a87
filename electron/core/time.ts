/**
 * The core's one time module (issue 30). Two clocks, each for what it can be trusted with:
 *
 * - the monotonic clock (`Clock.now`, `performance.now()`): never steps, so every duration, deadline in
 *   memory, stall window, throttle, retry time and age is measured on it while the process runs;
 * - the wall clock (`Clock.wall`, `Date.now()`): only to show a time and to store one that outlives the
 *   process (a journal's deadline). NTP may step it by hours (a dual-boot PC whose hardware clock kept local
 *   time) and a user may set it back a day.
 *
 * A step of the wall clock is seen by comparing the two (`WallClockSteps`): their difference stays put while
 * both run, so a change of it beyond a tolerance is a step, and whoever stores wall-clock deadlines moves them
 * by it (`shiftIso`). A monotonic moment becomes a time to show with `wallAt`, and a stored wall time becomes a
 * monotonic moment with `monotonicAt` (once, when it is read back; after that it is kept on the monotonic clock).
 *
 * Lint (`tally/wall-clock`, eslint/wall-clock.js) keeps `Date.now()` and `performance.now()` out of the rest of
 * electron/ (the core, the CLI, the main process): timing code takes a `Clock` (default `systemClock`), which tests
 * may replace.
 */
import { uptime } from 'node:os';
import { performance } from 'node:perf_hooks';

/** The two clocks a part of the core reads. */
export interface Clock {
  /** Monotonic milliseconds (any origin): only differences mean something. Never steps. */
  now(): number;
  /** Wall-clock milliseconds since the epoch: to show a time or store one that outlives the process. */
  wall(): number;
}

/** A suspend shorter than this is read noise of the boot clock (10 ms steps), not a suspend. */
const SUSPEND_MIN_MS = 500;

/**
 * A monotonic clock that also counts the time the machine slept. `performance.now()` (CLOCK_MONOTONIC on Linux)
 * stands still while a laptop is suspended, so a recording's deadline would seem hours away after a night's
 * sleep and the sleep would look like a wall-clock step. The boot clock (`os.uptime()`, CLOCK_BOOTTIME: it
 * counts the sleep, never steps, 10 ms resolution) is read at most once per `refreshMs` and the sleep it shows
 * beyond the fine clock is added. Only where the boot clock is known to count the sleep (Linux); elsewhere the
 * fine clock alone. Exported for its spec (a suspend cannot be run in a test).
 */
export function sleepCountingClock(fine: () => number, bootMs: (() => number) | null, refreshMs = 1_000): () => number {
  if (!bootMs) return fine;
  const fine0 = fine();
  const boot0 = bootMs();
  let slept = 0;
  let readAt = fine0;
  return () => {
    const now = fine();
    if (now - readAt >= refreshMs) {
      readAt = now;
      const behind = bootMs() - boot0 - (now - fine0);
      // Only ever grows: the clock never runs back.
      if (behind - slept >= SUSPEND_MIN_MS) slept = behind;
    }
    return now + slept;
  };
}

/**
 * The machine's clocks: `performance.now()` (plus the time slept, on Linux) and `Date.now()`.
 */
export const systemClock: Clock = {
  now: sleepCountingClock(() => performance.now(), process.platform === 'linux' ? () => uptime() * 1000 : null),
  wall: () => Date.now(),
};

/**
 * A clock whose two readings are both `read()` (a test that moves time by hand, or an older `now` option): it
 * never steps, since the difference of its two readings is always zero.
 */
export function manualClock(read: () => number): Clock {
  return { now: read, wall: read };
}

/** Wall-clock milliseconds now: for a time to show or store (never for a duration). */
export function wallNow(clock: Clock = systemClock): number {
  return clock.wall();
}

/** The wall time (ms since the epoch) at which the monotonic moment `t` is, or was, reached: to show it. */
export function wallAt(t: number, clock: Clock = systemClock): number {
  return clock.wall() + (t - clock.now());
}

/** `wallAt` as an ISO string (what the journal and the events carry). */
export function isoAt(t: number, clock: Clock = systemClock): string {
  return new Date(wallAt(t, clock)).toISOString();
}

/**
 * The monotonic moment at which the wall time `wallMs` is reached by the clock's present reading: for a stored
 * deadline read back (after a restart the stored wall time is all there is). Convert once, then keep the result.
 */
export function monotonicAt(wallMs: number, clock: Clock = systemClock): number {
  return clock.now() + (wallMs - clock.wall());
}

/** A stored ISO time moved by `stepMs` (a wall-clock step), so it names the same moment as before the step. */
export function shiftIso(iso: string, stepMs: number): string {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? new Date(ms + stepMs).toISOString() : iso;
}

/**
 * A wall-clock step smaller than this is drift or scheduling noise, not a step. A suspend is not a step: the
 * monotonic clock of `systemClock` counts the sleep (on Linux), so both clocks move by it.
 */
export const STEP_TOLERANCE_MS = 2_000;

/**
 * Notices steps of the wall clock by comparing it with the monotonic clock. `check()` returns the step since
 * the last check (positive: the wall clock jumped forward), or 0; each check starts from the present reading,
 * so a slow NTP slew never adds up to a step.
 */
export class WallClockSteps {
  readonly #clock: Clock;
  readonly #toleranceMs: number;
  #offset: number;

  constructor(clock: Clock = systemClock, toleranceMs = STEP_TOLERANCE_MS) {
    this.#clock = clock;
    this.#toleranceMs = toleranceMs;
    this.#offset = clock.wall() - clock.now();
  }

  /** The wall clock's step since the last check, in ms (0 when it kept pace with the monotonic clock). */
  check(): number {
    const offset = this.#clock.wall() - this.#clock.now();
    const step = offset - this.#offset;
    this.#offset = offset;
    return Math.abs(step) < this.#toleranceMs ? 0 : step;
  }

  /**
   * The monotonic moment of the wall time `wallMs` as the wall clock stood at the last check: a stored wall
   * time written before a step that `check()` has not yet reported still converts to the right moment.
   */
  monotonicAt(wallMs: number): number {
    return wallMs - this.#offset;
  }
}

/** How often `watchWallClock` compares the clocks (default). */
export const STEP_CHECK_MS = 1_000;

/**
 * Calls `onStep(stepMs)` whenever the wall clock steps (checked every `intervalMs` on an unref'd timer, so it
 * keeps no process alive). Returns the function that stops watching, and the watcher itself for a check on
 * demand (before converting a stored time).
 */
export function watchWallClock(
  onStep: (stepMs: number) => void,
  options: { clock?: Clock; intervalMs?: number; toleranceMs?: number } = {},
): { stop: () => void; steps: WallClockSteps; check: () => void } {
  const steps = new WallClockSteps(options.clock, options.toleranceMs);
  const check = () => {
    const step = steps.check();
    if (step !== 0) onStep(step);
  };
  const timer = setInterval(check, options.intervalMs ?? STEP_CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer), steps, check };
}

/** Parses an HTTP `Date` header (the origin's own clock), or null when absent or unreadable. */
export function httpDate(value: string | string[] | undefined | null): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}
