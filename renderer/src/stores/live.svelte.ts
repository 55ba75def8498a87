/**
 * Live channels: the list the core pushes on every poll, a short watcher history per channel for the
 * sparklines, and force-ending a channel.
 */
import type { ChannelView, TallyBridge } from '../../../electron/contract.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { messageOf } from '../lib/errors.js';
import { EMPTY_HISTORY, RecentlyEnded, nextHistory, type WatcherHistory } from '../lib/live-history.js';

/** Points kept per channel: about a minute and a half to ten minutes, depending on the poll interval. */
export const HISTORY_POINTS = 60;
/** How long an ended channel stays hidden even if a poll that started before the end still lists it. */
const ENDED_GRACE_MS = 60_000;
const TICK_MS = 10_000;

export type LiveStatus = 'loading' | 'ready' | 'error';

export class LiveStore {
  channels = $state.raw<ChannelView[]>([]);
  history = $state.raw<WatcherHistory>(EMPTY_HISTORY);
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

  apply(list: readonly ChannelView[]): void {
    const now = this.clock.now();
    const live = this.#ended.filter(list, now);
    this.history = nextHistory(this.history, live, HISTORY_POINTS);
    this.channels = live;
    this.now = now;
    this.status = 'ready';
    this.error = null;
  }

  /** Ends a channel; on success the row goes away at once. Throws the service's error otherwise. */
  async end(id: string): Promise<void> {
    await this.bridge.channels.end(id);
    this.#ended.add(id, this.clock.now());
    this.channels = this.channels.filter((c) => c.id !== id);
  }
}
