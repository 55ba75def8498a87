import { describe, expect, it } from 'vitest';
import { KeyedThrottle } from './throttle.js';

/** A clock that stands still unless moved. */
function handClock() {
  let now = 1_000;
  return { now: () => now, move: (ms: number) => (now += ms) };
}

describe('KeyedThrottle', () => {
  it('lets each key through once per period, a forced one at once, and counts from the last that went', () => {
    const clock = handClock();
    const throttle = new KeyedThrottle(500, clock);
    expect(throttle.pass('a')).toBe(true);
    expect(throttle.pass('b')).toBe(true);
    clock.move(499);
    expect(throttle.pass('a')).toBe(false);
    expect(throttle.pass('a', true)).toBe(true);
    clock.move(499);
    expect(throttle.pass('a')).toBe(false);
    expect(throttle.pass('b')).toBe(true);
    clock.move(1);
    expect(throttle.pass('a')).toBe(true);
  });

  it('forgets a key whose work ended, so finished work leaves nothing behind', () => {
    const clock = handClock();
    const throttle = new KeyedThrottle(500, clock);
    for (let i = 0; i < 100; i++) throttle.pass(`job ${i}`);
    for (let i = 0; i < 100; i++) throttle.forget(`job ${i}`);
    expect(throttle.size).toBe(0);
    expect(throttle.pass('job 1')).toBe(true);
  });
});
