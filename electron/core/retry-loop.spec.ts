import { describe, expect, it, vi } from 'vitest';
import { retrying, retryDelay } from './backoff.js';
import { RetryLoop } from './retry-loop.js';
import { systemClock } from './time.js';

const POLICY = { baseMs: 1_000, maxMs: 8_000 };

/** Timers that keep the process alive (an unref'd one is not listed). */
const refTimers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

/** A clock that stands still unless moved: the deadline arithmetic is then exact. */
function handClock(start = 50_000) {
  let now = start;
  return { now: () => now, move: (ms: number) => (now += ms) };
}

describe('retryDelay', () => {
  it("waits the policy's wait, but never past the deadline, and gives up once it has passed", () => {
    expect(retryDelay(3, POLICY, { now: 0 })).toBe(4_000);
    expect(retryDelay(3, POLICY, { now: 0, deadline: 2_500 })).toBe(2_500);
    expect(retryDelay(3, POLICY, { now: 10_000, deadline: 12_500 })).toBe(2_500);
    expect(retryDelay(1, POLICY, { now: 10_000, deadline: 20_000 })).toBe(1_000);
    expect(retryDelay(1, POLICY, { now: 5_000, deadline: 5_000 })).toBeNull();
    expect(retryDelay(1, { baseMs: 0, maxMs: 0 }, { now: 0, minMs: 1 })).toBe(1);
  });
});

describe('retrying with a deadline', () => {
  it('waits no longer than the deadline allows, and throws the last failure once it has passed', async () => {
    const clock = handClock(0);
    const waits: number[] = [];
    let attempts = 0;
    const outcome = retrying(
      async () => {
        attempts++;
        // Each attempt takes 300 ms of the hand clock.
        clock.move(300);
        throw new Error(`attempt ${attempts} failed`);
      },
      {
        policy: { baseMs: 200, maxMs: 10_000 },
        retries: Infinity,
        shouldRetry: () => true,
        onRetry: (_error, _n, delayMs) => {
          waits.push(delayMs);
          clock.move(delayMs);
        },
        deadline: 1_000,
        now: clock.now,
      },
    );
    await expect(outcome).rejects.toThrow('attempt 3 failed');
    // Fails at 300, waits 200; fails at 800, and the 400 ms wait is cut to the 200 left: the third attempt is
    // made at the deadline itself; it fails past it, and no wait follows.
    expect(waits).toEqual([200, 200]);
    expect(attempts).toBe(3);
  });
});

describe('RetryLoop', () => {
  it('waits longer after each failure, counts a replaced pending attempt once, and starts again after a reset', () => {
    const loop = new RetryLoop({ policy: POLICY, clock: handClock() });
    const run = () => undefined;
    expect(loop.retry(run)).toMatchObject({ attempt: 1, delayMs: 1_000 });
    loop.cancel();
    expect(loop.retry(run)).toMatchObject({ attempt: 2, delayMs: 2_000 });
    // A second failure while the attempt still waits: it never ran, so it did not fail.
    expect(loop.retry(run)).toMatchObject({ attempt: 2, delayMs: 2_000 });
    loop.cancel();
    expect(loop.retry(run)?.delayMs).toBe(4_000);
    loop.cancel();
    expect(loop.retry(run)?.delayMs).toBe(8_000);
    loop.cancel();
    expect(loop.retry(run)?.delayMs).toBe(8_000);
    loop.reset();
    expect(loop.pending).toBe(false);
    expect(loop.retry(run)).toMatchObject({ attempt: 1, delayMs: 1_000 });
    loop.reset();
  });

  it('runs the attempt once when its time comes, on a timer that keeps no process alive', async () => {
    const loop = new RetryLoop({ policy: { baseMs: 5, maxMs: 5 }, clock: systemClock });
    const before = refTimers();
    const ran = new Promise<number>((resolve) => loop.retry(() => resolve(loop.attempt)));
    expect(loop.pending).toBe(true);
    expect(refTimers()).toBe(before);
    expect(await ran).toBe(1);
    expect(loop.pending).toBe(false);
  });

  it('never sleeps past the deadline: the last attempt is at the deadline itself, none after it', () => {
    const clock = handClock();
    const loop = new RetryLoop({ policy: POLICY, clock });
    const deadline = clock.now() + 2_500;
    expect(loop.retry(() => undefined, { deadline })).toMatchObject({ delayMs: 1_000 });
    loop.cancel();
    clock.move(1_000);
    // The next wait (2 s) would end after the deadline: the attempt comes at the deadline.
    expect(loop.retry(() => undefined, { deadline })).toMatchObject({ delayMs: 1_500, at: deadline });
    loop.cancel();
    clock.move(1_500);
    expect(loop.retry(() => undefined, { deadline })).toBeNull();
    expect(loop.pending).toBe(false);
    // The failure that found the deadline passed is not counted as one more wait.
    expect(loop.attempt).toBe(2);
  });

  it('drops the pending attempt when its signal aborts, and schedules nothing after', () => {
    vi.useFakeTimers();
    const stop = new AbortController();
    const loop = new RetryLoop({ policy: { baseMs: 5, maxMs: 5 }, signal: stop.signal, clock: systemClock });
    let runs = 0;
    loop.retry(() => runs++);
    stop.abort();
    expect(loop.pending).toBe(false);
    expect(loop.retry(() => runs++)).toBeNull();
    loop.again(() => runs++);
    expect(loop.pending).toBe(false);
    vi.runAllTimers();
    vi.useRealTimers();
    expect(runs).toBe(0);
  });

  it('listens to its signal only while an attempt waits (one signal stops many loops over a long life)', () => {
    const stop = new AbortController();
    let listeners = 0;
    const signal = stop.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners++;
      add(...args);
    }) as AbortSignal['addEventListener'];
    signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => {
      listeners--;
      remove(...args);
    }) as AbortSignal['removeEventListener'];
    for (let i = 0; i < 50; i++) {
      const loop = new RetryLoop({ policy: POLICY, signal, clock: systemClock });
      loop.retry(() => undefined);
      loop.reset();
    }
    expect(listeners).toBeLessThanOrEqual(0);
  });

  it('again() runs on the next turn without counting a failure', async () => {
    const loop = new RetryLoop({ policy: POLICY, clock: systemClock });
    loop.retry(() => undefined);
    const ran = new Promise<void>((resolve) => loop.again(resolve));
    await ran;
    expect(loop.attempt).toBe(1);
    expect(loop.retry(() => undefined)?.delayMs).toBe(2_000);
    loop.reset();
  });

  it('wait() resolves when the attempt is due, and false when none follows (stopped, or past the deadline)', async () => {
    const stop = new AbortController();
    const loop = new RetryLoop({ policy: { baseMs: 5, maxMs: 5 }, signal: stop.signal, clock: systemClock });
    expect(await loop.wait()).toBe(true);
    expect(loop.attempt).toBe(1);
    expect(await loop.wait({ deadline: systemClock.now() - 1 })).toBe(false);
    const waiting = loop.wait();
    loop.cancel();
    expect(await waiting).toBe(false);
    const stopped = loop.wait();
    stop.abort();
    expect(await stopped).toBe(false);
    expect(await loop.wait()).toBe(false);
  });

  it('recover() runs the waiting attempt now and forgets the failures of the outage', async () => {
    const loop = new RetryLoop({ policy: { baseMs: 60_000, maxMs: 60_000 }, clock: systemClock });
    const waited = systemClock.now();
    const due = loop.wait();
    loop.recover();
    expect(await due).toBe(true);
    // Not the minute's wait: the attempt went on the next turn.
    expect(systemClock.now() - waited).toBeLessThan(30_000);
    expect(loop.attempt).toBe(0);
    const ran = new Promise<void>((resolve) => loop.retry(resolve));
    expect(loop.attempt).toBe(1);
    loop.recover();
    await ran;
    expect(loop.attempt).toBe(0);
    // Nothing waiting: nothing runs.
    loop.recover();
    expect(loop.pending).toBe(false);
  });
});
