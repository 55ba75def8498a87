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
  it('applies lifecycle hooks at once, corrects lagging polls for 30 s, and polls 6x slower while hooks flow', async () => {
    const h = harness({ now: () => Date.now() });
    h.poller.start();
    h.poller.setVisible(true);
    h.answer([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(h.poller.currentDelayMs).toBe(1000);

    h.poller.hook({ action: 'create', channelId: 'new-one' });
    expect(h.results.at(-1)?.map((c) => [c.id, c.state, c.watchers])).toEqual([['new-one', 'live', null]]);
    expect(h.poller.hooksFlowing).toBe(true);
    expect(h.poller.currentDelayMs).toBe(6000);

    // The service's list has not caught up yet: the hook's word stands.
    await vi.advanceTimersByTimeAsync(6000);
    h.answer([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(h.results.at(-1)?.map((c) => c.id)).toEqual(['new-one']);

    h.poller.hook({ action: 'close', channelId: 'new-one' });
    expect(h.results.at(-1)).toEqual([]);
    // Past the override window the poll is believed again.
    await vi.advanceTimersByTimeAsync(31_000);
    const live: Channel = {
      id: 'new-one',
      serviceId: 's',
      state: 'live',
      createdAt: new Date(0),
      endedAt: null,
      watchers: 2,
      cumulativeSessions: null,
    };
    h.answer([live]);
    await vi.advanceTimersByTimeAsync(0);
    expect(h.results.at(-1)).toEqual([live]);
    h.poller.stop();
  });
});
