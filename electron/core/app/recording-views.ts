/**
 * Recordings as the renderer sees them. A view is built from a durable job (any source) plus the live
 * download progress the core remembers for it; nothing of the file system layout but the file name leaves.
 * Two sources share one key space: the webhook inbox ('server', keyed by the inbox) and web client uploads
 * ('client', keyed `upload:<id>`).
 */
import { basename } from 'node:path';
import { nested, said, note, type Note, type RecordingView } from '../../contract.js';
import type { RecordingJob } from '../recordings/types.js';
import { systemClock } from '../time.js';
import type { RefusedUploadRecord } from '../uploads/upload-log.js';

export type RecordingSourceKind = RecordingView['source'];

/** Live progress of one download, as the download manager reports it. */
export interface LiveProgress {
  bytes: number;
  total: number | null;
  rate: number;
  etaSeconds: number | null;
}

/** Key prefix of client uploads in views, so one key space covers both sources. */
export const UPLOAD_KEY_PREFIX = 'upload:';
/** Key prefix of refused client uploads. */
export const REFUSED_KEY_PREFIX = 'refused:';

/** What a view needs of a saved client upload (the pipeline's upload log records fit). */
export interface ClientUploadRecord {
  id: string;
  path: string;
  fileName: string;
  bytes: number;
  receivedAt: string;
  channelId?: string | null;
  track?: 'local' | 'remote' | null;
}

/** Job (+ live progress while downloading) -> RecordingView. */
export function recordingView(
  job: RecordingJob,
  progress: LiveProgress | null | undefined,
  source: RecordingSourceKind = 'server',
  nextAttemptAt: string | null = null,
): RecordingView {
  const live = job.state === 'downloading' && progress ? progress : null;
  return {
    key: job.key,
    channelId: job.channelId,
    source,
    state: job.state,
    receivedAt: job.receivedAt,
    deadline: source === 'server' ? job.deadline : null,
    bytes: live ? live.bytes : job.bytes,
    // Saved shorter than announced: the row says how much was announced (issue 31).
    totalBytes: job.checks?.includes('short')
      ? job.announcedBytes
      : (live?.total ?? job.totalBytes ?? job.announcedBytes),
    rate: live ? live.rate : null,
    etaSeconds: live ? live.etaSeconds : null,
    fileName: job.path ? basename(job.path) : null,
    error: job.error,
    errorNotes: job.errorNotes ?? null,
    attempts: job.attempts,
    nextAttemptAt: job.state === 'pending' || job.state === 'gone' ? nextAttemptAt : null,
    ...(job.checks ? { checks: job.checks } : {}),
    hasThumbnail: source === 'server' && job.thumbnail !== null,
  };
}

/** A client upload is saved the moment it is listed: it arrived whole or not at all. */
export function uploadView(record: ClientUploadRecord): RecordingView {
  return {
    key: `${UPLOAD_KEY_PREFIX}${record.id}`,
    channelId: record.channelId ?? '',
    source: 'client',
    state: 'saved',
    receivedAt: record.receivedAt,
    deadline: null,
    bytes: record.bytes,
    totalBytes: record.bytes,
    rate: null,
    etaSeconds: null,
    fileName: record.fileName,
    error: null,
    attempts: 1,
    track: record.track ?? null,
  };
}

/** A refused client upload: what the producer gets instead of the recording (channel, stream and why). */
export function refusedView(record: RefusedUploadRecord): RecordingView {
  return {
    key: `${REFUSED_KEY_PREFIX}${record.id}`,
    channelId: record.channelId ?? '',
    source: 'client',
    state: 'refused',
    receivedAt: record.at,
    deadline: null,
    bytes: null,
    totalBytes: null,
    rate: null,
    etaSeconds: null,
    fileName: record.fileName,
    ...refusal(record),
    attempts: 1,
    track: record.track,
  };
}

function refusal(record: RefusedUploadRecord): Pick<RecordingView, 'error' | 'errorNotes'> {
  const reason = record.reasonNote ? nested('reason', record.reasonNote) : { reason: record.reason };
  const { text, notes } = said(note('uploadRefused', { ...reason, status: record.status }));
  return { error: text, errorNotes: notes };
}

/**
 * What a refused client upload's notification says: which recording (channel or file name, and its stream),
 * then why, as notes the tray app says in its language.
 */
export function refusalNotes(record: RefusedUploadRecord): Note[] {
  const name = record.channelId ?? record.fileName;
  const which =
    name === null
      ? note('uploadRefusedUnnamed')
      : record.track === 'local'
        ? note('uploadRefusedLocal', { name })
        : record.track === 'remote'
          ? note('uploadRefusedRemote', { name })
          : note('channelSays', { channel: name });
  return [which, record.reasonNote ?? note('error', { message: record.reason })];
}

/** Newest first; the key breaks ties so the order is stable. */
export function newestFirst(a: RecordingView, b: RecordingView): number {
  if (a.receivedAt !== b.receivedAt) return a.receivedAt < b.receivedAt ? 1 : -1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * What makes a change worth a `recordings:changed` push. Byte checkpoints the journal writes every second
 * are not: they already travel as `recordings:progress`.
 */
export function changeSignature(view: RecordingView): string {
  return JSON.stringify([view.state, view.attempts, view.error, view.fileName, view.totalBytes, view.deadline]);
}

export interface ProgressThrottleOptions {
  /** Minimum time between two pushes for one recording. */
  minIntervalMs: number;
  push: (key: string, progress: LiveProgress) => void;
  now?: () => number;
}

/**
 * Keeps the latest progress per recording and pushes it at most once per `minIntervalMs`, with a trailing
 * push so the last figure before a pause is not lost.
 */
export class ProgressThrottle {
  readonly #opts: ProgressThrottleOptions;
  readonly #latest = new Map<string, LiveProgress>();
  readonly #lastPush = new Map<string, number>();
  readonly #trailing = new Map<string, NodeJS.Timeout>();

  constructor(opts: ProgressThrottleOptions) {
    this.#opts = opts;
  }

  get(key: string): LiveProgress | undefined {
    return this.#latest.get(key);
  }

  /** All recordings with live progress. */
  entries(): [string, LiveProgress][] {
    return [...this.#latest.entries()];
  }

  update(key: string, progress: LiveProgress): void {
    this.#latest.set(key, progress);
    if (this.#trailing.has(key)) return;
    const now = (this.#opts.now ?? systemClock.now)();
    const wait = (this.#lastPush.get(key) ?? -Infinity) + this.#opts.minIntervalMs - now;
    if (wait <= 0) {
      this.#pushNow(key);
      return;
    }
    const timer = setTimeout(() => {
      this.#trailing.delete(key);
      if (this.#latest.has(key)) this.#pushNow(key);
    }, wait);
    timer.unref();
    this.#trailing.set(key, timer);
  }

  /** Forgets a recording (it left `downloading`): no trailing push for it any more. */
  clear(key: string): void {
    this.#latest.delete(key);
    this.#lastPush.delete(key);
    const timer = this.#trailing.get(key);
    if (timer) clearTimeout(timer);
    this.#trailing.delete(key);
  }

  clearAll(): void {
    for (const key of [...this.#latest.keys(), ...this.#trailing.keys()]) this.clear(key);
  }

  #pushNow(key: string): void {
    const progress = this.#latest.get(key);
    if (!progress) return;
    this.#lastPush.set(key, (this.#opts.now ?? systemClock.now)());
    this.#opts.push(key, progress);
  }
}
