import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  it('doubles per attempt up to the cap, with the jitter share scaled by random()', () => {
    const policy = { baseMs: 100, maxMs: 1000, jitter: 0.5 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, policy, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect([1, 2, 3].map((n) => backoffDelay(n, policy, () => 0))).toEqual([50, 100, 200]);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(300);
    expect(backoffDelay(3, { ...policy, jitter: 0 }, () => 0)).toBe(400);
  });

  it('spreads full jitter over [0, wait] and never exceeds the cap, however many attempts', () => {
    const policy = { baseMs: 300, maxMs: 10_000, jitter: 1 };
    expect(backoffDelay(1, policy, () => 0)).toBe(0);
    expect(backoffDelay(2, policy, () => 0.5)).toBe(300);
    expect(backoffDelay(5_000, policy, () => 0.999)).toBeLessThanOrEqual(10_000);
    expect(backoffDelay(5_000, { baseMs: 1, maxMs: 60_000 })).toBe(60_000);
  });

  it('treats a jitter or random() outside 0..1 as its nearest bound', () => {
    expect(backoffDelay(1, { baseMs: 100, maxMs: 100, jitter: 7 }, () => 2)).toBe(100);
    expect(backoffDelay(1, { baseMs: 100, maxMs: 100, jitter: -1 }, () => 0)).toBe(100);
    expect(backoffDelay(1, { baseMs: 100, maxMs: 100, jitter: 1 }, () => Number.NaN)).toBe(0);
  });
});

describe('Backoff', () => {
  it('counts failures, and starts again from the first wait after a reset', () => {
    const backoff = new Backoff({ baseMs: 10, maxMs: 50 });
    expect([backoff.next(), backoff.next(), backoff.next(), backoff.next()]).toEqual([10, 20, 40, 50]);
    expect(backoff.attempt).toBe(4);
    backoff.reset();
    expect(backoff.next()).toBe(10);
  });
});
