import { describe, expect, it } from 'vitest';
import { channel } from '../../testing/bridge.js';
import { RecentlyEnded, WatcherHistory } from './live-history.js';

describe('WatcherHistory', () => {
  it('keeps the last points of each channel, oldest first, skipping unknown counts', () => {
    const history = new WatcherHistory(3);
    for (const watchers of [1, 2, null, 3, 4, 5]) history.record([channel({ id: 'a', watchers })]);
    expect(history.get('a')).toEqual([3, 4, 5]);
    expect(history.get('nobody')).toEqual([]);

    // Each call hands out a copy: later polls do not change what a sparkline already holds.
    const before = history.get('a');
    history.record([channel({ id: 'a', watchers: 6 })]);
    expect(before).toEqual([3, 4, 5]);
    expect(history.get('a')).toEqual([4, 5, 6]);
  });

  it('forgets channels no longer listed and starts afresh if they come back', () => {
    const history = new WatcherHistory(5);
    history.record([channel({ id: 'a', watchers: 1 }), channel({ id: 'b', watchers: 2 })]);
    history.record([channel({ id: 'b', watchers: 3 }), channel({ id: 'b', watchers: 99 })]);
    expect(history.size).toBe(1);
    expect(history.get('a')).toEqual([]);
    // A duplicate ID in one list counts once.
    expect(history.get('b')).toEqual([2, 3]);

    history.record([channel({ id: 'a', watchers: 7 })]);
    expect(history.get('a')).toEqual([7]);
    expect(history.size).toBe(1);
  });

  it('caps every channel at the maximum over many 10,000-channel polls', () => {
    const history = new WatcherHistory(60);
    const list = Array.from({ length: 10_000 }, (_, i) => channel({ id: `c${i}`, watchers: i }));
    for (let poll = 0; poll < 100; poll += 1) history.record(list);
    expect(history.size).toBe(10_000);
    expect(history.get('c42')).toHaveLength(60);
  });
});

describe('RecentlyEnded', () => {
  it('hides an ended channel for the grace period, and returns the same list when nothing is hidden', () => {
    const ended = new RecentlyEnded(1000);
    const list = [channel({ id: 'a' }), channel({ id: 'b' })];
    expect(ended.filter(list, 0)).toBe(list);

    ended.add('a', 0);
    expect(ended.filter(list, 1000).map((c) => c.id)).toEqual(['b']);
    expect(ended.filter(list, 1001)).toBe(list);
  });
});
