/**
 * Demo mode: a sandbox that lives on its own, for trying the app without a test driving it. It seeds a week
 * of past channels for search, keeps a few broadcasts live, ends them after tens of (virtual) minutes,
 * records most of them and starts new ones, all from the seeded RNG and on the virtual clock. Channels are
 * named like a studio's day (`morning-news`, `interview-room-2`), not like generated IDs, so the demo
 * reads like real work.
 */
import type { Scheduler } from './clock.js';
import type { Rng } from './rng.js';
import type { SandboxService } from './service.js';

const MINUTE = 60_000;
const HISTORY_CHANNELS = 40;
const HISTORY_SPAN_MS = 7 * 24 * 60 * MINUTE;

/** What a broadcast studio runs in a day. Names repeat across the week with a suffix, as real ones do. */
export const DEMO_CHANNEL_NAMES: readonly string[] = [
  'morning-news',
  'main-stage',
  'interview-room-2',
  'weather-desk',
  'sports-update',
  'q-and-a',
  'backstage-cam',
  'product-launch',
  'cooking-live',
  'town-hall',
  'press-briefing',
  'studio-tour',
  'music-session',
  'evening-recap',
  'kids-hour',
  'night-owl',
];
/** Live broadcasts last 20-60 virtual minutes: at the demo's 10x, two to six real minutes. */
const LIVE_MIN_MS = 20 * MINUTE;
const LIVE_MAX_MS = 60 * MINUTE;

export class DemoSimulation {
  private readonly cancels = new Set<() => void>();
  private stopped = false;
  private readonly named = new Set<string>();

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
      // Some were already running when the sandbox came up; the first ends soon and is recorded, so a
      // recording arrives within a minute or two of opening the demo (or of `tally listen --sandbox`).
      const left = i === 0 ? this.rng.int(3 * MINUTE, 8 * MINUTE) : undefined;
      this.startOne(
        new Date(this.service.now().getTime() - this.rng.int(0, 20) * MINUTE),
        left,
        i === 0 ? true : undefined,
      );
    }
    return this;
  }

  stop(): void {
    this.stopped = true;
    for (const cancel of this.cancels) cancel();
    this.cancels.clear();
  }

  private seedHistory(): void {
    const now = this.service.now().getTime();
    const items = [];
    for (let i = 0; i < HISTORY_CHANNELS; i++) {
      const createdAt = now - this.rng.int(60 * MINUTE, HISTORY_SPAN_MS);
      const endedAt = createdAt + this.rng.int(2 * MINUTE, 90 * MINUTE);
      items.push({
        // Past channels carry their date, which leaves the plain names to today's broadcasts.
        id: this.nameFor(createdAt, true),
        createdAt: new Date(createdAt),
        endedAt: new Date(endedAt),
        peerCount: this.rng.int(1, 300),
      });
    }
    this.service.addEndedChannels(items);
  }

  /**
   * A channel name not used yet: a studio name, then the same with the date (`morning-news-0512`), then
   * with a counter, so the sandbox never sees the same ID twice. `dated` skips the plain name.
   */
  private nameFor(at: number, dated = false): string {
    const base = DEMO_CHANNEL_NAMES[this.rng.int(0, DEMO_CHANNEL_NAMES.length - 1)] as string;
    const d = new Date(at);
    const datedName = `${base}-${String(d.getMonth() + 1).padStart(2, '0')}${String(d.getDate()).padStart(2, '0')}`;
    // History is added as one batch, so names handed out but not yet in the service count as taken too.
    const free = (id: string) => !this.named.has(id) && !this.service.isKnownId(id);
    let id = (dated ? [datedName] : [base, datedName]).find(free);
    for (let n = 2; id === undefined; n++) if (free(`${datedName}-${n}`)) id = `${datedName}-${n}`;
    this.named.add(id);
    return id;
  }

  private startOne(createdAt = this.service.now(), lastsMs?: number, record?: boolean): void {
    if (this.stopped) return;
    const info = this.service.startBroadcast({
      id: this.nameFor(createdAt.getTime()),
      createdAt,
      record: this.rng.next() < 0.7 || record === true,
      // A few megabytes: downloads are paced in demo mode (see startDemoSandbox) so progress shows.
      recordingBytes: this.rng.int(4_000_000, 12_000_000),
    });
    this.later(lastsMs ?? this.rng.int(LIVE_MIN_MS, LIVE_MAX_MS), () => {
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
