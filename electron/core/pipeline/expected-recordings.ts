/**
 * The live twin of the gap report: when the lifecycle hook says a channel closed and no recording webhook for it
 * follows within a grace period while server recording is on, the recording is flagged as expected but not
 * received, while there is still time to look for it in the service console (it is deleted 6 hours later).
 */
import { systemClock } from '../time.js';

export interface MissingRecording {
  channelId: string;
  /** ISO time the close call arrived. */
  closedAt: string;
  /** How long Tally waited for the recording webhook. */
  waitedMs: number;
}

export interface ExpectedRecordingsOptions {
  /** Time allowed between a channel's close and its recording webhook. */
  graceMs: number;
  /** Whether server recording is on (asked at each close). */
  expecting: () => boolean;
  onMissing: (missing: MissingRecording) => void;
  now?: () => Date;
  /** Channels watched at once; beyond it the oldest is dropped (a flood of close calls stays bounded). */
  maxWatched?: number;
}

/** Default grace: the service processes a recording (minutes for a long one) before it sends the webhook. */
export const DEFAULT_RECORDING_GRACE_MS = 10 * 60 * 1000;

export class ExpectedRecordings {
  readonly #opts: ExpectedRecordingsOptions;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  /** When each channel's recording webhook last arrived: it may come before the close call does. */
  readonly #recent = new Map<string, number>();

  constructor(opts: ExpectedRecordingsOptions) {
    this.#opts = opts;
  }

  /** Channels waiting for their recording webhook. */
  get watching(): string[] {
    return [...this.#timers.keys()];
  }

  /** A channel closed: its recording webhook is expected within the grace period. */
  closed(channelId: string): void {
    this.#cancel(channelId);
    if (!this.#opts.expecting()) return;
    const came = this.#recent.get(channelId);
    if (came !== undefined && this.#tick() - came < this.#opts.graceMs) return;
    const closedAt = (this.#opts.now ?? (() => new Date()))().toISOString();
    const timer = setTimeout(() => {
      this.#timers.delete(channelId);
      this.#opts.onMissing({ channelId, closedAt, waitedMs: this.#opts.graceMs });
    }, this.#opts.graceMs);
    timer.unref();
    this.#timers.set(channelId, timer);
    const max = this.#opts.maxWatched ?? 10_000;
    if (this.#timers.size > max) this.#cancel(this.#timers.keys().next().value as string);
  }

  /** The channel opened (again): whatever its last close expected is moot. */
  opened(channelId: string): void {
    this.#cancel(channelId);
    this.#recent.delete(channelId);
  }

  /** A recording webhook for the channel arrived: nothing is missing. */
  received(channelId: string): void {
    this.#cancel(channelId);
    const now = this.#tick();
    this.#recent.delete(channelId);
    this.#recent.set(channelId, now);
    for (const [id, at] of this.#recent) {
      if (now - at < this.#opts.graceMs && this.#recent.size <= (this.#opts.maxWatched ?? 10_000)) break;
      this.#recent.delete(id);
    }
  }

  /** Ages of webhooks on the monotonic clock (core/time.ts); a test's `now` moves them by hand. */
  #tick(): number {
    return this.#opts.now ? this.#opts.now().getTime() : systemClock.now();
  }

  #cancel(channelId: string): void {
    const timer = this.#timers.get(channelId);
    if (timer) clearTimeout(timer);
    this.#timers.delete(channelId);
  }

  stop(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#recent.clear();
  }
}
