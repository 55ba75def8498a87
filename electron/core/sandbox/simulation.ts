/**
 * Demo mode: a sandbox that lives on its own, for trying the app without a test driving it. It seeds a week
 * of past channels for search, keeps a few broadcasts live, ends them after a few (virtual) minutes, records
 * most of them and starts new ones, all from the seeded RNG and on the virtual clock.
 */
import type { Scheduler } from './clock.js';
import type { Rng } from './rng.js';
import type { SandboxService } from './service.js';

const MINUTE = 60_000;
const HISTORY_CHANNELS = 40;
const HISTORY_SPAN_MS = 7 * 24 * 60 * MINUTE;

export class DemoSimulation {
  private readonly cancels = new Set<() => void>();
  private stopped = false;

  constructor(
    private readonly service: SandboxService,
    private readonly scheduler: Scheduler,
    private readonly rng: Rng,
  ) {}

  /** Seeds history and starts the first broadcasts. */
  start(): this {
    this.seedHistory();
    const initial = this.rng.int(2, 4);
    for (let i = 0; i < initial; i++) {
      // Some were already running when the sandbox came up.
      this.startOne(new Date(Date.now() - this.rng.int(0, 20) * MINUTE));
    }
    return this;
  }

  stop(): void {
    this.stopped = true;
    for (const cancel of this.cancels) cancel();
    this.cancels.clear();
  }

  private seedHistory(): void {
    const now = Date.now();
    const items = [];
    for (let i = 0; i < HISTORY_CHANNELS; i++) {
      const createdAt = now - this.rng.int(60 * MINUTE, HISTORY_SPAN_MS);
      const endedAt = createdAt + this.rng.int(2 * MINUTE, 90 * MINUTE);
      items.push({
        id: `${createdAt}_${this.rng.chars(5)}`,
        createdAt: new Date(createdAt),
        endedAt: new Date(endedAt),
        peerCount: this.rng.int(1, 300),
      });
    }
    this.service.addEndedChannels(items);
  }

  private startOne(createdAt = new Date()): void {
    if (this.stopped) return;
    const info = this.service.startBroadcast({
      createdAt,
      record: this.rng.next() < 0.6,
      recordingBytes: this.rng.int(2_000_000, 8_000_000),
    });
    this.later(this.rng.int(2 * MINUTE, 15 * MINUTE), () => {
      // A test or the user may have ended it already; either way a new one follows.
      if (this.service.isLive(info.id)) this.service.endBroadcast(info.id).catch(() => {});
      this.later(this.rng.int(15_000, 90_000), () => this.startOne());
    });
  }

  private later(virtualMs: number, fn: () => void): void {
    const cancel = this.scheduler.after(virtualMs, () => {
      this.cancels.delete(cancel);
      fn();
    });
    this.cancels.add(cancel);
  }
}
