/**
 * Recordings: the core's list merged with change and progress pushes by key, plus the missed-recording
 * (gap) report.
 */
import { SvelteMap, SvelteSet } from 'svelte/reactivity';
import {
  recordingNeedsAttention,
  type GapReport,
  type RecordingView,
  type TallyBridge,
} from '../../../electron/contract.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { copyText } from '../lib/clipboard.js';
import { localMidnight } from '../lib/days.js';
import { nestedKeys, underTheirBroadcast } from './recording-groups.js';
import { messageOf } from '../lib/errors.js';

const TICK_MS = 10_000;
/**
 * States the list shows among finished recordings. `gone` is not final for the core (it looks again now and
 * then until the deadline), but nothing is downloading: it is shown as gone, never as a countdown.
 */
const TERMINAL = new Set<RecordingView['state']>(['saved', 'failed', 'expired', 'refused', 'gone']);

/** Remaining time before the service deletes the file: amber under an hour, red under 15 minutes. */
export type DeadlineLevel = 'ok' | 'soon' | 'urgent';

/** Whether a recording is finished for the list (saved, failed, expired, refused or gone). */
export function isFinished(r: RecordingView): boolean {
  return TERMINAL.has(r.state);
}

/** Whether "Retry now" applies: it failed, expired or is gone, or it waits for another attempt after an error. */
export function canRetry(r: RecordingView): boolean {
  return r.state !== 'refused' && r.state !== 'saved' && recordingNeedsAttention(r);
}

export function deadlineLevel(secondsLeft: number): DeadlineLevel {
  if (secondsLeft < 15 * 60) return 'urgent';
  if (secondsLeft < 60 * 60) return 'soon';
  return 'ok';
}

const newestFirst = (a: RecordingView, b: RecordingView) => b.receivedAt.localeCompare(a.receivedAt);

/** Which finished recordings the list shows. */
export type RecordingFilter = 'all' | 'server' | 'client' | 'problems';
export const RECORDING_FILTERS: readonly RecordingFilter[] = ['all', 'server', 'client', 'problems'];
/** Finished recordings rendered at a time; "Show more" adds another page. The list is never unbounded. */
export const PAGE_SIZE = 50;

/** Whether a recording is one the list shows under a filter: every finished one, and under Problems also
 * one still in progress that waits on an error (the core's one rule, `recordingNeedsAttention`). */
function listed(filter: RecordingFilter, r: RecordingView): boolean {
  return (TERMINAL.has(r.state) || (filter === 'problems' && recordingNeedsAttention(r))) && matches(filter, r);
}

function matches(filter: RecordingFilter, r: RecordingView): boolean {
  switch (filter) {
    case 'all':
      return true;
    case 'server':
    case 'client':
      return r.source === filter;
    case 'problems':
      return recordingNeedsAttention(r);
  }
}

/** Finished recordings of one local calendar day, newest first. */
export interface DayGroup {
  /** Local midnight of the day (ms), which also keys the group. */
  day: number;
  items: RecordingView[];
}

export class RecordingsStore {
  readonly items = new SvelteMap<string, RecordingView>();
  gaps = $state.raw<GapReport | null>(null);
  status = $state<'loading' | 'ready' | 'error'>('loading');
  error = $state<string | null>(null);
  now = $state(0);

  filter = $state<RecordingFilter>('all');
  /** Recordings still on their way; under Problems, not the ones that wait on an error (listed there, once). */
  inProgress = $derived(
    [...this.items.values()]
      .filter((r) => !TERMINAL.has(r.state) && !(this.filter === 'problems' && recordingNeedsAttention(r)))
      .sort(newestFirst),
  );
  saved = $derived([...this.items.values()].filter((r) => r.state === 'saved').sort(newestFirst));

  /** Entries just removed, hidden while the producer may still undo it; the core hears of it afterwards. */
  held = new SvelteSet<string>();
  /** How many finished recordings are shown; grows a page at a time. */
  limit = $state(PAGE_SIZE);

  /** Finished recordings that pass the filter (under Problems, also waiting ones), newest first; each web client
   * recording under the broadcast it was made in. Removed ones are held back while Undo is offered. */
  finished = $derived(
    underTheirBroadcast(
      [...this.items.values()].filter((r) => !this.held.has(r.key) && listed(this.filter, r)).sort(newestFirst),
    ),
  );
  /** Client recordings listed right under the broadcast they were made in (their channel's server recording). */
  nested = $derived(nestedKeys(this.finished));
  /** The shown page of `finished`, by day. */
  days = $derived.by((): DayGroup[] => {
    const groups: DayGroup[] = [];
    for (const r of this.finished.slice(0, this.limit)) {
      const last = groups.at(-1);
      // A client recording stays under its broadcast, even when it arrived after midnight.
      const day = this.nested.has(r.key) && last ? last.day : localMidnight(r.receivedAt);
      if (last?.day === day) last.items.push(r);
      else groups.push({ day, items: [r] });
    }
    return groups;
  });
  /** What each filter lists, for the filter's labels. */
  counts = $derived.by(() => {
    const counts: Record<RecordingFilter, number> = { all: 0, server: 0, client: 0, problems: 0 };
    for (const r of this.items.values()) {
      if (this.held.has(r.key)) continue;
      for (const f of RECORDING_FILTERS) if (listed(f, r)) counts[f] += 1;
    }
    return counts;
  });

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

  /** Thumbnails asked of the core, by key: each is fetched once per page load (a cache, not state). */
  readonly #thumbnails: Record<string, Promise<string | null>> = Object.create(null) as Record<
    string,
    Promise<string | null>
  >;

  /** The webhook's thumbnail as a data: URL, or null (none, refused, or the core could not fetch it). */
  thumbnail(key: string): Promise<string | null> {
    return (this.#thumbnails[key] ??= this.bridge.recordings.thumbnail(key).then(
      (r) => (r.dataUrl?.startsWith('data:image/') ? r.dataUrl : null),
      () => null,
    ));
  }

  open(key: string): Promise<{ ok: boolean }> {
    return this.bridge.recordings.open(key);
  }

  reveal(key: string): Promise<{ ok: boolean }> {
    return this.bridge.recordings.reveal(key);
  }

  /** Copies the saved file's full path (through the core, else the browser clipboard). */
  async copyPath(key: string): Promise<{ ok: boolean }> {
    const { path } = await this.bridge.recordings.path(key);
    if (path === null) return { ok: false };
    await copyText(this.bridge, path);
    return { ok: true };
  }

  /** Takes a finished recording off the list (the core remembers it; the file stays). */
  async remove(key: string): Promise<{ ok: boolean }> {
    const result = await this.bridge.recordings.remove(key);
    if (result.ok) this.items.delete(key);
    return result;
  }

  setFilter(filter: RecordingFilter): void {
    this.filter = filter;
    this.limit = PAGE_SIZE;
  }

  showMore(): void {
    this.limit += PAGE_SIZE;
  }

  /** Seconds until the next automatic attempt of a recording waiting after an error, or null when none is due. */
  secondsToNextAttempt(r: RecordingView): number | null {
    if (!r.nextAttemptAt || !recordingNeedsAttention(r) || isFinished(r)) return null;
    return Math.max(0, Math.round((Date.parse(r.nextAttemptAt) - this.now) / 1000));
  }

  /** Seconds until the service deletes the file, or null when it has no deadline. */
  secondsLeft(r: RecordingView): number | null {
    return r.deadline ? Math.round((Date.parse(r.deadline) - this.now) / 1000) : null;
  }
}
