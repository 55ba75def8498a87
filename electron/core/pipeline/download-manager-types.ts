/**
 * What the download queue takes and announces (split from download-manager.ts, which re-exports all of it).
 */
import type { DownloadOptions, DownloadPolicy, DownloadProgress } from '../download/fetch-file.js';
import type { DownloadFs } from '../download/download-fs.js';
import type { RecordingJob, JobStore } from '../recordings/types.js';
import type { DiskStats, DiskStatus } from './disk-budget.js';
import type { Clock } from '../time.js';

export interface DownloadManagerOptions {
  store: JobStore;
  /** Recordings folder (created if missing). */
  folder: string;
  policy: DownloadPolicy;
  /** Downloads at once (default 3). */
  concurrency?: number;
  /** File-name template (`{channelId}`, `{date}`, `{time}`, `{datetime}`); default `{channelId}`. */
  fileNameTemplate?: string;
  /**
   * The clocks (core/time.ts): monotonic for deadlines and retry times, wall for the times written and shown
   * (default systemClock).
   */
  clock?: Clock;
  /** A hand-moved clock (ms since epoch) for both, in tests; `clock` wins when both are given. */
  now?: () => number;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Wait before the second look at a recording the service says is gone (default GONE_RECHECK_MS); doubles. */
  goneRecheckMs?: number;
  /** First retry delay cap (default 2 s); doubles per attempt. */
  retryBaseMs?: number;
  /** Largest retry delay (default 5 min). */
  retryMaxMs?: number;
  /** Parallel ranges per download (default 4). */
  segments?: number;
  /** Size above which ranges are used (default 32 MiB). */
  segmentThresholdBytes?: number;
  /** How the engine adds ranges (download-options.ts); tests shorten them to fit small files. */
  ramp?: Pick<DownloadOptions, 'rampWindowMs' | 'minSplitBytes'>;
  /**
   * Largest recording accepted (the maxRecordingBytes setting; default DEFAULT_MAX_RECORDING_BYTES). A larger
   * announced size is treated as unknown, never trusted for the disk check.
   */
  maxRecordingBytes?: number;
  /** Idle timeout per connection, and the time allowed for response headers (default 30 s). */
  timeoutMs?: number;
  /**
   * The stall rule (default 8 KiB/s over 60 s): a download under it, or unable to finish before the deadline at
   * its rate, gives its slot to the next recording and is retried later; null turns it off.
   */
  stallRule?: { bytesPerSec: number; windowMs: number } | null;
  /** Minimum time between two byte checkpoints written to the store (default 1000 ms). */
  checkpointIntervalMs?: number;
  /** Minimum time between two 'progress' events per download (default 250 ms). */
  progressIntervalMs?: number;
  /** Test seam passed to the engine. */
  fs?: Partial<DownloadFs>;
  /**
   * Free space downloads never take, kept for the journal on the same disk (default: 5 % of the disk, between
   * 1 MiB and 256 MiB; see disk-budget.ts).
   */
  diskFloorBytes?: number;
  /**
   * How often a recording waiting for disk space looks again (default 30 s, or retryMaxMs when shorter); a
   * finished download wakes it too.
   */
  diskRecheckMs?: number;
  /** Test seam: statfs of the recordings folder. */
  diskStats?: DiskStats;
  /**
   * Acknowledgements first: while `busy()` says webhooks are waiting for their journal commit, queued downloads
   * wait to start (running ones go on), so a burst of webhooks is acknowledged before the downloads it brings
   * take the CPU. The service never resends a webhook, while a recording stays for 6 hours: the answer is the
   * part that cannot wait. `onQuiet` calls back when the last waiting webhook is answered.
   */
  acksFirst?: AckGate;
  /**
   * Longest downloads wait for `acksFirst` in one busy spell of the receiver (default ACKS_FIRST_MAX_HOLD_MS): a
   * flood, or clients that trickle webhook bodies to keep the receiver busy, delay downloads by this, once.
   */
  acksFirstMaxHoldMs?: number;
  /** Who of a studio's receivers downloads each recording (see DownloadClaims); also set later by setClaims. */
  claims?: DownloadClaims | null;
}

/**
 * One origin download per recording per studio: before a download starts, the studio (studio/download-claims.ts)
 * is asked who downloads it. Injected: the pipeline knows nothing of the team server.
 */
export interface DownloadClaims {
  /**
   * `download`: this receiver downloads it (it holds the claim, or the team server cannot be asked). `wait`:
   * another receiver holds a live claim; `settled` resolves with the file once the claimant's published copy is
   * saved in `folder`, or null when its claim lapsed (the claimant died): then this receiver downloads it.
   */
  claim(job: RecordingJob, folder: string, signal: AbortSignal): Promise<ClaimAnswer>;
  /** The download this receiver claimed ended (saved or not): its claim is no longer renewed for it. */
  release(job: RecordingJob): void;
}

export type ClaimAnswer = { go: 'download' } | { go: 'wait'; settled: Promise<{ path: string; bytes: number } | null> };

/** See DownloadManagerOptions.acksFirst (the webhook receiver is one). */
export interface AckGate {
  /** Whether webhooks are waiting for their journal commit now. */
  busy(): boolean;
  /** Calls `listener` whenever the last waiting webhook has been answered; returns the unsubscribe. */
  onQuiet(listener: () => void): () => void;
}

/**
 * The longest a queued download waits while webhooks keep arriving: a burst of 4,000 is journalled in about a
 * second. A flood that goes on longer has its downloads started after this and run beside it until it ends (so
 * a flood delays downloads by this much once, never stops them); the next burst is held anew.
 */
export const ACKS_FIRST_MAX_HOLD_MS = 2_000;

export interface ProgressEvent extends DownloadProgress {
  key: string;
  channelId: string;
  /** ISO time the service deletes the file. */
  deadline: string;
}

export interface SavedEvent {
  job: RecordingJob;
  path: string;
  bytes: number;
}

export interface FailedEvent {
  job: RecordingJob;
  error: Error;
  willRetry: boolean;
  /** ISO time of the next attempt, or null. */
  nextAttemptAt: string | null;
}

export interface ExpiredEvent {
  job: RecordingJob;
  reason: string;
}

export interface DownloadManagerEvents {
  progress: [ProgressEvent];
  saved: [SavedEvent];
  failed: [FailedEvent];
  expired: [ExpiredEvent];
  /** The wall clock stepped by this many ms (stored deadlines are being moved by it; core/time.ts). */
  'clock-step': [stepMs: number];
  /** The disk of the recordings folder changed health (a recording waits for space, or no longer does). */
  disk: [DiskStatus];
}
