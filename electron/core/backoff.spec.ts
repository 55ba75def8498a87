import { describe, expect, it } from 'vitest';
import { backoffDelay, retrying } from './backoff.js';

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

describe('retrying', () => {
  const policy = { baseMs: 1, maxMs: 4 };

  it('tries again after each failure worth it, waiting the backoff, until one succeeds', async () => {
    const waits: number[] = [];
    const result = await retrying(
      async (n) => {
        if (n < 3) throw new Error(`transient ${n}`);
        return `ok on ${n}`;
      },
      { policy, retries: 5, shouldRetry: () => true, onRetry: (_e, _n, ms) => waits.push(ms) },
    );
    expect(result).toBe('ok on 3');
    expect(waits).toEqual([1, 2]);
  });

  it('throws a failure not worth retrying at once, and the last one when the retries run out', async () => {
    let calls = 0;
    const refused = new Error('refused');
    await expect(
      retrying(
        async () => {
          calls += 1;
          throw refused;
        },
        { policy, retries: 5, shouldRetry: (e) => e !== refused },
      ),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);
    await expect(
      retrying(
        async (n) => {
          throw new Error(`attempt ${n}`);
        },
        { policy, retries: 2, shouldRetry: () => true },
      ),
    ).rejects.toThrow('attempt 3');
  });

  it('stops waiting when aborted and says so its own way', async () => {
    const controller = new AbortController();
    const stopped = new Error('stopped by the user');
    const run = retrying(
      async () => {
        throw new Error('down');
      },
      {
        policy: { baseMs: 60_000, maxMs: 60_000 },
        retries: Infinity,
        shouldRetry: () => true,
        onRetry: () => controller.abort(),
        signal: controller.signal,
        aborted: () => stopped,
      },
    );
    await expect(run).rejects.toBe(stopped);
  });
});
