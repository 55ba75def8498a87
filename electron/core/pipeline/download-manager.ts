/**
 * The download queue: takes jobs from the durable inbox and keeps at them until each recording is saved or the
 * service has deleted it (6 hours after the webhook). Transient failures are retried with exponential backoff
 * and full jitter, and every state change goes through the store before it is announced, so a crash at any point
 * resumes where it was and never saves a file twice.
 *
 * Time (issue 30): the deadline is kept on the monotonic clock while Tally runs (core/time.ts), read once from
 * the journal's wall-clock deadline; a step of the wall clock moves the stored deadlines by the step, so a
 * restart still finds the right one. The origin decides expiry: a recording is `expired` (and its part deleted)
 * only when the origin answers that it is gone (403/404/410) and the 6 hours are over by the service's own clock:
 * the `Date` of that answer against the deadline on the service's clock, learned from the origin's first dated
 * answer and kept in the journal (so a step of the local clock made while Tally was stopped, even across a boot,
 * changes no verdict, and the first dated answer of a run sets the monotonic deadline right after a step across a
 * boot); by the monotonic deadline only when the answer carries no readable Date. The time a reason
 * names is the service's, never one it has not reached. Past the deadline anything else is retried at the slowest
 * pace of the backoff while the origin may still serve the file, and its part is kept. An attempt that wrote bytes
 * starts the backoff again from its first step, and a retry is never put off past the last moment the rest could
 * still be fetched at the rate seen.
 *
 * States: `pending` (queued, or waiting for a retry: `error` holds the last transient error), `downloading`,
 * then one of the terminal `saved`, `expired` (the service deleted the file first) or `failed` (refused by
 * the download-origin policy: only a manual `retry` starts it again). `gone`: the service answered that the file
 * is not there (403/404/410) before the deadline; it is shown as gone, not as a countdown, and looked at again
 * now and then (GONE_RECHECK_MS, doubling) until the deadline, in case the answer was a passing one.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { note } from '../notes.js';
import { backoffDelay, type BackoffPolicy } from '../backoff.js';
import { ensureWritableFolder } from '../folder-check.js';
import { extFromUrl, renderFileName, safeFileName } from '../recordings/filename.js';
import { RETENTION_MS, type JobStore, type RecordingJob } from '../recordings/types.js';
import { downloadFs, sizeOf } from '../download/download-fs.js';
import {
  DiskFullError,
  DownloadRefusedError,
  HttpStatusError,
  VerificationError,
  formatBytes,
} from '../download/errors.js';
import type { DownloadPolicy } from '../download/fetch-file.js';
import { DEFAULT_MAX_RECORDING_BYTES, discardPart, forgetCommit } from '../download/fetch-file.js';
import { downloadInThread } from '../download/download-thread.js';
import { isAbortError } from '../download/http-request.js';
import { probeOrigin, sameVersion } from '../download/origin-probe.js';
import { DiskBudget, bytesToWrite, type DiskStats, type DiskStatus } from './disk-budget.js';
import { refusePlantedLinks, releaseFinalName, reserveFinalName, sniffPart } from './final-names.js';
import { describe, formatTime, stored } from './job-notes.js';
import { RetrySchedule } from './retry-schedule.js';
import { isoAt, manualClock, shiftIso, systemClock, wallAt, watchWallClock, type Clock } from '../time.js';

/**
 * How far the monotonic deadline may be from what the service's clock says is left before it is set right: the
 * `Date` header counts whole seconds and an answer takes its time, while a step of a clock that matters is minutes.
 */
const SERVICE_CLOCK_TOLERANCE_MS = 60_000;

/** First wait before looking again at a recording the service says is gone, and the longest. */
export const GONE_RECHECK_MS = 10 * 60 * 1000;
export const GONE_RECHECK_MAX_MS = 60 * 60 * 1000;

export { RESERVATION_SUFFIX, reserveFinalName } from './final-names.js';
export type { DiskStatus } from './disk-budget.js';

export { ACKS_FIRST_MAX_HOLD_MS } from './download-manager-types.js';
export type {
  AckGate,
  ClaimAnswer,
  DownloadClaims,
  DownloadManagerEvents,
  DownloadManagerOptions,
  ExpiredEvent,
  FailedEvent,
  ProgressEvent,
  SavedEvent,
} from './download-manager-types.js';
import { ACKS_FIRST_MAX_HOLD_MS } from './download-manager-types.js';
import type { DownloadClaims, DownloadManagerEvents, DownloadManagerOptions } from './download-manager-types.js';

/** Below 8 KiB/s for a minute, a download yields its slot (see stall-rule.ts). */
const DEFAULT_STALL_RULE = { bytesPerSec: 8 * 1024, windowMs: 60_000 };

/** After this many identical announced-size mismatches the webhook's `filesize` is taken to be wrong. */
const ANNOUNCED_SIZE_STRIKES = 2;

/**
 * Where the part of a job lives in `folder`: channel-derived (recognisable in a file listing) plus a hash of the
 * job key, so two recordings of the same channel never share a part and a restart finds the same one.
 */
export function partPathFor(folder: string, job: Pick<RecordingJob, 'key' | 'channelId' | 'url'>): string {
  const tag = createHash('sha256').update(job.key).digest('hex').slice(0, 10);
  const ext = extFromUrl(job.url);
  return path.join(folder, `${safeFileName(job.channelId, { maxBytes: 80 })}.${tag}${ext}.part`);
}

/** What one attempt achieved, for the wait before the next (see #nextAttempt). */
interface AttemptProgress {
  /** When it began (monotonic ms). */
  startedAt: number;
  /** Bytes of the recording it wrote. */
  written: number;
  /** Its last progress: bytes present and the total, when known. */
  bytes: number | null;
  total: number | null;
}

/** How fast a job's last attempt that wrote bytes went, and what was left: the pace its deadline is planned by. */
interface Pace {
  /** Bytes per second over that attempt, from its start (connection set-up included: on the slow side). */
  rate: number;
  /** Bytes still to fetch after it. */
  left: number;
}

interface Running {
  controller: AbortController;
  task: Promise<void>;
}

export class DownloadManager extends EventEmitter<DownloadManagerEvents> {
  readonly #store: JobStore;
  readonly #policy: DownloadPolicy;
  #folder: string;
  #concurrency: number;
  readonly #template: string | undefined;
  /** Monotonic for durations and deadlines, wall only for the times written and shown (core/time.ts). */
  readonly #clock: Clock;
  /** key → its deadline on the monotonic clock, read once from the stored wall-clock deadline. */
  readonly #deadlines = new Map<string, number>();
  /** key → the deadline on the origin's own clock (its `Date` header), learned from its first dated answer. */
  readonly #serviceDeadlines = new Map<string, number>();
  /** Keys whose monotonic deadline was checked against the service's clock in this run (see #serviceDeadlineOf). */
  readonly #serviceChecked = new Set<string>();
  /** key → failures in a row without a byte written (the backoff step of the next wait). */
  readonly #failStreak = new Map<string, number>();
  /** key → the pace of its last attempt that wrote bytes. */
  readonly #pace = new Map<string, Pace>();
  #clockWatch: ReturnType<typeof watchWallClock> | null = null;
  readonly #random: () => number;
  /** Full jitter: many recordings failing together (the service down) spread their retries. */
  readonly #backoff: BackoffPolicy;
  /** Jobs whose Retry now came while an attempt was ending. */
  readonly #retryAfter = new Set<string>();
  /** Gone answers in a row per job (the next look waits longer each time). */
  readonly #goneCount = new Map<string, number>();
  readonly #opts: DownloadManagerOptions;

  /** Keys waiting for a free slot, in order (a Set: membership is checked on every enqueue). */
  readonly #queue = new Set<string>();
  readonly #running = new Map<string, Running>();
  /**
   * Keys whose twin (the same recording in the other webhook form, see RecordingJob.twin) is downloading: one
   * download per recording at a time, so the same bytes are not fetched twice. Each waits, without a slot, for its
   * twin's attempt to end; then it is saved by the twin's file, or tries on its own if the twin did not save it.
   */
  readonly #twinWaiting = new Set<string>();
  /**
   * Keys another receiver of the studio downloads (see DownloadClaims): each waits, without a slot, until the
   * claimant's copy is saved here, or until its claim lapses and this receiver downloads it.
   */
  readonly #claimWaiting = new Map<string, AbortController>();
  /** Keys that waited for another receiver until half their time before the deadline was gone: downloaded here. */
  readonly #ownDownloads = new Set<string>();
  #claims: DownloadClaims | null;
  /** Jobs waiting for their next attempt: one timer for the earliest, whatever their number (retry-schedule.ts). */
  readonly #retries = new RetrySchedule(
    (key) => this.#enqueue(key),
    () => this.#now(),
  );
  readonly #writes = new Set<Promise<unknown>>();
  /** key → [actual size, strikes] of announced-size mismatches. */
  readonly #sizeStrikes = new Map<string, [number, number]>();
  /** key → SHA-256 of its last download whose MD5 did not match the ETag (see DownloadOptions.repeatOf). */
  readonly #md5Misses = new Map<string, string>();
  /** Jobs whose twin saved another object than theirs (see #sameObjectAs): each downloads on its own. */
  readonly #twinVerdicts = new Map<string, boolean>();
  /** key → folder of the part, for jobs started in this session and not finished. */
  readonly #jobFolders = new Map<string, string>();
  readonly #disk: DiskBudget;
  #diskState: DiskStatus['state'] = 'ok';
  #started = false;
  #stopped = false;
  #sweeping: Promise<void> = Promise.resolve();
  /** Since when queued downloads wait for webhooks to be answered (see acksFirst), and the timer ending that. */
  #heldSince: number | null = null;
  #holdTimer: NodeJS.Timeout | null = null;
  #offQuiet: (() => void) | null = null;

  constructor(opts: DownloadManagerOptions) {
    super();
    this.#opts = opts;
    this.#store = opts.store;
    this.#policy = opts.policy;
    this.#claims = opts.claims ?? null;
    this.#folder = opts.folder;
    this.#concurrency = Math.max(1, Math.floor(opts.concurrency ?? 3));
    this.#template = opts.fileNameTemplate;
    this.#clock = opts.clock ?? (opts.now ? manualClock(opts.now) : systemClock);
    this.#random = opts.random ?? Math.random;
    this.#backoff = { baseMs: opts.retryBaseMs ?? 2000, maxMs: opts.retryMaxMs ?? 5 * 60 * 1000, jitter: 1 };
    const statfs = opts.fs?.statfs;
    const stats: DiskStats | undefined =
      opts.diskStats ?? (statfs ? async (folder) => ({ blocks: 0, ...(await statfs(folder)) }) : undefined);
    this.#disk = new DiskBudget({
      ...(stats ? { stats } : {}),
      ...(opts.diskFloorBytes !== undefined ? { floorBytes: opts.diskFloorBytes } : {}),
    });
  }

  /**
   * The disk health of the recordings folder as last measured (null before the first download): free bytes,
   * what running downloads reserved, the floor kept for the journal and the recordings waiting for space.
   */
  get diskStatus(): DiskStatus | null {
    return this.#disk.status;
  }

  /** The disk budget of the recordings folder, shared with whatever else writes there (web client uploads). */
  get diskBudget(): DiskBudget {
    return this.#disk;
  }

  /** Subscribes to new jobs and resumes every unfinished one (a job left `downloading` by a crash included). */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#stopped = false;
    this.#store.on('added', this.#onAdded);
    this.#clockWatch = watchWallClock((step) => void this.#wallClockStepped(step), { clock: this.#clock });
    this.#offQuiet = this.#opts.acksFirst?.onQuiet(() => this.#pump()) ?? null;
    // Keys only: a journal of 100,000 jobs is not read into memory to start.
    // A gone recording is looked at once more: the answer may have been a passing one.
    for (const key of this.#store.keys(['pending', 'downloading', 'gone'])) this.#enqueue(key);
    this.#sweeping = this.#sweep(this.#store.keys(['saved']));
  }

  /**
   * A crash after the store recorded a save but before its commit record and name reservation were removed
   * leaves both behind for good (the job never runs again): remove them. Cheap when there is nothing to remove.
   */
  async #sweep(keys: string[]): Promise<void> {
    for (const key of keys) {
      if (this.#stopped) return;
      const job = this.#store.get(key);
      if (!job?.path) continue;
      const finalPath = job.path;
      await releaseFinalName(finalPath);
      await forgetCommit(partPathFor(path.dirname(finalPath), job), this.#opts.fs).catch(() => undefined);
    }
  }

  /**
   * The wall clock stepped by `step` ms while this queue was not running (core/clock-anchor.ts): every unfinished
   * job's stored deadline is moved by it before any is read. Call before `start()`.
   */
  async moveStoredDeadlines(step: number): Promise<void> {
    for (const key of this.#store.keys(['pending', 'downloading', 'gone'])) {
      const job = this.#store.get(key);
      if (!job || this.#deadlines.has(key)) continue;
      await this.#write(key, { deadline: shiftIso(job.deadline, step) }).catch(() => undefined);
    }
  }

  /** When the next automatic attempt of `key` is due (ISO), or null when none is scheduled. */
  nextAttemptAt(key: string): string | null {
    const at = this.#retries.dueAt(key);
    return at === undefined ? null : this.#isoAt(at);
  }

  /**
   * The deadline of `key` as the wall clock now names it (ISO), from the monotonic one this queue keeps; null when
   * the job has not been looked at this run (its stored deadline is all there is). A wall-clock step moves it with
   * the clock at once, before the stored deadline is rewritten.
   */
  deadlineAt(key: string): string | null {
    const at = this.#deadlines.get(key);
    return at === undefined ? null : this.#isoAt(at);
  }

  #now(): number {
    return this.#clock.now();
  }

  /**
   * The job's deadline on the monotonic clock. Read from the stored wall time once (with the wall clock as it
   * stood at the last step check, so a step not yet seen changes nothing), then kept: a later step cannot move it.
   */
  #deadlineOf(job: Pick<RecordingJob, 'key' | 'deadline'>): number {
    let at = this.#deadlines.get(job.key);
    if (at === undefined) {
      this.#clockWatch?.check();
      const wall = Date.parse(job.deadline);
      at = this.#clockWatch ? this.#clockWatch.steps.monotonicAt(wall) : wall - this.#clock.wall() + this.#now();
      this.#deadlines.set(job.key, at);
    }
    return at;
  }

  /**
   * The wall clock stepped by `step` ms: every unfinished job's stored deadline is moved by it, so the journal
   * (health, the popover's countdown, a restart) names the same moment as before. In memory nothing moves.
   */
  async #wallClockStepped(step: number): Promise<void> {
    this.emit('clock-step', step);
    for (const key of this.#store.keys(['pending', 'downloading', 'gone'])) {
      if (this.#stopped) return;
      const job = this.#store.get(key);
      if (!job) continue;
      // One not read yet is read in the frame before the step (which is what it was written in).
      const at = this.#deadlines.get(key) ?? this.#deadlineOf(job) + step;
      this.#deadlines.set(key, at);
      await this.#write(key, { deadline: this.#isoAt(at) }).catch(() => undefined);
    }
  }

  /** Starts a `failed`, `expired` or `gone` job again now, or skips the wait of a job waiting for its next retry. */
  async retry(key: string): Promise<void> {
    const job = this.#store.get(key);
    if (!job || job.state === 'saved') return;
    if (this.#running.has(key)) {
      // Its attempt is ending (its failure is being written): tried again the moment it has ended.
      this.#retryAfter.add(key);
      return;
    }
    this.#retries.cancel(key);
    this.#sizeStrikes.delete(key);
    if (job.state === 'failed' || job.state === 'expired' || job.state === 'gone') {
      await this.#write(key, { state: 'pending', error: null, errorNotes: null, updatedAt: this.#iso() });
    }
    this.#enqueue(key);
  }

  /**
   * The producer removed a finished recording (failed, expired or gone) from the list: its part, if one is left,
   * holds disk others need and is deleted (a gone recording that comes back starts again). Resolves its size.
   */
  async releasePart(key: string): Promise<number> {
    const ended = (state: string) => ['failed', 'expired', 'gone'].includes(state);
    // Its `failed` event comes from inside the attempt: an attempt that has just ended lets go of the part first.
    const ending = this.#running.get(key);
    if (ending && ended(this.#store.get(key)?.state ?? '')) await ending.task.catch(() => undefined);
    const job = this.#store.get(key);
    if (!job || this.#running.has(key) || !ended(job.state)) return 0;
    const partPath = partPathFor(this.#jobFolders.get(key) ?? this.#folder, job);
    const bytes = (await sizeOf(downloadFs(this.#opts.fs), partPath).catch(() => null)) ?? 0;
    await discardPart(partPath, this.#opts.fs).catch(() => undefined);
    return bytes;
  }

  /** Stops every download (parts are kept), cancels retry timers and waits for the store writes. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#started = false;
    this.#clockWatch?.stop();
    this.#clockWatch = null;
    this.#store.off('added', this.#onAdded);
    this.#offQuiet?.();
    this.#offQuiet = null;
    this.#releaseHold();
    this.#retries.clear();
    this.#queue.clear();
    this.#twinWaiting.clear();
    for (const waiting of this.#claimWaiting.values()) waiting.abort();
    this.#claimWaiting.clear();
    const tasks = [...this.#running.values()];
    for (const { controller } of tasks) controller.abort();
    await Promise.allSettled(tasks.map((t) => t.task));
    while (this.#writes.size > 0) await Promise.allSettled([...this.#writes]);
    await this.#sweeping;
  }

  /** New downloads go to `folder`; running ones finish where they started. */
  setFolder(folder: string): void {
    this.#folder = folder;
  }

  /**
   * Who of a studio's receivers downloads each recording from now on (null: this receiver downloads all). Waits
   * begun under the previous setting are called off and looked at again.
   */
  setClaims(claims: DownloadClaims | null): void {
    this.#claims = claims;
    const waiting = [...this.#claimWaiting];
    this.#claimWaiting.clear();
    for (const [key, controller] of waiting) {
      controller.abort();
      this.#enqueue(key);
    }
  }

  setConcurrency(concurrency: number): void {
    this.#concurrency = Math.max(1, Math.floor(concurrency));
    this.#pump();
  }

  get folder(): string {
    return this.#folder;
  }

  /** Keys downloading right now. */
  get active(): string[] {
    return [...this.#running.keys()];
  }

  #onAdded = (job: RecordingJob): void => {
    if (job.state === 'pending' || job.state === 'downloading') this.#enqueue(job.key);
  };

  /** The wall time now, as stored and shown. */
  #iso(): string {
    return new Date(this.#clock.wall()).toISOString();
  }

  /** A monotonic moment as the wall time to store or show. */
  #isoAt(t: number): string {
    return isoAt(t, this.#clock);
  }

  #enqueue(key: string): void {
    if (this.#stopped || this.#running.has(key) || this.#queue.has(key) || this.#retries.has(key)) return;
    if (this.#twinWaiting.has(key) || this.#claimWaiting.has(key)) return;
    this.#queue.add(key);
    this.#pump();
  }

  #pump(): void {
    if (this.#heldForAcks()) return;
    while (!this.#stopped && this.#running.size < this.#concurrency && this.#queue.size > 0) {
      const key = this.#queue.values().next().value as string;
      this.#queue.delete(key);
      const job = this.#store.get(key);
      if (!job || (job.state !== 'pending' && job.state !== 'downloading' && job.state !== 'gone')) continue;
      const twin = this.#store.twinOf?.(key);
      if (twin !== undefined && this.#running.has(twin)) {
        this.#twinWaiting.add(key);
        continue;
      }
      const controller = new AbortController();
      const task = this.#attempt(job, controller)
        .catch((error: unknown) => {
          // The store itself failed (e.g. its disk is full). The job keeps its last durable state; try again
          // later, when a commit record (if the file was saved) lets the next attempt finish without a download.
          const delay = this.#backoff.maxMs;
          this.emit('failed', {
            job,
            error: error as Error,
            willRetry: !this.#stopped,
            nextAttemptAt: this.#stopped ? null : this.#isoAt(this.#now() + delay),
          });
          this.#schedule(key, delay);
        })
        .finally(() => {
          this.#running.delete(key);
          // A claim this receiver took for the download is no longer renewed for it (its publish takes it up).
          this.#claims?.release(job);
          const twin = this.#store.twinOf?.(key);
          if (twin !== undefined && this.#twinWaiting.delete(twin)) this.#enqueue(twin);
          this.#disk.release(key);
          this.#wakeDiskWaiters(key);
          if (this.#retryAfter.delete(key)) void this.retry(key);
          this.#pump();
        });
      this.#running.set(key, { controller, task });
    }
  }

  /**
   * Whether queued downloads wait now because webhooks are waiting for their answer (see acksFirst). The wait
   * ends when the receiver is quiet (its onQuiet pumps again) or ACKS_FIRST_MAX_HOLD_MS after it began; a burst
   * that goes on longer has its downloads run beside it until it ends, and the next burst is held anew.
   */
  #heldForAcks(): boolean {
    const gate = this.#opts.acksFirst;
    if (!gate || this.#stopped) return false;
    if (!gate.busy()) {
      this.#releaseHold();
      return false;
    }
    if (this.#queue.size === 0 || this.#running.size >= this.#concurrency) return false;
    const now = this.#now();
    this.#heldSince ??= now;
    const left = this.#heldSince + (this.#opts.acksFirstMaxHoldMs ?? ACKS_FIRST_MAX_HOLD_MS) - now;
    if (left <= 0) return false;
    if (!this.#holdTimer) {
      this.#holdTimer = setTimeout(() => {
        this.#holdTimer = null;
        this.#pump();
      }, left);
      this.#holdTimer.unref();
    }
    return true;
  }

  #releaseHold(): void {
    this.#heldSince = null;
    if (this.#holdTimer) clearTimeout(this.#holdTimer);
    this.#holdTimer = null;
  }

  #write(key: string, patch: Parameters<JobStore['update']>[1]): Promise<RecordingJob> {
    const write = this.#store.update(key, patch);
    this.#writes.add(write);
    void write.then(
      () => this.#writes.delete(write),
      () => this.#writes.delete(write),
    );
    return write;
  }

  /** A download ended and its space may be free: the recordings waiting for space look again, first come first. */
  #wakeDiskWaiters(ended: string): void {
    for (const key of this.#disk.waitingKeys) {
      if (this.#stopped) return;
      if (key === ended || !this.#retries.has(key)) continue;
      this.#retries.cancel(key);
      this.#enqueue(key);
    }
  }

  #announceDisk(): void {
    const status = this.#disk.status;
    if (!status) return;
    if (status.state === 'ok' && this.#diskState === 'ok') return;
    this.#diskState = status.state;
    this.emit('disk', { ...status });
  }

  async #attempt(initial: RecordingJob, controller: AbortController): Promise<void> {
    const signal = controller.signal;
    const key = initial.key;
    // A retry continues in the folder its part is in, even if the folder setting changed meanwhile.
    const folder = this.#jobFolders.get(key) ?? this.#folder;
    this.#jobFolders.set(key, folder);
    const deadline = this.#deadlineOf(initial);
    const partPath = partPathFor(folder, initial);
    const ext = extFromUrl(initial.url);
    const name = renderFileName(this.#template, { channelId: initial.channelId, receivedAt: initial.receivedAt, ext });
    const base = name.slice(0, name.length - ext.length);
    const strikes = this.#sizeStrikes.get(key);
    const maxBytes = this.#opts.maxRecordingBytes ?? DEFAULT_MAX_RECORDING_BYTES;
    const plausible = initial.announcedBytes !== null && initial.announcedBytes <= maxBytes;
    const trustAnnounced = plausible && (!strikes || strikes[1] < ANNOUNCED_SIZE_STRIKES);

    // Its twin saved the recording already (while this one waited, or before a restart came between the two).
    const twinKey = this.#store.twinOf?.(key);
    const twin = twinKey === undefined ? undefined : this.#store.get(twinKey);
    if (twin?.state === 'saved' && twin.path !== null && (await this.#sameObjectAs(initial, twin))) {
      await this.#savedByTwin(initial, twin);
      return;
    }

    // Another receiver of the studio downloads it: waited for without a slot (see #waitForClaimant).
    const claims = this.#ownDownloads.has(key) ? null : this.#claims;
    if (claims) {
      // Outlives this attempt (its slot is given back): called off by stop() or setClaims().
      const waiting = new AbortController();
      const answer = await claims.claim(initial, folder, AbortSignal.any([signal, waiting.signal]));
      if (answer.go === 'wait') {
        await this.#waitForClaimant(initial, folder, waiting, answer.settled);
        return;
      }
    }
    // Space first: a download that would not fit beside the running ones waits instead of starting (and
    // stopping half way with the space another one needs). Waiting costs no attempt.
    const need = await bytesToWrite(plausible ? initial.announcedBytes : null, partPath);
    const short = await this.#disk.reserve(key, folder, need, partPath);
    this.#announceDisk();
    if (short) {
      await this.#handleFailure(initial, new DiskFullError(folder, short.needed, short.free), deadline, partPath, null);
      return;
    }

    const stallRule = this.#opts.stallRule === undefined ? DEFAULT_STALL_RULE : this.#opts.stallRule;
    let job = await this.#write(key, {
      state: 'downloading',
      attempts: initial.attempts + 1,
      updatedAt: this.#iso(),
    });
    let lastCheckpoint = 0;
    let checkpoint: Promise<unknown> | null = null;
    /** What this attempt did: whether it wrote bytes (the backoff starts again), and its last progress. */
    const done: AttemptProgress = { startedAt: this.#now(), written: 0, bytes: null, total: null };
    // Whatever the reservations say, another program may fill the disk: pause above the floor.
    const watch = this.#disk.watch(key, folder, (free) => {
      if (!signal.aborted) controller.abort(new DiskFullError(folder, null, free));
    });
    try {
      // Not a recursive mkdir: on a file system that refuses folders it would spin (see folder-check.ts).
      await ensureWritableFolder(folder, { source: 'the recordings folder', probe: false });
      await refusePlantedLinks(partPath);
      const result = await downloadInThread({
        url: job.url,
        partPath,
        // Named once verified, after the bytes themselves say what the file is (the URL only suggested it).
        dest: async () => reserveFinalName(folder, base, (await sniffPart(partPath)) ?? ext, key),
        expectedBytes: trustAnnounced ? job.announcedBytes : null,
        announcedBytes: plausible ? job.announcedBytes : null,
        repeatOf: this.#md5Misses.get(key) ?? null,
        maxBytes,
        policy: this.#policy,
        signal,
        keepCommitRecord: true,
        ...(this.#opts.segments !== undefined ? { segments: this.#opts.segments } : {}),
        ...(this.#opts.segmentThresholdBytes !== undefined
          ? { segmentThresholdBytes: this.#opts.segmentThresholdBytes }
          : {}),
        ...this.#opts.ramp,
        ...(this.#opts.timeoutMs !== undefined ? { timeoutMs: this.#opts.timeoutMs } : {}),
        ...(stallRule ? { stallRule: { ...stallRule, deadlineAt: deadline, now: () => this.#now() } } : {}),
        ...(this.#opts.fs ? { fs: this.#opts.fs } : {}),
        ...(this.#opts.progressIntervalMs !== undefined ? { progressIntervalMs: this.#opts.progressIntervalMs } : {}),
        // The origin's Date on an answer that serves the file: the service's deadline is learned from the first.
        onServiceDate: (date) => void this.#serviceDeadlineOf(job, date, deadline),
        // The free-space watch looks every `watch.every` bytes: the engine's thread tells the writes no later.
        bytesWrittenEvery: watch.every,
        onBytesWritten: (bytes) => {
          done.written += bytes;
          watch.wrote(bytes);
        },
        onProgress: (p) => {
          done.bytes = p.bytes;
          done.total = p.total;
          // The deadline as the service's clock may have set it right during this attempt.
          const until = this.#deadlines.get(key) ?? deadline;
          this.emit('progress', { key, channelId: job.channelId, deadline: this.#isoAt(until), ...p });
          const now = this.#now();
          if (!checkpoint && now - lastCheckpoint >= (this.#opts.checkpointIntervalMs ?? 1000)) {
            lastCheckpoint = now;
            checkpoint = this.#write(key, { bytes: p.bytes, totalBytes: p.total })
              .catch(() => undefined)
              .finally(() => {
                checkpoint = null;
              });
          }
        },
      });
      await checkpoint;
      job = await this.#write(key, {
        state: 'saved',
        path: result.path,
        bytes: result.bytes,
        totalBytes: result.bytes,
        checks: result.checks,
        // Which object version this is: a later webhook for the same URL is a duplicate only while it names it.
        origin: { etag: result.etag, lastModified: result.lastModified, bytes: result.bytes },
        error: null,
        errorNotes: null,
        updatedAt: this.#iso(),
      });
      // Only now that the store knows the path may the records that prevent a second copy go.
      await releaseFinalName(result.path);
      await forgetCommit(partPath, this.#opts.fs).catch(() => undefined);
      this.#forgetAttempts(key);
      this.#jobFolders.delete(key);
      this.emit('saved', { job, path: result.path, bytes: result.bytes });
      const waiting = this.#store.twinOf?.(key);
      const twin = waiting === undefined || this.#running.has(waiting) ? undefined : this.#store.get(waiting);
      if (twin && twin.state !== 'saved') {
        if (await this.#sameObjectAs(twin, job)) await this.#savedByTwin(twin, job).catch(() => undefined);
        else {
          // Another recording after all: it tries on its own now (rather than at its next retry, or never: the link
          // it waited on is gone).
          this.#retries.cancel(twin.key);
          this.#twinWaiting.delete(twin.key);
          this.#enqueue(twin.key);
        }
      }
    } catch (error) {
      await checkpoint;
      await watch.settled();
      const reason: unknown = signal.reason;
      if (signal.aborted && reason instanceof DiskFullError && !this.#stopped) {
        await this.#handleFailure(job, reason, deadline, partPath, done);
        return;
      }
      if (signal.aborted || isAbortError(error)) {
        await this.#write(key, { state: 'pending', updatedAt: this.#iso() });
        return;
      }
      const failure = error instanceof Error ? error : new Error(String(error));
      await this.#handleFailure(job, failure, deadline, partPath, done);
    }
  }

  /**
   * The job waits (pending, its reason saying why) while another receiver downloads it: saved by the claimant's
   * published copy, or queued again when the claim lapsed (the claimant died) or the copy could not be saved.
   */
  async #waitForClaimant(
    job: RecordingJob,
    folder: string,
    waiting: AbortController,
    settled: Promise<{ path: string; bytes: number } | null>,
  ): Promise<void> {
    const key = job.key;
    this.#claimWaiting.set(key, waiting);
    // A claimant that keeps its claim and never publishes (its team store refuses it) must not cost this
    // receiver the recording: once half the time left before the origin deletes it is gone, it is downloaded here.
    const giveUp = setTimeout(
      // Still in its slot when the wait began a moment before the deadline: queued again once the slot is free.
      () => void Promise.resolve(this.#running.get(key)?.task).then(() => this.#stopWaiting(key, waiting)),
      Math.max(0, (this.#deadlineOf(job) - this.#now()) / 2),
    );
    giveUp.unref();
    waiting.signal.addEventListener('abort', () => clearTimeout(giveUp), { once: true });
    await this.#write(key, { state: 'pending', ...stored(note('studioClaimedElsewhere')), updatedAt: this.#iso() });
    void settled
      .catch(() => null)
      .then(async (copy) => {
        clearTimeout(giveUp);
        // The attempt that began the wait gives its slot back first (else the job could not be queued again).
        await this.#running.get(key)?.task;
        if (waiting.signal.aborted || this.#stopped) return;
        if (copy) {
          const saved = await this.#write(key, {
            state: 'saved',
            path: copy.path,
            bytes: copy.bytes,
            totalBytes: copy.bytes,
            error: null,
            errorNotes: null,
            updatedAt: this.#iso(),
          });
          this.#claimWaiting.delete(key);
          this.#forgetAttempts(key);
          this.#jobFolders.delete(key);
          await discardPart(partPathFor(folder, job), this.#opts.fs).catch(() => undefined);
          this.emit('saved', { job: saved, path: copy.path, bytes: copy.bytes });
          return;
        }
        this.#claimWaiting.delete(key);
        this.#enqueue(key);
      })
      .catch(() => {
        // The store refused the write: looked at again later.
        this.#claimWaiting.delete(key);
        this.#schedule(key, this.#backoff.maxMs);
      });
  }

  /** Waited too long for another receiver: downloaded here, whatever the claim says. */
  #stopWaiting(key: string, waiting: AbortController): void {
    if (this.#claimWaiting.get(key) !== waiting) return;
    this.#claimWaiting.delete(key);
    waiting.abort();
    this.#ownDownloads.add(key);
    this.#enqueue(key);
  }

  /**
   * After a failed attempt: final (refused, or known gone), or the next attempt scheduled. `deadline` is on the
   * monotonic clock; `done` is what the attempt achieved (null when it never started).
   */
  async #handleFailure(
    job: RecordingJob,
    error: Error,
    attemptDeadline: number,
    partPath: string,
    done: AttemptProgress | null,
  ): Promise<void> {
    const key = job.key;
    const now = this.#now();
    const cause = describe(error);

    if (error instanceof DownloadRefusedError) {
      // Its part stays where it is (its folder too) until Remove releases it.
      this.#forgetAttempts(key);
      const failed = await this.#write(key, { state: 'failed', ...stored(cause), updatedAt: this.#iso() });
      this.emit('failed', { job: failed, error, willRetry: false, nextAttemptAt: null });
      return;
    }

    const gone = error instanceof HttpStatusError && error.gone;
    // The service's clock (its `Date` header) against the deadline on that same clock, never against ours.
    const serviceDate = error instanceof HttpStatusError ? error.serviceDate : null;
    const serviceDeadline = await this.#serviceDeadlineOf(job, serviceDate, attemptDeadline);
    // The monotonic deadline, as the service's clock may just have set it right (see #serviceDeadlineOf).
    const deadline = this.#deadlines.get(key) ?? attemptDeadline;
    // Are the service's 6 hours over? By its own clock when it dated this answer and its deadline is known (no step of
    // the local clock, while running or while stopped, changes that verdict); else by the monotonic deadline.
    const over =
      serviceDate !== null && serviceDeadline !== undefined ? serviceDate >= serviceDeadline : now >= deadline;

    if (gone && over) {
      // The origin says the file is gone, and its 6 hours are over (on its clock, or on the monotonic one when it
      // gave no Date): it is known gone.
      this.#forgetAttempts(key);
      this.#announceDisk();
      const partBytes = await sizeOf(downloadFs(this.#opts.fs), partPath).catch(() => null);
      // A time the service has reached: its deadline on its own clock, or the moment it said so when that is earlier
      // (a deadline read back after a step while Tally was stopped may lie ahead of it); ours without a Date.
      const at = formatTime(
        serviceDate !== null && serviceDeadline !== undefined
          ? Math.min(serviceDate, serviceDeadline)
          : wallAt(deadline, this.#clock),
      );
      const why = [note('recordingGone', { at })];
      // The file is gone from the service: its part can never be finished, and it holds disk others need.
      if (partBytes !== null) {
        await discardPart(partPath, this.#opts.fs).catch(() => undefined);
        if (partBytes > 0) why.push(note('partialReleased', { size: formatBytes(partBytes) }));
      }
      this.#jobFolders.delete(key);
      const reason = stored(...why);
      const expired = await this.#write(key, { state: 'expired', ...reason, updatedAt: this.#iso() });
      this.emit('expired', { job: expired, reason: reason.error });
      return;
    }

    if (gone) {
      // Said as gone (not "expires in 5 h, will try again"). The first look again comes as soon as any retry would
      // (the file may not have been published yet); later ones less and less often, until the deadline.
      const looks = this.#goneLooks(key);
      const goneMs = this.#opts.goneRecheckMs ?? GONE_RECHECK_MS;
      const wait =
        looks === 0
          ? Math.max(1, backoffDelay(1, this.#backoff, this.#random))
          : backoffDelay(looks, { baseMs: goneMs, maxMs: GONE_RECHECK_MAX_MS });
      const nextAt = now < deadline ? Math.min(deadline, now + wait) : now + wait;
      const why = stored(note('recordingGoneNow', { status: error.status, detail: error.detail || 'no detail' }));
      const goneJob = await this.#write(key, { state: 'gone', ...why, updatedAt: this.#iso() });
      this.#schedule(key, nextAt - now);
      this.emit('failed', { job: goneJob, error, willRetry: true, nextAttemptAt: this.#isoAt(nextAt) });
      return;
    }
    this.#goneCount.delete(key);

    if (error instanceof VerificationError && error.sha256) this.#md5Misses.set(key, error.sha256);
    // Only a size the server gave counts against the announcement (a cut one is where Tally stopped reading).
    if (error instanceof VerificationError && error.kind === 'announced-size' && !error.cut) {
      const actual = Number(error.actual);
      const previous = this.#sizeStrikes.get(key);
      this.#sizeStrikes.set(key, [actual, previous && previous[0] === actual ? previous[1] + 1 : 1]);
    }

    if (error instanceof DiskFullError) {
      // Not a retry with backoff: the next download to finish wakes this one (see #wakeDiskWaiters), and a
      // look every diskRecheckMs notices space freed by someone else. Its part is kept.
      const why = stored(await this.#disk.wait(key, error));
      this.#announceDisk();
      const recheck = now + (this.#opts.diskRecheckMs ?? Math.min(30_000, this.#backoff.maxMs));
      const nextAt = now < deadline ? Math.min(deadline, recheck) : recheck;
      const pending = await this.#write(key, { state: 'pending', ...why, updatedAt: this.#iso() });
      this.emit('failed', { job: pending, error, willRetry: true, nextAttemptAt: this.#isoAt(nextAt) });
      this.#schedule(key, nextAt - now);
      return;
    }

    const nextAt = this.#nextAttempt(key, now, deadline, done);
    const pending = await this.#write(key, { state: 'pending', ...stored(cause), updatedAt: this.#iso() });
    this.#schedule(key, nextAt - now);
    this.emit('failed', { job: pending, error, willRetry: true, nextAttemptAt: this.#isoAt(nextAt) });
  }

  /**
   * The service's deadline of `job` on the service's own clock (ms since the epoch on the origin's `Date`), or
   * undefined while no answer of the origin was dated. Learned once, from the first dated answer (`serviceDate`): that
   * answer's time plus what is left of the monotonic deadline; kept in the journal, so a restart judges the 6 hours
   * by it too, whatever step the local wall clock made while Tally was stopped (on another boot, where the clock
   * anchor cannot see it). Never compared with the local wall clock: only with the origin's later `Date`s.
   *
   * The first dated answer of a run that finds the deadline known also sets the monotonic deadline right when the
   * two disagree (a step made while stopped that the clock anchor could not see moved the journal's wall-clock
   * deadline): what the service's clock says is left, from now, and the journal's deadline with it, so the
   * countdown, health and the pace of retries name the moment the service deletes the file. Once per run: an origin
   * whose Date stood still could otherwise push the deadline on for ever.
   */
  async #serviceDeadlineOf(
    job: Pick<RecordingJob, 'key' | 'serviceDeadline'>,
    serviceDate: number | null,
    deadline: number,
  ): Promise<number | undefined> {
    const key = job.key;
    let known = this.#serviceDeadlines.get(key);
    if (known === undefined) {
      const stored = job.serviceDeadline ? Date.parse(job.serviceDeadline) : Number.NaN;
      if (Number.isFinite(stored)) this.#serviceDeadlines.set(key, (known = stored));
    }
    if (known !== undefined) {
      if (serviceDate !== null && !this.#serviceChecked.has(key)) {
        this.#serviceChecked.add(key);
        // Never more than the service ever keeps a file from now, whatever its clock said.
        const corrected = this.#now() + Math.min(known - serviceDate, RETENTION_MS);
        if (Math.abs(corrected - (this.#deadlines.get(key) ?? deadline)) > SERVICE_CLOCK_TOLERANCE_MS) {
          this.#deadlines.set(key, corrected);
          await this.#write(key, { deadline: this.#isoAt(corrected) }).catch(() => undefined);
        }
      }
      return known;
    }
    if (serviceDate === null) return undefined;
    this.#serviceChecked.add(key);
    const learned = serviceDate + (deadline - this.#now());
    this.#serviceDeadlines.set(key, learned);
    // A journal that cannot take it costs only judging by the monotonic deadline after a restart.
    await this.#write(key, { serviceDeadline: new Date(learned).toISOString() }).catch(() => undefined);
    return learned;
  }

  /**
   * When a job that failed for a passing reason is tried again (monotonic ms). An attempt that wrote bytes starts
   * the backoff again from its first step (a link cut every 256 KiB is progress, not a failing host). Before the
   * deadline the wait never goes past the last moment the rest could still be fetched at the rate seen, nor past
   * the deadline itself; after it, the origin still decides, at the backoff's slowest pace.
   */
  #nextAttempt(key: string, now: number, deadline: number, done: AttemptProgress | null): number {
    const wrote = done !== null && done.written > 0;
    const streak = wrote ? 1 : (this.#failStreak.get(key) ?? 0) + 1;
    this.#failStreak.set(key, streak);
    if (wrote && done.total !== null && done.bytes !== null && now > done.startedAt) {
      this.#pace.set(key, {
        rate: (done.written * 1000) / (now - done.startedAt),
        left: Math.max(0, done.total - done.bytes),
      });
    }
    const wait = Math.max(1, backoffDelay(streak, this.#backoff, this.#random));
    if (now >= deadline) return now + Math.max(wait, this.#backoff.maxMs);
    const pace = this.#pace.get(key);
    // Half as long again as the rest took at that pace: a rate seen once is no promise.
    const latest = pace && pace.rate > 0 ? deadline - 1.5 * (pace.left / pace.rate) * 1000 : deadline;
    // Once that point has passed, hurrying no longer helps: the plain backoff (never a retry every millisecond).
    return latest > now ? Math.max(now + 1, Math.min(now + wait, latest)) : now + wait;
  }

  /**
   * `job`'s twin saved their recording: `job` is saved by the same file, with no download, no second file and no
   * `saved` event (the recording was announced once). Whatever it was waiting for is called off, and a part it
   * left (a forged form's, or the same bytes from the other URL) is deleted.
   */
  async #savedByTwin(job: RecordingJob, saver: RecordingJob): Promise<void> {
    const key = job.key;
    this.#retries.cancel(key);
    this.#queue.delete(key);
    this.#twinWaiting.delete(key);
    this.#retryAfter.delete(key);
    try {
      await this.#write(key, {
        state: 'saved',
        path: saver.path,
        bytes: saver.bytes,
        totalBytes: saver.bytes,
        ...(saver.checks ? { checks: saver.checks } : {}),
        ...(saver.origin ? { origin: saver.origin } : {}),
        error: null,
        errorNotes: null,
        savedBy: saver.key,
        updatedAt: this.#iso(),
      });
    } catch (error) {
      // The store refused it: the job keeps its state, and its next look finds the twin saved.
      this.#schedule(key, this.#backoff.maxMs);
      throw error;
    }
    this.#forgetAttempts(key);
    const partPath = partPathFor(this.#jobFolders.get(key) ?? this.#folder, job);
    this.#jobFolders.delete(key);
    await discardPart(partPath, this.#opts.fs).catch(() => undefined);
  }

  /**
   * Whether `job`'s URL names the object its twin `saver` saved (issue 31): twins are one recording in both webhook
   * forms only while both name the same object version, never a new broadcast of a reused channel ID. One ranged
   * request to `job`'s URL, no body; asked until the origin answers. A URL that is gone (a forged or withdrawn
   * form) or a save with no version kept is taken as the same, as before; a different version is not, for good.
   * No answer (`unknown`: a timeout, a 5xx) is not the same for now, and nothing is kept of it: the job tries on its
   * own and asks again at its next attempt (a passing 503 once wrote "another recording" for ever: two files).
   */
  async #sameObjectAs(job: RecordingJob, saver: RecordingJob): Promise<boolean> {
    const known = this.#twinVerdicts.get(job.key);
    if (known !== undefined) return known;
    let same = true;
    if (saver.origin) {
      const seen = await probeOrigin(job.url, this.#policy, { timeoutMs: this.#opts.timeoutMs ?? 10_000 });
      if (seen.kind === 'unknown') return false;
      same = seen.kind === 'gone' || sameVersion(saver.origin, seen) === true;
    }
    if (!same) {
      this.#twinVerdicts.set(job.key, false);
      // Written, so the pair is two rows and two counts from now on, and a restart does not ask again.
      await this.#write(job.key, { twinDiffers: true }).catch(() => undefined);
    }
    return same;
  }

  /**
   * What is kept about a job from one attempt to the next (size strikes, a hash that did not match its ETag,
   * gone answers, its disk reservation): dropped at once, the same way, whichever way the job ended.
   */
  #forgetAttempts(key: string): void {
    this.#ownDownloads.delete(key);
    this.#sizeStrikes.delete(key);
    this.#md5Misses.delete(key);
    this.#goneCount.delete(key);
    this.#failStreak.delete(key);
    this.#pace.delete(key);
    this.#serviceDeadlines.delete(key);
    this.#serviceChecked.delete(key);
    this.#deadlines.delete(key);
    this.#disk.forget(key);
  }

  /** How many gone answers in a row this job has had before this one. */
  #goneLooks(key: string): number {
    const looks = this.#goneCount.get(key) ?? 0;
    this.#goneCount.set(key, looks + 1);
    return looks;
  }

  #schedule(key: string, delayMs: number): void {
    if (this.#stopped) return;
    this.#retries.add(key, this.#now() + Math.max(0, delayMs));
  }
}
