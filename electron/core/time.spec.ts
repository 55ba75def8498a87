/**
 * The time module: a step of the wall clock is seen by comparing it with the monotonic clock, and conversions
 * between the two keep naming the same moment.
 */
import { describe, expect, it } from 'vitest';
import {
  WallClockSteps,
  httpDate,
  isoAt,
  manualClock,
  monotonicAt,
  shiftIso,
  sleepCountingClock,
  wallAt,
  type Clock,
} from './time.js';

/** Two hand-moved clocks: `run` advances both, `step` only the wall clock. */
function twoClocks(): Clock & { run: (ms: number) => void; step: (ms: number) => void } {
  let mono = 1_000;
  let wall = Date.UTC(2026, 0, 2, 3, 0, 0);
  return {
    now: () => mono,
    wall: () => wall,
    run: (ms) => {
      mono += ms;
      wall += ms;
    },
    step: (ms) => {
      wall += ms;
    },
  };
}

describe('time', () => {
  it('sees a step of the wall clock, forward or back, and nothing while both clocks run together', () => {
    const clock = twoClocks();
    const steps = new WallClockSteps(clock);
    clock.run(60_000);
    expect(steps.check()).toBe(0);
    clock.step(7 * 3600_000);
    expect(steps.check()).toBe(7 * 3600_000);
    expect(steps.check()).toBe(0);
    clock.step(-86_400_000);
    clock.run(5_000);
    expect(steps.check()).toBe(-86_400_000);
  });

  it('ignores drift under the tolerance, check after check', () => {
    const clock = twoClocks();
    const steps = new WallClockSteps(clock, 2_000);
    for (let i = 0; i < 10; i++) {
      clock.run(1_000);
      clock.step(500);
      expect(steps.check()).toBe(0);
    }
  });

  it('converts a stored wall time with the frame of the last check, so a step not yet seen changes nothing', () => {
    const clock = twoClocks();
    const steps = new WallClockSteps(clock);
    const deadline = clock.wall() + 6 * 3600_000;
    const before = steps.monotonicAt(deadline);
    clock.step(7 * 3600_000);
    expect(steps.monotonicAt(deadline)).toBe(before);
    // After the step is reported, the stored time moved by it names the same monotonic moment.
    const step = steps.check();
    expect(steps.monotonicAt(Date.parse(shiftIso(new Date(deadline).toISOString(), step)))).toBe(before);
  });

  it('shows a monotonic moment as wall time and reads a wall time back', () => {
    const clock = twoClocks();
    const t = clock.now() + 90_000;
    expect(wallAt(t, clock)).toBe(clock.wall() + 90_000);
    expect(isoAt(t, clock)).toBe(new Date(clock.wall() + 90_000).toISOString());
    expect(monotonicAt(clock.wall() - 5_000, clock)).toBe(clock.now() - 5_000);
    const manual = manualClock(() => 42);
    expect([manual.now(), manual.wall()]).toEqual([42, 42]);
  });

  it('reads an HTTP Date header, and nothing from a missing or bad one', () => {
    expect(httpDate('Sat, 28 Nov 2026 03:03:00 GMT')).toBe(Date.UTC(2026, 10, 28, 3, 3, 0));
    expect(httpDate(undefined)).toBeNull();
    expect(httpDate('soon')).toBeNull();
  });
});

describe('sleepCountingClock', () => {
  it('adds the time the machine slept (the boot clock ran on, the fine clock stood still), and never runs back', () => {
    let fine = 0;
    let boot = 50_000;
    const now = sleepCountingClock(
      () => fine,
      () => boot,
    );
    fine += 1_000;
    boot += 1_000;
    expect(now()).toBe(1_000);
    // Eight hours asleep: the fine clock did not move.
    boot += 8 * 3600_000;
    fine += 1_000;
    boot += 1_000;
    expect(now()).toBe(2_000 + 8 * 3600_000);
    // The boot clock's 10 ms steps are noise, not sleep; and nothing makes it run back.
    fine += 1_000;
    boot += 990;
    expect(now()).toBe(3_000 + 8 * 3600_000);
  });

  it('is the fine clock alone where the boot clock is not known to count sleep', () => {
    let fine = 5;
    const now = sleepCountingClock(() => fine, null);
    fine = 7;
    expect(now()).toBe(7);
  });
});
