/**
 * Polls the live list on a timer that follows what is on screen. While a view is visible (popover open,
 * browser tab shown) it polls every `intervalMs`; while nothing is visible it polls `backgroundFactor`
 * times slower, and only when someone still needs the count (the tray icon). With neither, it stops:
 * a hidden browser tab must not keep hitting the service every few seconds.
 *
 * The channel lifecycle hook (`hook()`) changes the list at once: an opened channel is added, a closed one
 * removed, and for a short while polls that lag behind the hook do not undo it. While hooks flow, polling is
 * only the fallback and runs `hookedFactor` times slower.
 */
import type { Channel } from '../model.js';
import { systemClock } from '../time.js';

export interface LivePollerOptions {
  /** One poll; rejects on failure (the poller keeps going). */
  fetch: (signal: AbortSignal) => Promise<Channel[]>;
  intervalMs: number;
  /** Hidden polling is this many times slower than visible polling. Default 4. */
  backgroundFactor?: number;
  /** Whether something still needs the live count while no view is visible (e.g. a tray listens). */
  wantsBackground: () => boolean;
  /** Whether polling is possible at all (credentials or the demo sandbox exist). */
  canPoll: () => boolean;
  onResult: (channels: Channel[]) => void;
  onError: (error: unknown) => void;
  /** Polling is this many times slower while lifecycle hooks arrive. Default 6. */
  hookedFactor?: number;
  now?: () => number;
}

/** A hook call counts as "hooks flow" for this long. */
export const HOOKS_FRESH_MS = 10 * 60 * 1000;
/** How long a hook's word beats a poll that says otherwise (the service's list may lag behind its hook). */
export const HOOK_OVERRIDE_MS = 30_000;

export class LivePoller {
  readonly #opts: LivePollerOptions;
  #intervalMs: number;
  #visible = false;
  #running = false;
  #timer: NodeJS.Timeout | null = null;
  #inFlight: Promise<void> | null = null;
  #abort: AbortController | null = null;
  #last: Channel[] | null = null;
  #lastHookAt = -Infinity;
  /** Channel ID -> what the hook said and when. */
  readonly #overrides = new Map<string, { action: 'create' | 'close'; at: number }>();

  constructor(opts: LivePollerOptions) {
    this.#opts = opts;
    this.#intervalMs = Math.max(1, opts.intervalMs);
  }

  get visible(): boolean {
    return this.#visible;
  }

  /** The delay until the next poll under the current conditions, or null when polling is idle. */
  get currentDelayMs(): number | null {
    if (!this.#running || !this.#opts.canPoll()) return null;
    const hooked = this.hooksFlowing ? (this.#opts.hookedFactor ?? 6) : 1;
    if (this.#visible) return this.#intervalMs * hooked;
    return this.#opts.wantsBackground() ? this.#intervalMs * (this.#opts.backgroundFactor ?? 4) * hooked : null;
  }

  /** Whether lifecycle hooks arrived lately (polling is then only the fallback). */
  get hooksFlowing(): boolean {
    return this.#now() - this.#lastHookAt < HOOKS_FRESH_MS;
  }

  /**
   * The lifecycle hook said a channel opened or closed: the list changes at once (from the last poll, or empty
   * before any), and polls within HOOK_OVERRIDE_MS that do not know yet are corrected.
   */
  hook(call: { action: 'create' | 'close'; channelId: string }): void {
    const now = this.#now();
    const wasFlowing = this.hooksFlowing;
    this.#lastHookAt = now;
    this.#overrides.set(call.channelId, { action: call.action, at: now });
    if (this.#overrides.size > 1000) this.#overrides.delete(this.#overrides.keys().next().value as string);
    const next = this.#apply(this.#last ?? []);
    this.#last = next;
    this.#opts.onResult(next);
    if (!wasFlowing) this.#schedule();
  }

  #now(): number {
    return (this.#opts.now ?? systemClock.now)();
  }

  /** The polled list corrected by recent hook calls. */
  #apply(channels: Channel[]): Channel[] {
    const now = this.#now();
    const out = [...channels];
    for (const [id, o] of this.#overrides) {
      if (now - o.at >= HOOK_OVERRIDE_MS) {
        this.#overrides.delete(id);
        continue;
      }
      const at = out.findIndex((c) => c.id === id);
      if (o.action === 'close' && at >= 0) out.splice(at, 1);
      if (o.action === 'create' && at < 0) {
        out.push({
          id,
          serviceId: null,
          state: 'live',
          createdAt: new Date(o.at),
          endedAt: null,
          watchers: null,
          cumulativeSessions: null,
        });
      }
    }
    return out;
  }

  /** Begins polling (one poll right away when there is a reason to poll). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    if (this.currentDelayMs !== null) void this.refresh();
  }

  /** Showing a view polls at once, so the list is fresh when the producer looks at it. */
  setVisible(visible: boolean): void {
    if (visible === this.#visible) return;
    this.#visible = visible;
    if (!this.#running) return;
    if (visible) void this.refresh();
    else this.#schedule();
  }

  setIntervalMs(ms: number): void {
    this.#intervalMs = Math.max(1, ms);
    this.#schedule();
  }

  /** Re-evaluates the schedule (e.g. credentials appeared or a tray started listening). */
  reschedule(): void {
    if (!this.#running) return;
    if (this.#timer === null && this.#inFlight === null && this.currentDelayMs !== null) void this.refresh();
    else this.#schedule();
  }

  /**
   * Polls now. A poll already running is awaited first and then followed by a new one, because its answer
   * may predate the change that asked for the refresh (a channel just ended).
   */
  async refresh(): Promise<void> {
    if (!this.#running) return;
    if (this.#inFlight) {
      await this.#inFlight.catch(() => {});
      // Another caller woke first and started a poll that began after this request: share it.
      const started = this.#inFlight as Promise<void> | null;
      if (started) return started;
    }
    if (!this.#running || !this.#opts.canPoll()) return;
    this.#clearTimer();
    const abort = new AbortController();
    this.#abort = abort;
    const run = (async () => {
      try {
        const channels = this.#apply(await this.#opts.fetch(abort.signal));
        if (!abort.signal.aborted) {
          this.#last = channels;
          this.#opts.onResult(channels);
        }
      } catch (error) {
        if (!abort.signal.aborted) this.#opts.onError(error);
      }
    })();
    this.#inFlight = run;
    try {
      await run;
    } finally {
      if (this.#inFlight === run) {
        this.#inFlight = null;
        this.#abort = null;
        this.#schedule();
      }
    }
  }

  /** Stops the timer and abandons a running poll. */
  stop(): void {
    this.#running = false;
    this.#clearTimer();
    this.#abort?.abort();
    this.#abort = null;
    this.#inFlight = null;
  }

  #schedule(): void {
    this.#clearTimer();
    if (this.#inFlight) return;
    const delay = this.currentDelayMs;
    if (delay === null) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.refresh();
    }, delay);
    // The shell (Electron, the UI server) keeps the process alive; a poll timer alone must not.
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
