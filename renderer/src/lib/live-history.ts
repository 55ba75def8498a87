/**
 * Plain bookkeeping behind the live list: watcher history per channel and channels ended from here.
 * Kept out of the rune store: a poll touches every channel, and reactive proxies over 10,000 entries
 * would cost more than the work itself. The store signals changes with a version counter instead.
 */
import type { ChannelView } from '../../../electron/contract.js';

/**
 * The last `capacity` watcher counts of one channel. The array grows to `capacity`, then becomes a ring
 * (oldest point at `#start`), so appending never copies. Plain arrays: a typed array per channel costs
 * several times more to create, which shows with 10,000 channels on the first poll.
 */
class Series {
  readonly #points: number[] = [];
  #start = 0;
  /** The `record` call that last listed this channel. */
  seen = 0;

  constructor(private readonly capacity: number) {}

  push(value: number): void {
    if (this.#points.length < this.capacity) {
      this.#points.push(value);
    } else {
      this.#points[this.#start] = value;
      this.#start = (this.#start + 1) % this.capacity;
    }
  }

  values(): number[] {
    const points = this.#points;
    return this.#start === 0 ? points.slice() : points.slice(this.#start).concat(points.slice(0, this.#start));
  }
}

const NO_POINTS: readonly number[] = Object.freeze([]);

/**
 * Watcher counts per channel, oldest first, at most `max` points each. `record` is O(channels) with no
 * per-channel allocation once a channel is known; arrays are only built by `get`, which the view calls for
 * the rows it actually renders.
 */
export class WatcherHistory {
  readonly #series = new Map<string, Series>();
  #round = 0;

  constructor(private readonly max: number) {}

  /** Appends each listed channel's count (unknown counts add nothing); channels not listed are forgotten. */
  record(channels: readonly ChannelView[]): void {
    const round = ++this.#round;
    let listed = 0;
    for (const c of channels) {
      let series = this.#series.get(c.id);
      if (series === undefined) {
        series = new Series(this.max);
        this.#series.set(c.id, series);
      }
      if (series.seen !== round) {
        series.seen = round;
        listed += 1;
        if (c.watchers !== null) series.push(c.watchers);
      }
    }
    // Only sweep when something is stale: the usual poll lists the same channels as the last one.
    if (this.#series.size > listed) {
      for (const [id, series] of this.#series) if (series.seen !== round) this.#series.delete(id);
    }
  }

  /** A fresh array of the channel's points, oldest first (empty for an unknown channel). */
  get(id: string): readonly number[] {
    return this.#series.get(id)?.values() ?? NO_POINTS;
  }

  get size(): number {
    return this.#series.size;
  }
}

/**
 * Channels ended from this window. A poll that started before the end may still list the channel; it is
 * hidden for `graceMs` so the row does not flicker back.
 */
export class RecentlyEnded {
  readonly #at = new Map<string, number>();

  constructor(private readonly graceMs: number) {}

  add(id: string, now: number): void {
    this.#at.set(id, now);
  }

  /** The list without channels ended within the grace period (the same array when none are hidden). */
  filter(channels: readonly ChannelView[], now: number): readonly ChannelView[] {
    for (const [id, at] of this.#at) if (now - at > this.graceMs) this.#at.delete(id);
    if (this.#at.size === 0) return channels;
    return channels.filter((c) => !this.#at.has(c.id));
  }
}
