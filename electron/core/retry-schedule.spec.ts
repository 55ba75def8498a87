import { afterEach, describe, expect, it, vi } from 'vitest';
import { RetrySchedule } from './retry-schedule.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('RetrySchedule', () => {
  it('keeps one timer for 10,000 waiting jobs and fires them in due order', () => {
    vi.useFakeTimers({ now: 0 });
    const fired: string[] = [];
    const schedule = new RetrySchedule((key) => fired.push(key), { now: () => Date.now() });
    // Shuffled due times: job i is due at (i * 7919) % 10_000 + 1 ms.
    for (let i = 0; i < 10_000; i += 1) schedule.add(`job${i}`, ((i * 7919) % 10_000) + 1);
    expect(vi.getTimerCount()).toBe(1);
    expect(schedule.armedFor).toBe(1);
    expect(schedule.size).toBe(10_000);
    vi.advanceTimersByTime(10_000);
    expect(fired).toHaveLength(10_000);
    expect(schedule.armedFor).toBeNull();
    const due = fired.map((key) => ((Number(key.slice(3)) * 7919) % 10_000) + 1);
    expect(due).toEqual([...due].sort((a, b) => a - b));
    expect(vi.getTimerCount()).toBe(0);
  });

  it('cancels, keeps a waiting job at its first time, and re-arms for the next one', () => {
    vi.useFakeTimers({ now: 1_000 });
    const fired: string[] = [];
    const schedule = new RetrySchedule((key) => fired.push(key), { now: () => Date.now() });
    schedule.add('a', 1_100);
    schedule.add('b', 1_200);
    schedule.add('a', 1_050); // already waiting: keeps 1_100
    schedule.cancel('b');
    schedule.add('c', 1_300);
    vi.advanceTimersByTime(150);
    expect(fired).toEqual(['a']);
    expect(schedule.has('b')).toBe(false);
    vi.advanceTimersByTime(150);
    expect(fired).toEqual(['a', 'c']);
    schedule.add('d', 5_000);
    schedule.clear();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fires on time even when the clock it was given stands still (a test clock)', async () => {
    // The schedule's timer is unref'd: a ref'd one keeps this test's event loop alive until it fires.
    const hold = setInterval(() => undefined, 1_000);
    const fired = await new Promise<string>((resolve) => new RetrySchedule(resolve, { now: () => 0 }).add('x', 5));
    clearInterval(hold);
    expect(fired).toBe('x');
  });
});
