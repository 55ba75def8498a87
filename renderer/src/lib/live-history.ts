/**
 * Plain bookkeeping behind the live list: watcher history per channel and channels ended from here.
 * Kept out of the rune store because these are replaced wholesale, never mutated in place.
 */
import type { ChannelView } from '../../../electron/contract.js';

export type WatcherHistory = ReadonlyMap<string, readonly number[]>;

export const EMPTY_HISTORY: WatcherHistory = new Map();

/** Appends each channel's watcher count (capped at `max` points); channels no longer live are dropped. */
export function nextHistory(previous: WatcherHistory, channels: readonly ChannelView[], max: number): WatcherHistory {
  const next = new Map<string, readonly number[]>();
  for (const c of channels) {
    const points = previous.get(c.id) ?? [];
    next.set(c.id, c.watchers === null ? points : [...points, c.watchers].slice(-max));
  }
  return next;
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

  /** The list without channels ended within the grace period. */
  filter(channels: readonly ChannelView[], now: number): ChannelView[] {
    for (const [id, at] of this.#at) if (now - at > this.graceMs) this.#at.delete(id);
    return channels.filter((c) => !this.#at.has(c.id));
  }
}
