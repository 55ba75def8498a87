/**
 * The live poller's schedule, on vitest's fake clock (time is advanced, never waited for): visible views
 * poll at the interval, a tray alone polls slower, nobody polls not at all, and a refresh that arrives
 * during a poll is followed by a fresh one.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Channel } from '../model.js';
import { LivePoller, type LivePollerOptions } from './live-poller.js';

interface Harness {
  poller: LivePoller;
  calls: AbortSignal[];
  results: Channel[][];
  errors: unknown[];
  tray: { wants: boolean };
  answer: (value: Channel[] | Error) => void;
}

/** A poller whose every fetch waits until the test answers it. */
function harness(extra: Partial<LivePollerOptions> = {}): Harness {
  const calls: AbortSignal[] = [];
  const results: Channel[][] = [];
  const errors: unknown[] = [];
  const tray = { wants: false };
  const pending: Array<(value: Channel[] | Error) => void> = [];
  const poller = new LivePoller({
    intervalMs: 1000,
    backgroundFactor: 4,
    wantsBackground: () => tray.wants,
    canPoll: () => true,
    fetch: (signal) => {
      calls.push(signal);
      return new Promise<Channel[]>((resolve, reject) =>
        pending.push((value) => (value instanceof Error ? reject(value) : resolve(value))),
      );
    },
    onResult: (channels) => results.push(channels),
    onError: (error) => errors.push(error),
    ...extra,
  });
  const answer = (value: Channel[] | Error) => pending.shift()?.(value);
  return { poller, calls, results, errors, tray, answer };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LivePoller', () => {
  it('polls at once when a view shows, then every interval while it stays visible', async () => {
    const h = harness();
    h.poller.start();
    expect(h.calls).toHaveLength(0);
    expect(h.poller.currentDelayMs).toBeNull();
    h.poller.setVisible(true);
    expect(h.calls).toHaveLength(1);
    h.answer([]);
    await vi.advanceTimersByTimeAsync(999);
    expect(h.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.calls).toHaveLength(2);
    h.answer(new Error('offline'));
    await vi.advanceTimersByTimeAsync(0);
    expect(h.results).toEqual([[]]);
    expect(h.errors).toEqual([new Error('offline')]);
    // A failed poll does not stop the schedule.
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.calls).toHaveLength(3);
    h.poller.stop();
  });

  it('polls slower for a tray alone, and not at all when nothing needs the list', async () => {
    const h = harness();
    h.tray.wants = true;
    h.poller.start();
    expect(h.poller.currentDelayMs).toBe(4000);
    h.answer([]);
    await vi.advanceTimersByTimeAsync(3999);
    expect(h.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.calls).toHaveLength(2);
    h.tray.wants = false;
    h.answer([]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.calls).toHaveLength(2);
    expect(h.poller.currentDelayMs).toBeNull();
    h.poller.stop();
  });

  it('follows a refresh asked for during a poll with a new poll, and drops an abandoned answer', async () => {
    const h = harness();
    h.poller.start();
    h.poller.setVisible(true);
    const refreshed = h.poller.refresh();
    expect(h.calls).toHaveLength(1);
    h.answer([]);
    await vi.advanceTimersByTimeAsync(0);
    // The first answer may predate the change that asked for the refresh: a second poll follows.
    expect(h.calls).toHaveLength(2);
    h.answer([]);
    await refreshed;
    expect(h.results).toHaveLength(2);

    await vi.advanceTimersByTimeAsync(1000);
    expect(h.calls).toHaveLength(3);
    h.poller.stop();
    expect(h.calls[2]?.aborted).toBe(true);
    h.answer([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(h.results).toHaveLength(2);
  });

  it('waits for credentials before polling, and picks them up on reschedule', async () => {
    let can = false;
    const h = harness({ canPoll: () => can });
    h.poller.start();
    h.poller.setVisible(true);
    expect(h.calls).toHaveLength(0);
    can = true;
    h.poller.reschedule();
    expect(h.calls).toHaveLength(1);
    h.poller.stop();
  });
});
