/**
 * Live channels: the list the core pushes on every poll, a short watcher history per channel for the
 * sparklines, and force-ending a channel.
 */
import type { ChannelView, TallyBridge } from '../../../electron/contract.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { codeOf, messageOf } from '../lib/errors.js';
import { RecentlyEnded, WatcherHistory } from '../lib/live-history.js';

/** Points kept per channel: about a minute and a half to ten minutes, depending on the poll interval. */
export const HISTORY_POINTS = 60;
/** How long an ended channel stays hidden even if a poll that started before the end still lists it. */
const ENDED_GRACE_MS = 60_000;
const TICK_MS = 10_000;
/** The core's code (UnknownChannelError) for "the service has no live channel with this ID". */
const UNKNOWN_CHANNEL = 'unknown_channel';

export type LiveStatus = 'loading' | 'ready' | 'error';

export class LiveStore {
  channels = $state.raw<readonly ChannelView[]>([]);
  status = $state<LiveStatus>('loading');
  error = $state<string | null>(null);
  filter = $state('');
  /** Ticks every 10 s so ages stay current between polls. */
  now = $state(0);

  filtered = $derived.by(() => {
    const needle = this.filter.trim().toLowerCase();
    return needle ? this.channels.filter((c) => c.id.toLowerCase().includes(needle)) : this.channels;
  });

  readonly #ended = new RecentlyEnded(ENDED_GRACE_MS);
  readonly #history = new WatcherHistory(HISTORY_POINTS);
  /** Bumped on every change to `#history`, which is plain data: `historyOf` reads it so sparklines follow. */
  #historyVersion = $state(0);

  constructor(
    private readonly bridge: TallyBridge,
    private readonly clock: Clock = systemClock,
  ) {
    this.now = clock.now();
  }

  /** Listens for pushes, loads once, and ticks the clock; returns the stop function. */
  start(): () => void {
    const off = this.bridge.on('channels:live', (list) => this.apply(list));
    const stopTick = this.clock.every(TICK_MS, () => (this.now = this.clock.now()));
    void this.load();
    return () => {
      off();
      stopTick();
    };
  }

  /** Fetches the list now (on mount, on Retry, after a reconnect). */
  async load(): Promise<void> {
    if (this.status === 'error') this.status = 'loading';
    try {
      this.apply(await this.bridge.channels.live());
    } catch (error) {
      this.error = messageOf(error);
      this.status = 'error';
    }
  }

  /** Watcher counts of a channel since this window opened, oldest first (a new array on each call). */
  historyOf(id: string): readonly number[] {
    void this.#historyVersion;
    return this.#history.get(id);
  }

  /**
   * Takes a pushed or fetched list. Linear in channels with small constants (one Map lookup and one ring
   * write each); an unchanged list keeps the previous array so nothing derived from it is recomputed.
   */
  apply(list: readonly ChannelView[]): void {
    const now = this.clock.now();
    const live = this.#ended.filter(list, now);
    this.#history.record(live);
    this.#historyVersion += 1;
    if (!sameChannels(this.channels, live)) this.channels = live;
    this.now = now;
    this.status = 'ready';
    this.error = null;
  }

  /** Whether channel `id` is in the latest list (it leaves when it ends, by us or on its own). */
  isLive(id: string): boolean {
    return this.channels.some((c) => c.id === id);
  }

  /**
   * Ends a channel; either way the row goes away at once. Resolves 'ended' when this call ended it and
   * 'already-ended' when the service no longer had it live: a broadcast may stop on its own while the
   * producer confirms, and the producer's goal (the channel is off air) is met, so that is no error.
   * Throws the service's error otherwise.
   */
  async end(id: string): Promise<'ended' | 'already-ended'> {
    let outcome: 'ended' | 'already-ended' = 'ended';
    try {
      await this.bridge.channels.end(id);
    } catch (error) {
      if (codeOf(error) !== UNKNOWN_CHANNEL) throw error;
      outcome = 'already-ended';
    }
    this.#ended.add(id, this.clock.now());
    this.channels = this.channels.filter((c) => c.id !== id);
    return outcome;
  }
}

function sameChannels(a: readonly ChannelView[], b: readonly ChannelView[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i]!;
    const y = b[i]!;
    if (
      x.id !== y.id ||
      x.watchers !== y.watchers ||
      x.createdAt !== y.createdAt ||
      x.state !== y.state ||
      x.endedAt !== y.endedAt ||
      x.durationSeconds !== y.durationSeconds ||
      x.cumulativeSessions !== y.cumulativeSessions ||
      x.serviceId !== y.serviceId
    ) {
      return false;
    }
  }
  return true;
}
