import { describe, expect, it } from 'vitest';
import { WATCHER_STEP_MS, WatcherCurve } from './watchers.js';

const series = (curve: WatcherCurve, steps: number) =>
  Array.from({ length: steps }, (_, i) => curve.watchersAt(1000 + i * WATCHER_STEP_MS));

describe('watcher curve', () => {
  it('is a pure function of the seed and the elapsed virtual time', () => {
    expect(series(new WatcherCurve(5, 1000), 50)).toEqual(series(new WatcherCurve(5, 1000), 50));
    expect(series(new WatcherCurve(5, 1000), 50)).not.toEqual(series(new WatcherCurve(6, 1000), 50));
    // Starting later shifts the curve, it does not change it.
    expect(new WatcherCurve(5, 0).watchersAt(3 * WATCHER_STEP_MS)).toBe(
      new WatcherCurve(5, 7000).watchersAt(7000 + 3 * WATCHER_STEP_MS),
    );
  });

  it('rises and falls, never below zero, changing only at step boundaries', () => {
    const values = series(new WatcherCurve(11, 1000), 200);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(new Set(values).size).toBeGreaterThan(5);
    const curve = new WatcherCurve(11, 0);
    expect(curve.watchersAt(WATCHER_STEP_MS)).toBe(curve.watchersAt(2 * WATCHER_STEP_MS - 1));
  });

  it('counts cumulative sessions that never decrease and cover every rise', () => {
    const curve = new WatcherCurve(3, 0);
    let last = curve.sessionsAt(0);
    expect(last).toBe(1 + curve.watchersAt(0));
    let peak = curve.watchersAt(0);
    for (let step = 1; step < 300; step++) {
      const now = step * WATCHER_STEP_MS;
      const sessions = curve.sessionsAt(now);
      expect(sessions).toBeGreaterThanOrEqual(last);
      peak = Math.max(peak, curve.watchersAt(now));
      expect(sessions).toBeGreaterThan(peak);
      last = sessions;
    }
    // Asking about the past does not recount.
    expect(curve.sessionsAt(0)).toBe(last);
  });
});
