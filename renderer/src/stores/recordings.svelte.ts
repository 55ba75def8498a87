/**
 * Recordings: the core's list merged with change and progress pushes by key, plus the missed-recording
 * (gap) report.
 */
import { SvelteMap } from 'svelte/reactivity';
import type { GapReport, RecordingView, TallyBridge } from '../../../electron/contract.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { messageOf } from '../lib/errors.js';

const TICK_MS = 10_000;
const TERMINAL = new Set<RecordingView['state']>(['saved', 'failed', 'expired']);

/** Remaining time before the service deletes the file: amber under an hour, red under 15 minutes. */
export type DeadlineLevel = 'ok' | 'soon' | 'urgent';

export function deadlineLevel(secondsLeft: number): DeadlineLevel {
  if (secondsLeft < 15 * 60) return 'urgent';
  if (secondsLeft < 60 * 60) return 'soon';
  return 'ok';
}

const newestFirst = (a: RecordingView, b: RecordingView) => b.receivedAt.localeCompare(a.receivedAt);

export class RecordingsStore {
  readonly items = new SvelteMap<string, RecordingView>();
  gaps = $state.raw<GapReport | null>(null);
  status = $state<'loading' | 'ready' | 'error'>('loading');
  error = $state<string | null>(null);
  now = $state(0);

  inProgress = $derived([...this.items.values()].filter((r) => !TERMINAL.has(r.state)).sort(newestFirst));
  saved = $derived([...this.items.values()].filter((r) => r.state === 'saved').sort(newestFirst));
  failed = $derived(
    [...this.items.values()].filter((r) => r.state === 'failed' || r.state === 'expired').sort(newestFirst),
  );

  constructor(
    private readonly bridge: TallyBridge,
    private readonly clock: Clock = systemClock,
  ) {
    this.now = clock.now();
  }

  start(): () => void {
    const offs = [
      this.bridge.on('recordings:changed', (r) => this.items.set(r.key, r)),
      this.bridge.on('recordings:progress', (r) => this.progress(r)),
      this.bridge.on('recordings:gaps', (g) => (this.gaps = g)),
      this.clock.every(TICK_MS, () => (this.now = this.clock.now())),
    ];
    void this.load();
    return () => offs.forEach((off) => off());
  }

  async load(): Promise<void> {
    if (this.status === 'error') this.status = 'loading';
    try {
      const [list, gaps] = await Promise.all([this.bridge.recordings.list(), this.bridge.recordings.gaps()]);
      this.items.clear();
      for (const r of list) this.items.set(r.key, r);
      this.gaps = gaps;
      this.now = this.clock.now();
      this.status = 'ready';
      this.error = null;
    } catch (error) {
      this.error = messageOf(error);
      this.status = 'error';
    }
  }

  /** Progress is throttled and may trail a state change; it never moves a finished recording back. */
  progress(r: RecordingView): void {
    const current = this.items.get(r.key);
    if (current && TERMINAL.has(current.state)) return;
    this.items.set(r.key, r);
  }

  async retry(key: string): Promise<void> {
    const updated = await this.bridge.recordings.retry(key);
    this.items.set(updated.key, updated);
  }

  open(key: string): Promise<{ ok: boolean }> {
    return this.bridge.recordings.open(key);
  }

  reveal(key: string): Promise<{ ok: boolean }> {
    return this.bridge.recordings.reveal(key);
  }

  /** Seconds until the service deletes the file, or null when it has no deadline. */
  secondsLeft(r: RecordingView): number | null {
    return r.deadline ? Math.round((Date.parse(r.deadline) - this.now) / 1000) : null;
  }
}
