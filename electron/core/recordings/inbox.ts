/**
 * The durable inbox: an append-only JSON-lines journal of recording jobs. A webhook is acknowledged only after
 * its job is on disk (fsync'd), so a crash, a full disk or a power cut never turns an acknowledged webhook into
 * a lost recording. Every line is a full snapshot of one job (`{"v":1,"job":{...}}`); replay keeps the last
 * snapshot per key, so a damaged line costs at most one intermediate state.
 *
 * Throughput comes from group commit: appends queued while an fsync is in flight are written with one write and
 * one fsync in the next batch, so the cost of an fsync is shared by every webhook that arrived meanwhile.
 *
 * Dedupe: the key is sha256 of the normalised URL (scheme and host lowercased, default port dropped, query
 * parameters sorted but kept, since presigned S3 URLs differ only there; fragment dropped). A secondary index
 * (channel ID + host + file name) catches one more case: the older webhook shape announced URLs without the
 * random path segment, so the same recording may arrive as `/svc/<ch>.mp4` and `/svc/<rand>/<ch>.mp4`. Two URLs
 * are treated as one recording only when they differ by exactly that one segment and arrive within the
 * retention window. Two new-shape URLs with the same channel ID stay separate jobs: clients reuse channel IDs
 * (a broadcast restarted after a drop), and downloading twice is better than losing a recording.
 */
import { EventEmitter } from 'node:events';
import { open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { TallyError } from '../errors.js';
import { aliasKey, differByRandomSegment, recordingKey } from './recording-key.js';
import { RETENTION_MS } from './types.js';
import type { JobStore, NewRecording, RecordingJob } from './types.js';
import { syncDir } from '../durable-fs.js';
import { appendFully, openJsonLines } from '../jsonl-journal.js';
import { describeError, silentLogger, type Logger } from '../logger.js';

/** The part of a FileHandle the journal uses; `wrapJournal` may replace it (test seam for failing disks). */
export interface JournalFile {
  write(buffer: Buffer, offset: number, length: number): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

export interface InboxOptions {
  /** Rewrite the journal once it holds more lines than this and more than twice the number of jobs. */
  compactAfterLines?: number;
  /** Test seam: wraps every journal handle, e.g. to inject ENOSPC or to hold an fsync. */
  wrapJournal?: (file: JournalFile) => JournalFile;
  /**
   * Finished jobs (saved, expired, failed) older than this are dropped when the journal is rewritten, so
   * the journal and every `list()` stay small on an always-on machine. Default 30 days: long past the
   * service's 6-hour retention, so no duplicate webhook can still need them.
   */
  keepFinishedMs?: number;
  /** Clock for pruning (tests). */
  now?: () => number;
  /** Where a failed background compaction is reported (the journal itself stays valid). */
  log?: Logger;
}

/** What `open` found while replaying the journal. */
export interface ReplayReport {
  jobs: number;
  lines: number;
  /** Complete lines that were not valid JSON or not a job (skipped, never fatal). */
  skippedLines: number;
  /** Bytes of an unterminated, unparsable last line cut off after a crash. */
  truncatedBytes: number;
}

/** The journal could not be written: nothing in the affected batch was acknowledged. */
export class JournalWriteError extends TallyError {
  readonly code = 'journal_write';
}

/** `update` was given a key the inbox does not hold. */
export class UnknownJobError extends TallyError {
  readonly code = 'unknown_job';
  constructor(readonly key: string) {
    super(`No recording with key ${key} is known.`);
  }
}

export type JobPatch = Parameters<JobStore['update']>[1];

interface InboxEvents {
  added: [job: RecordingJob];
  updated: [job: RecordingJob];
}

interface Pending {
  line: string;
  /** Runs inside the writer right after the fsync, before anyone else can observe the journal. */
  apply: () => void;
  resolve: () => void;
  reject: (error: Error) => void;
}

export const JOURNAL_FILE = 'inbox.jsonl';
const DEFAULT_COMPACT_AFTER_LINES = 10_000;
const DEFAULT_KEEP_FINISHED_MS = 30 * 24 * 60 * 60 * 1000;
/** Rewrite at open when at least this many finished jobs are due for pruning. */
const PRUNE_AT_OPEN = 1_000;
/** Bounds the latency of one batch under a flood: a batch writes at most this many bytes. */
const MAX_BATCH_BYTES = 1 << 20;

const jobSchema = z.looseObject({
  key: z.string().min(1),
  channelId: z.string(),
  url: z.string(),
  receivedAt: z.string(),
  deadline: z.string(),
  announcedBytes: z.number().nullable(),
  duration: z.string().nullable(),
  thumbnail: z.string().nullable(),
  shape: z.string(),
  state: z.enum(['pending', 'downloading', 'saved', 'failed', 'expired']),
  attempts: z.number().int().nonnegative(),
  path: z.string().nullable(),
  bytes: z.number().nullable(),
  totalBytes: z.number().nullable(),
  error: z.string().nullable(),
  updatedAt: z.string(),
});
const lineSchema = z.object({ v: z.literal(1), job: jobSchema });

/** Whether the download manager is done with a job. */
export function isTerminal(job: RecordingJob): boolean {
  return job.state === 'saved' || job.state === 'expired' || job.state === 'failed';
}

export { recordingKey } from './recording-key.js';

/** The durable job journal; see the file comment for the format and dedupe rules. */
export class Inbox extends EventEmitter<InboxEvents> implements JobStore {
  readonly path: string;
  readonly replay: ReplayReport;
  readonly #dir: string;
  readonly #options: InboxOptions;
  readonly #jobs = new Map<string, RecordingJob>();
  /** channel + host + file name → keys, for the old/new URL shape dedupe. */
  readonly #aliases = new Map<string, string[]>();
  readonly #adding = new Map<string, Promise<RecordingJob>>();
  readonly #chains = new Map<string, Promise<unknown>>();
  #file: JournalFile;
  #queue: Pending[] = [];
  #compactWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  #pumping: Promise<void> | null = null;
  /** Bytes known to be complete and durable at the end of the journal. */
  #size: number;
  #lines: number;
  /** A failed write may have left a partial line that could not be cut off: start the next batch on a new line. */
  #dirtyTail = false;
  #closed = false;
  /** Jobs not yet saved, expired or failed, kept in step with every change (read on every webhook). */
  #unfinished = 0;

  private constructor(dir: string, file: JournalFile, replay: ReplayReport, size: number, options: InboxOptions) {
    super();
    this.#dir = dir;
    this.path = join(dir, JOURNAL_FILE);
    this.#file = file;
    this.replay = replay;
    this.#size = size;
    this.#lines = replay.lines;
    this.#options = options;
  }

  /**
   * Opens (creating if needed) `dir/inbox.jsonl` and replays it. A torn last line is cut off (or completed if
   * it parses), damaged lines in the middle are skipped and counted in `replay.skippedLines`.
   */
  static async open(dir: string, options: InboxOptions = {}): Promise<Inbox> {
    const snapshots = new Map<string, RecordingJob>();
    const { file, size, replay } = await openJsonLines(
      dir,
      JOURNAL_FILE,
      (text) => {
        const job = parseLine(text);
        if (job) snapshots.set(job.key, job);
        return job !== null;
      },
      options.wrapJournal,
    );
    const report: ReplayReport = { jobs: 0, ...replay };
    const inbox = new Inbox(dir, file, report, size, options);
    for (const job of snapshots.values()) inbox.#remember(job);
    report.jobs = snapshots.size;
    if (inbox.#shouldCompact() || inbox.#prunable().length >= PRUNE_AT_OPEN) {
      // The appended journal stays valid without the rewrite, which is tried again later; say why it failed.
      inbox.compact().catch((error: unknown) => {
        (options.log ?? silentLogger).warn(`journal: compacting at open failed: ${describeError(error)}`);
      });
    }
    return inbox;
  }

  /**
   * Adds a recording unless it is already known. Resolves only after the job is fsync'd.
   * @throws JournalWriteError when the journal cannot be written (the webhook must not be acknowledged).
   */
  async add(rec: NewRecording, now: Date = new Date()): Promise<{ job: RecordingJob; duplicate: boolean }> {
    this.#assertOpen();
    const key = recordingKey(rec.url);
    const known = this.#jobs.get(key) ?? this.#aliasOf(rec, now);
    if (known) return { job: { ...known }, duplicate: true };
    const inFlight = this.#adding.get(key);
    if (inFlight) return { job: { ...(await inFlight) }, duplicate: true };

    const receivedAt = now.toISOString();
    const job: RecordingJob = {
      key,
      channelId: rec.channelId,
      url: rec.url,
      receivedAt,
      deadline: new Date(now.getTime() + RETENTION_MS).toISOString(),
      announcedBytes: rec.announcedBytes,
      duration: rec.duration,
      thumbnail: rec.thumbnail,
      shape: rec.shape,
      state: 'pending',
      attempts: 0,
      path: null,
      bytes: null,
      totalBytes: rec.announcedBytes,
      error: null,
      updatedAt: receivedAt,
    };
    const written = this.#append(job, () => this.#remember(job)).then(() => job);
    this.#adding.set(key, written);
    try {
      await written;
    } finally {
      this.#adding.delete(key);
    }
    this.emit('added', { ...job });
    return { job: { ...job }, duplicate: false };
  }

  /**
   * Durably applies a patch (identity fields are ignored) and returns the updated job. Updates to one key are
   * applied in call order; `updatedAt` defaults to now.
   */
  update(key: string, patch: JobPatch): Promise<RecordingJob> {
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.#applyUpdate(key, patch));
    this.#chains.set(key, next);
    void next.then(
      () => this.#chains.get(key) === next && this.#chains.delete(key),
      () => this.#chains.get(key) === next && this.#chains.delete(key),
    );
    return next;
  }

  get(key: string): RecordingJob | undefined {
    const job = this.#jobs.get(key);
    return job ? { ...job } : undefined;
  }

  /** Every job, oldest first. */
  list(): RecordingJob[] {
    return [...this.#jobs.values()].map((job) => ({ ...job })).sort(byReceivedAt);
  }

  /** How many jobs are not finished yet (constant time: the receiver asks on every webhook). */
  get unfinished(): number {
    return this.#unfinished;
  }

  /** Jobs the download manager still has to finish, oldest first. */
  pending(): RecordingJob[] {
    return this.list().filter((job) => !isTerminal(job));
  }

  /** Rewrites the journal with one line per job: tmp file, fsync, rename, fsync of the folder. */
  compact(): Promise<void> {
    if (this.#closed) return Promise.reject(new JournalWriteError('The recordings inbox is closed.'));
    return new Promise((resolve, reject) => {
      this.#compactWaiters.push({ resolve, reject });
      this.#kick();
    });
  }

  /** Waits for queued writes, then closes the journal. Later calls to add/update reject. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#pumping) await this.#pumping;
    await this.#file.close();
  }

  async #applyUpdate(key: string, patch: JobPatch): Promise<RecordingJob> {
    this.#assertOpen();
    const current = this.#jobs.get(key);
    if (!current) throw new UnknownJobError(key);
    const clean: Record<string, unknown> = { ...patch };
    for (const field of ['key', 'channelId', 'url', 'receivedAt']) delete clean[field];
    const job: RecordingJob = { ...current, ...clean, updatedAt: patch.updatedAt ?? new Date().toISOString() };
    await this.#append(job, () => {
      const before = this.#jobs.get(key);
      if (before && !isTerminal(before)) this.#unfinished -= 1;
      if (!isTerminal(job)) this.#unfinished += 1;
      this.#jobs.set(key, job);
    });
    this.emit('updated', { ...job });
    return { ...job };
  }

  #append(job: RecordingJob, apply: () => void): Promise<void> {
    if (this.#closed) return Promise.reject(new JournalWriteError('The recordings inbox is closed.'));
    const line = `${JSON.stringify({ v: 1, job })}\n`;
    return new Promise((resolve, reject) => {
      this.#queue.push({ line, apply, resolve, reject });
      this.#kick();
    });
  }

  #kick(): void {
    if (this.#pumping) return;
    this.#pumping = this.#pump().finally(() => {
      this.#pumping = null;
      if (this.#queue.length > 0 || this.#compactWaiters.length > 0) this.#kick();
    });
  }

  /** The single writer: batches, compactions and their order all go through here. */
  async #pump(): Promise<void> {
    for (;;) {
      if (this.#compactWaiters.length > 0) {
        const waiters = this.#compactWaiters.splice(0);
        try {
          await this.#rewrite();
          for (const waiter of waiters) waiter.resolve();
        } catch (error) {
          const failure = new JournalWriteError('Could not compact the recordings journal.', { cause: error });
          for (const waiter of waiters) waiter.reject(failure);
        }
        continue;
      }
      if (this.#queue.length === 0) return;
      const batch = this.#takeBatch();
      const data = Buffer.from((this.#dirtyTail ? '\n' : '') + batch.map((p) => p.line).join(''), 'utf8');
      try {
        await appendFully(this.#file, data);
        await this.#file.datasync();
      } catch (error) {
        await this.#cutBack();
        const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        const failure = new JournalWriteError(
          `Could not write the recordings journal (${reason}). Free disk space or check the app data folder.`,
          { cause: error },
        );
        for (const pending of batch) pending.reject(failure);
        continue;
      }
      this.#size += data.length;
      this.#lines += batch.length;
      this.#dirtyTail = false;
      for (const pending of batch) {
        pending.apply();
        pending.resolve();
      }
      if (this.#shouldCompact()) this.#compactWaiters.push({ resolve: () => undefined, reject: () => undefined });
    }
  }

  #takeBatch(): Pending[] {
    let bytes = 0;
    let count = 0;
    for (const pending of this.#queue) {
      if (count > 0 && bytes + pending.line.length > MAX_BATCH_BYTES) break;
      bytes += pending.line.length;
      count += 1;
    }
    return this.#queue.splice(0, count);
  }

  /** After a failed write: drop whatever part of the batch reached the file, so no rejected job comes back. */
  async #cutBack(): Promise<void> {
    try {
      await this.#file.truncate(this.#size);
      await this.#file.datasync();
    } catch {
      this.#dirtyTail = true;
    }
  }

  /** Finished jobs past `keepFinishedMs`. */
  #prunable(): RecordingJob[] {
    const cutoff = (this.#options.now ?? Date.now)() - (this.#options.keepFinishedMs ?? DEFAULT_KEEP_FINISHED_MS);
    return [...this.#jobs.values()].filter((job) => isTerminal(job) && Date.parse(job.updatedAt) < cutoff);
  }

  #forget(job: RecordingJob): void {
    const known = this.#jobs.get(job.key);
    if (known && !isTerminal(known)) this.#unfinished -= 1;
    this.#jobs.delete(job.key);
    const alias = aliasKey(job.channelId, job.url);
    if (!alias) return;
    const keys = (this.#aliases.get(alias) ?? []).filter((k) => k !== job.key);
    if (keys.length) this.#aliases.set(alias, keys);
    else this.#aliases.delete(alias);
  }

  async #rewrite(): Promise<void> {
    // Pruned only from memory once the rewritten journal no longer holds them (see the rename below).
    const pruned = this.#prunable();
    const dropped = new Set(pruned.map((job) => job.key));
    const tmp = `${this.path}.tmp`;
    const out = await open(tmp, 'w', 0o600);
    let written = 0;
    let lineCount = 0;
    try {
      // Written in batches of about MAX_BATCH_BYTES: a journal of 100,000 jobs never becomes one big string.
      let batch: string[] = [];
      let batchBytes = 0;
      const flush = async (): Promise<void> => {
        if (batch.length === 0) return;
        const data = Buffer.from(batch.join(''), 'utf8');
        await appendFully(out, data);
        written += data.length;
        batch = [];
        batchBytes = 0;
      };
      for (const job of this.#jobs.values()) {
        if (dropped.has(job.key)) continue;
        const line = `${JSON.stringify({ v: 1, job })}\n`;
        batch.push(line);
        batchBytes += line.length;
        lineCount += 1;
        if (batchBytes >= MAX_BATCH_BYTES) await flush();
      }
      await flush();
      await out.sync();
    } finally {
      await out.close();
    }
    try {
      await rename(tmp, this.path);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
    await syncDir(this.#dir);
    for (const job of pruned) this.#forget(job);
    // The old handle points at the replaced inode: appends must go to the new file from now on.
    const raw: FileHandle = await open(this.path, 'a', 0o600);
    const previous = this.#file;
    this.#file = this.#options.wrapJournal ? this.#options.wrapJournal(raw) : raw;
    this.#size = written;
    this.#lines = lineCount;
    this.#dirtyTail = false;
    await previous.close().catch(() => undefined);
  }

  #shouldCompact(): boolean {
    const limit = this.#options.compactAfterLines ?? DEFAULT_COMPACT_AFTER_LINES;
    return this.#lines > limit && this.#lines > 2 * this.#jobs.size;
  }

  #remember(job: RecordingJob): void {
    const before = this.#jobs.get(job.key);
    const isNew = !before;
    if (before && !isTerminal(before)) this.#unfinished -= 1;
    if (!isTerminal(job)) this.#unfinished += 1;
    this.#jobs.set(job.key, job);
    const alias = aliasKey(job.channelId, job.url);
    if (isNew && alias) this.#aliases.set(alias, [...(this.#aliases.get(alias) ?? []), job.key]);
  }

  /** A known job for the same recording announced with the other URL shape (see the file comment). */
  #aliasOf(rec: NewRecording, now: Date): RecordingJob | undefined {
    const alias = aliasKey(rec.channelId, rec.url);
    if (!alias) return undefined;
    for (const key of this.#aliases.get(alias) ?? []) {
      const job = this.#jobs.get(key);
      if (!job) continue;
      const age = Math.abs(now.getTime() - Date.parse(job.receivedAt));
      if (age <= RETENTION_MS && differByRandomSegment(job.url, rec.url)) return job;
    }
    return undefined;
  }

  #assertOpen(): void {
    if (this.#closed) throw new JournalWriteError('The recordings inbox is closed.');
  }
}

function parseLine(text: string): RecordingJob | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const result = lineSchema.safeParse(value);
  return result.success ? (result.data.job as RecordingJob) : null;
}

function byReceivedAt(a: RecordingJob, b: RecordingJob): number {
  return a.receivedAt < b.receivedAt ? -1 : a.receivedAt > b.receivedAt ? 1 : 0;
}
