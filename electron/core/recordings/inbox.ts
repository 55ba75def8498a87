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
 * parameters sorted but kept, since presigned S3 URLs differ only there; fragment dropped). A URL is not a
 * recording, though (issue 31): channel IDs are reused and a legacy URL names only the channel, so the same URL
 * may carry a new recording every day. A webhook for a known URL is a duplicate while that job is unfinished
 * within its 6 hours, or once it is saved while the origin still serves the object version it saved (ETag,
 * Last-Modified, size: one ranged request through `identify`, no body); otherwise (a different version, nothing
 * there, no answer, a job past its deadline) it is a new job under `<key>-<n>` (see #sameObject),
 * saved beside the first under a name of its own. A secondary index
 * (channel ID + host + file name) catches one more case: the older webhook shape announced URLs without the
 * random path segment, so the same recording may arrive as `/svc/<ch>.mp4` and `/svc/<rand>/<ch>.mp4`. Two URLs
 * are treated as one recording only when they differ by exactly that one segment and arrive within the
 * retention window. Then the later webhook is a duplicate only when the earlier job already stands for the
 * recording (see #aliasOf); otherwise both are kept as twins (`RecordingJob.twin`): a forged webhook of one form
 * cannot shadow the genuine one of the other, and the first of the two to be saved saves both. Two new-shape URLs with the same channel ID stay separate jobs: clients reuse channel IDs
 * (a broadcast restarted after a drop), and downloading twice is better than losing a recording.
 *
 * Memory: only an index (job-index.ts: journal offset, state, times) is held per job; jobs are read back from
 * the journal, with the 1,000 most recently used cached, so a flood's 100,000 jobs cost ~15 MB, not 350.
 */
import { EventEmitter } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { aliasKey, aliasKeys, differByRandomSegment, longerPath, recordingKey } from './recording-key.js';
import { JobIndex, aliasHash, type JobAliases, type Located } from './job-index.js';
import { standingTwin } from './twins.js';
import { journalMoved, keepDamaged, openJournal, writeCompacted } from './journal-rewrite.js';
import {
  DSYNC_FLAGS,
  JournalWriteError,
  UnknownJobError,
  aliasOf,
  JOURNAL_FILE,
  journalOpener,
  MAX_BATCH_BYTES,
  parseLine,
  readFully,
  type InboxOptions,
  type JournalFile,
  type ReplayReport,
} from './journal-lines.js';
import { RETENTION_MS } from './types.js';
import type { JobState, JobStore, NewRecording, RecordingJob } from './types.js';
import { syncDir } from '../durable-fs.js';
import { sameVersion, type ObjectVersion } from '../download/origin-probe.js';
import { appendFully, openJsonLines } from '../jsonl-journal.js';
import { describeError, silentLogger } from '../logger.js';
import { flushes } from '../flush-priority.js';
import { wallNow } from '../time.js';

export {
  JOURNAL_FILE,
  JournalWriteError,
  UnknownJobError,
  type InboxOptions,
  type JournalFile,
  type ReplayReport,
} from './journal-lines.js';

export type JobPatch = Parameters<JobStore['update']>[1];

interface InboxEvents {
  added: [job: RecordingJob];
  updated: [job: RecordingJob];
  /** The state folder or the journal vanished under Tally and was written again from memory (see #keepHome). */
  restored: [info: { dir: string; jobs: number }];
}

interface Pending {
  line: string;
  /** Runs inside the writer right after the fsync, before anyone else can observe the journal. */
  apply: (at: Located) => void;
  resolve: () => void;
  reject: (error: Error) => void;
}

const DEFAULT_COMPACT_AFTER_LINES = 10_000;
const DEFAULT_KEEP_FINISHED_MS = 30 * 24 * 60 * 60 * 1000;
/** Rewrite at open when at least this many finished jobs are due for pruning. */
const PRUNE_AT_OPEN = 1_000;
/** Jobs kept parsed in memory (most recently used); the rest are read back from the journal when asked for. */
const CACHED_JOBS = 1_000;

export { recordingKey } from './recording-key.js';

/** The durable job journal; see the file comment for the format and dedupe rules. */
export class Inbox extends EventEmitter<InboxEvents> implements JobStore {
  readonly path: string;
  readonly replay: ReplayReport;
  readonly #dir: string;
  readonly #options: InboxOptions;
  /** Where each job's latest snapshot is, and its state and times; the job itself stays on disk. */
  readonly #index: JobIndex;
  /** Recently used jobs, least recent first (see CACHED_JOBS). */
  readonly #cache = new Map<string, RecordingJob>();
  /** A read-only descriptor of the journal for reading jobs back (reopened after a rewrite). */
  #reader: number;
  readonly #adding = new Map<string, Promise<RecordingJob>>();
  /** Adds being written, by the alias hashes of their own path and of it without the random segment (see add). */
  readonly #addingOwn = new Map<number, Promise<RecordingJob>>();
  readonly #addingTrimmed = new Map<number, Promise<RecordingJob>>();
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

  private constructor(
    dir: string,
    file: JournalFile,
    replay: ReplayReport,
    size: number,
    options: InboxOptions,
    index: JobIndex,
  ) {
    super();
    this.#index = index;
    this.#dir = dir;
    this.path = join(dir, JOURNAL_FILE);
    this.#reader = openSync(this.path, 'r');
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
    // Replay keeps only where each job's last snapshot is (and its state), never the jobs themselves.
    const index = new JobIndex();
    let damagedCopy: string | null = null;
    const { file, size, replay } = await openJournal(dir, () =>
      openJsonLines(
        dir,
        JOURNAL_FILE,
        (text, offset, length) => {
          const job = parseLine(text);
          if (job) index.set(job, { offset, length }, index.has(job.key) ? null : aliasOf(job));
          return job !== null;
        },
        journalOpener(options),
        DSYNC_FLAGS ?? 'a',
        async (path) => {
          const found = `a damaged end of ${JOURNAL_FILE} without a line break cut off`;
          damagedCopy = await keepDamaged(path, found, options.log);
        },
      ),
    );
    const report: ReplayReport = { jobs: 0, damagedCopy, ...replay };
    // Damaged lines are skipped, never fatal; the file as it was is kept aside first (compaction rewrites it).
    if (replay.skippedLines > 0) {
      const n = replay.skippedLines;
      const found = `${n} damaged line${n === 1 ? '' : 's'} of ${JOURNAL_FILE} skipped (${index.size} recording${index.size === 1 ? '' : 's'} read from ${replay.lines} good lines)`;
      report.damagedCopy ??= await keepDamaged(join(dir, JOURNAL_FILE), found, options.log);
    }
    const inbox = new Inbox(dir, file, report, size, options, index);
    report.jobs = index.size;
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
    const url = rec.parsedUrl ?? new URL(rec.url);
    const base = recordingKey(url);
    // The same URL being added (or looked at) right now: the one it becomes stands for both, unfinished.
    const inFlight = this.#adding.get(base);
    if (inFlight) return { job: { ...(await inFlight) }, duplicate: true };
    const keys = aliasKeys(rec.channelId, url);
    const hashes = keys && {
      own: aliasHash(keys.own),
      trimmed: keys.trimmed === null ? null : aliasHash(keys.trimmed),
    };
    // The other form of this recording is being written right now: once it is, look again (twins, not strangers).
    const partner =
      hashes &&
      ((hashes.trimmed === null ? undefined : this.#addingOwn.get(hashes.trimmed)) ??
        this.#addingTrimmed.get(hashes.own));
    if (partner) {
      await partner.catch(() => undefined);
      return this.add(rec, now);
    }
    // Registered before anything is awaited: the same URL, or its other form, arriving meanwhile waits for this one.
    const outcome = this.#addOnce(rec, url, base, hashes, now);
    const standing = outcome.then((o) => o.job);
    standing.catch(() => undefined);
    this.#adding.set(base, standing);
    if (hashes) {
      this.#addingOwn.set(hashes.own, standing);
      if (hashes.trimmed !== null) this.#addingTrimmed.set(hashes.trimmed, standing);
    }
    try {
      return await outcome;
    } finally {
      if (this.#adding.get(base) === standing) this.#adding.delete(base);
      if (hashes && this.#addingOwn.get(hashes.own) === standing) this.#addingOwn.delete(hashes.own);
      if (hashes?.trimmed != null && this.#addingTrimmed.get(hashes.trimmed) === standing) {
        this.#addingTrimmed.delete(hashes.trimmed);
      }
    }
  }

  /**
   * `add` once no other add of this URL or of its other form is in flight: a duplicate of the latest job under
   * this URL while it names the same object version (see #sameObject), else a new job (the first under the URL
   * gets the URL's key, later ones `<key>-2`, `<key>-3`…, saved under names of their own). Nothing is awaited
   * unless the origin must be asked, so an add called before `close` is written before it.
   */
  #addOnce(
    rec: NewRecording,
    url: URL,
    base: string,
    hashes: JobAliases | null,
    now: Date,
  ): Promise<{ job: RecordingJob; duplicate: boolean }> {
    const latest = this.#index.latestVersion(base);
    const exact = latest === undefined ? undefined : this.#read(latest);
    const after = (same: boolean): Promise<{ job: RecordingJob; duplicate: boolean }> => {
      if (exact && same) return Promise.resolve({ job: { ...(this.#read(exact.key) ?? exact) }, duplicate: true });
      const version = exact ? { key: this.#index.nextVersion(base), follows: exact.key } : { key: base };
      const alias = hashes ? this.#aliasOf(rec, url, now, hashes) : undefined;
      if (alias instanceof Promise) return alias.then((found) => this.#write(rec, now, version, hashes, found));
      return this.#write(rec, now, version, hashes, alias);
    };
    if (!exact) return after(false);
    const same = this.#sameObjectAt(exact, rec, now);
    return typeof same === 'boolean' ? after(same) : this.#sameObject(exact, rec, now).then(after);
  }

  /** Writes a new job (see add); its `#append` runs before anything is awaited. */
  async #write(
    rec: NewRecording,
    now: Date,
    version: { key: string; follows?: string },
    hashes: JobAliases | null,
    alias: { job: RecordingJob; duplicate: boolean } | undefined,
  ): Promise<{ job: RecordingJob; duplicate: boolean }> {
    if (alias?.duplicate) return { job: { ...alias.job }, duplicate: true };
    const receivedAt = now.toISOString();
    const job: RecordingJob = {
      key: version.key,
      channelId: rec.channelId,
      url: rec.url,
      receivedAt,
      deadline: new Date(now.getTime() + (this.#options.retentionMs ?? RETENTION_MS)).toISOString(),
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
      ...(alias ? { twin: alias.job.key } : {}),
      ...(version.follows ? { follows: version.follows } : {}),
    };
    await this.#append(job, (at) => this.#remember(job, at, hashes));
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
    const job = this.#read(key);
    return job ? { ...job } : undefined;
  }

  /** The key of the job's twin (the same recording in the other webhook form, see RecordingJob.twin), if known. */
  twinOf(key: string): string | undefined {
    return this.#index.twinOf(key);
  }

  /**
   * Where one row or one count per recording is wanted: the key the recording is listed under (the earlier twin's,
   * so the row keeps its key whichever twin is further along) and the job that stands for it (see twins.ts).
   * A job without a twin stands for itself.
   */
  standing(job: RecordingJob): { key: string; job: RecordingJob; twin: RecordingJob | null } {
    const twinKey = this.#index.twinOf(job.key);
    const known = twinKey === undefined ? undefined : this.#read(twinKey);
    if (!known) return { key: job.key, job, twin: null };
    const twin = { ...known };
    return { key: job.twin === twin.key ? twin.key : job.key, job: standingTwin(job, twin), twin };
  }

  /** Every job, oldest first (read back from the journal beyond the cache: meant for lists, not hot paths). */
  list(): RecordingJob[] {
    return this.#materialise(this.#index.keys());
  }

  /** Keys of the jobs in these states (all when omitted), oldest first, without reading a job. */
  keys(states?: readonly JobState[]): string[] {
    return states ? this.#index.keys((state) => states.includes(state)) : this.#index.keys();
  }

  /** Jobs whose state and last change pass `keep`, oldest first; only those are read. */
  where(keep: (state: JobState, updatedAtMs: number) => boolean): RecordingJob[] {
    return this.#materialise(this.#index.keys(keep));
  }

  /** How many jobs are not finished yet (constant time: the receiver asks on every webhook). */
  get unfinished(): number {
    return this.#index.unfinished;
  }

  /** Jobs the download manager still has to finish, oldest first. */
  pending(): RecordingJob[] {
    return this.where((state) => state === 'pending' || state === 'downloading');
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
    closeSync(this.#reader);
    this.#cache.clear();
  }

  async #applyUpdate(key: string, patch: JobPatch): Promise<RecordingJob> {
    this.#assertOpen();
    const current = this.#read(key);
    if (!current) throw new UnknownJobError(key);
    const clean: Record<string, unknown> = { ...patch };
    for (const field of ['key', 'channelId', 'url', 'receivedAt', 'twin']) delete clean[field];
    const job: RecordingJob = { ...current, ...clean, updatedAt: patch.updatedAt ?? new Date().toISOString() };
    await this.#append(job, (at) => this.#remember(job, at));
    this.emit('updated', { ...job });
    return { ...job };
  }

  #append(job: RecordingJob, apply: (at: Located) => void): Promise<void> {
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
          if (!(await this.#keepHome())) await this.#rewrite();
          for (const waiter of waiters) waiter.resolve();
        } catch (error) {
          const failure = new JournalWriteError('Could not compact the recordings journal.', { cause: error });
          for (const waiter of waiters) waiter.reject(failure);
        }
        continue;
      }
      if (this.#queue.length === 0) return;
      const batch = this.#takeBatch();
      try {
        await this.#keepHome();
      } catch (error) {
        const failure = new JournalWriteError(
          `The state folder ${this.#dir} was deleted or replaced while Tally was running, and could not be made again (${describeError(error)}); webhooks are refused until it can.`,
          { cause: error },
        );
        for (const pending of batch) pending.reject(failure);
        continue;
      }
      const lead = this.#dirtyTail ? 1 : 0;
      const data = Buffer.from((lead ? '\n' : '') + batch.map((p) => p.line).join(''), 'utf8');
      try {
        // Urgent: webhooks wait for this commit to be answered, so downloads' flushes wait for it (flush-priority.ts).
        await flushes.urgent(async () => {
          await appendFully(this.#file, data);
          await this.#file.datasync();
        });
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
      let offset = this.#size + lead;
      this.#size += data.length;
      this.#lines += batch.length;
      this.#dirtyTail = false;
      for (const pending of batch) {
        const bytes = Buffer.byteLength(pending.line);
        pending.apply({ offset, length: bytes - 1 });
        offset += bytes;
        pending.resolve();
      }
      if (this.#shouldCompact()) this.#compactWaiters.push({ resolve: () => undefined, reject: () => undefined });
    }
  }

  /**
   * The state folder or the journal deleted or replaced while running: appends would go into an unlinked file,
   * acknowledged and gone after a restart (issue 20). Before each batch the journal's path must still be the file
   * Tally reads; if not, the folder is made again and the journal written from memory (the reader still holds
   * the old file), and `restored` says so. Until that works every add is refused, never acknowledged.
   */
  async #keepHome(): Promise<boolean> {
    if (!journalMoved(this.path, this.#reader)) return false;
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    await this.#rewrite();
    this.emit('restored', { dir: this.#dir, jobs: this.#index.size });
    return true;
  }

  /**
   * Looks whether the state folder or the journal vanished, and makes them again at once if so (the pipeline
   * asks on every heartbeat: without it a quiet receiver noticed only at the next webhook, and a second receiver
   * could start on the state meanwhile, its lock gone with the folder).
   */
  async checkHome(): Promise<void> {
    if (this.#closed || !journalMoved(this.path, this.#reader)) return;
    await this.compact();
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

  /** Keys of the finished jobs past `keepFinishedMs`. */
  #prunable(): string[] {
    const cutoff = (this.#options.now ?? wallNow)() - (this.#options.keepFinishedMs ?? DEFAULT_KEEP_FINISHED_MS);
    return this.#index.keys(
      (state, updatedAt) => (state === 'saved' || state === 'expired' || state === 'failed') && updatedAt < cutoff,
    );
  }

  async #rewrite(): Promise<void> {
    // Pruned only from memory once the rewritten journal no longer holds them (see the rename below).
    const pruned = this.#prunable();
    const dropped = new Set(pruned);
    const tmp = `${this.path}.tmp`;
    const { moved, written, lineCount } = await writeCompacted(tmp, this.#reader, this.#index, dropped);
    try {
      await rename(tmp, this.path);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
    // From here on the old offsets are wrong: switch the index, the reader and the pruning in one go.
    this.#index.move(moved);
    const reader = this.#reader;
    this.#reader = openSync(this.path, 'r');
    closeSync(reader);
    for (const key of pruned) {
      this.#index.delete(key);
      this.#cache.delete(key);
    }
    await syncDir(this.#dir);
    // The old handle points at the replaced inode: appends must go to the new file from now on.
    const raw: FileHandle = await open(this.path, DSYNC_FLAGS ?? 'a', 0o600);
    const previous = this.#file;
    this.#file = journalOpener(this.#options)(raw);
    this.#size = written;
    this.#lines = lineCount;
    this.#dirtyTail = false;
    await previous.close().catch(() => undefined);
  }

  #shouldCompact(): boolean {
    const limit = this.#options.compactAfterLines ?? DEFAULT_COMPACT_AFTER_LINES;
    return this.#lines > limit && this.#lines > 2 * this.#index.size;
  }

  /** Indexes a job just written at `at`; a new job's alias hashes come with it when `add` computed them already. */
  #remember(job: RecordingJob, at: Located, aliases?: JobAliases | null): void {
    this.#index.set(job, at, this.#index.has(job.key) ? null : aliases !== undefined ? aliases : aliasOf(job));
    this.#cacheJob(job);
  }

  #cacheJob(job: RecordingJob): void {
    this.#cache.delete(job.key);
    this.#cache.set(job.key, job);
    if (this.#cache.size > CACHED_JOBS) this.#cache.delete(this.#cache.keys().next().value as string);
  }

  /** The job (shared, not a copy) from the cache or the journal; undefined when unknown. */
  #read(key: string, cache = true): RecordingJob | undefined {
    const cached = this.#cache.get(key);
    if (cached) {
      if (cache) this.#cacheJob(cached);
      return cached;
    }
    const at = this.#index.locate(key);
    if (!at) return undefined;
    const buffer = Buffer.allocUnsafe(at.length);
    readFully(this.#reader, buffer, at.length, at.offset);
    const job = parseLine(buffer.toString('utf8'));
    if (!job || job.key !== key) {
      throw new JournalWriteError(`The recordings journal changed under Tally (job ${key} unreadable).`);
    }
    if (cache) this.#cacheJob(job);
    return job;
  }

  /** Copies of these jobs; a long list does not push the recently used ones out of the cache. */
  #materialise(keys: string[]): RecordingJob[] {
    const cache = keys.length <= CACHED_JOBS;
    return keys.map((key) => ({ ...(this.#read(key, cache) as RecordingJob) }));
  }

  /**
   * A known job for the same recording announced with the other URL shape (see the file comment), and whether the
   * new webhook is a duplicate of it or gets a job of its own linked to it as its twin:
   * - a saved one makes either form a duplicate: the recording is on disk;
   * - a current-form webhook after a legacy-form job always gets its own job, so a forged legacy webhook arriving
   *   first never keeps the genuine recording from being downloaded (issue 20); the two are twins, and the first
   *   to be saved saves both (the download manager downloads one at a time and marks the other saved);
   * - a legacy-form webhook after a current-form job is a duplicate while that job is on its way, and a twin once
   *   it fails (the current form is what the service sends today; the legacy form is its old fallback).
   * A job has at most one twin: a second current-form URL for the same legacy one is another recording (channel
   * IDs are reused), so it stays a job of its own, unlinked.
   */
  #aliasOf(
    rec: NewRecording,
    url: URL,
    now: Date,
    hashes: JobAliases,
    verdicts = new Map<string, boolean>(),
  ): AliasFound | undefined | Promise<AliasFound | undefined> {
    const alias = aliasKey(rec.channelId, url);
    if (!alias) return undefined;
    // A legacy-form job has this URL's trimmed path as its own; a current-form job, this path as its trimmed one.
    const candidates = [
      ...(hashes.trimmed === null ? [] : this.#index.aliasKeys(hashes.trimmed, 'own')),
      ...this.#index.aliasKeys(hashes.own, 'trimmed'),
    ];
    for (const key of candidates) {
      const job = this.#read(key);
      if (!job || aliasKey(job.channelId, job.url) !== alias) continue;
      const age = Math.abs(now.getTime() - Date.parse(job.receivedAt));
      if (age > RETENTION_MS || !differByRandomSegment(job.url, rec.url)) continue;
      // Saved: a duplicate only while this URL names the object that job saved; else a new broadcast of the same
      // channel (its ID reused within hours), neither a duplicate nor a twin (issue 31). The scan is synchronous
      // until the origin must be asked; then it runs again with the answer.
      if (job.state === 'saved') {
        const same = verdicts.get(key) ?? this.#sameObjectAt(job, rec, now);
        if (same === undefined) {
          return this.#sameObject(job, rec, now).then((answer) => {
            verdicts.set(key, answer);
            return this.#aliasOf(rec, url, now, hashes, verdicts);
          });
        }
        if (same) return { job, duplicate: true };
        continue;
      }
      const current = longerPath(rec.url, job.url);
      if (!current && !isFailing(job)) return { job, duplicate: true };
      if (!this.#index.hasTwin(key)) return { job, duplicate: false };
    }
    return undefined;
  }

  /**
   * Whether a webhook for `rec` names the object version `job` stands for (issue 31: channel IDs are reused, and a
   * legacy URL names only the channel, so one URL may carry a new recording every day):
   * - while `job` is unfinished (or refused for good) and within its 6 hours it stands for whatever the URL names:
   *   a duplicate;
   * - past its deadline, or expired, it no longer does: the service deleted that recording 6 hours after its
   *   webhook, so what the URL announces now is a new one (a job still retrying or refused then once answered
   *   `duplicate` to the next day's recording under the same URL, and it was never downloaded);
   * - a different announced size is a different object, with no question asked;
   * - otherwise the origin is asked (`identify`: one ranged request, no body) and its validators compared with the
   *   version `job` saved (ETag, Last-Modified, size; only the size for jobs saved before versions were kept).
   *   Only the same version is the same recording: an object gone from the origin (403/404/410) may be the next
   *   recording not served yet, and an origin that cannot be asked proves nothing either; both are taken as new
   *   (a second job that finds nothing costs less than a lost recording).
   */
  async #sameObject(job: RecordingJob, rec: NewRecording, now: Date): Promise<boolean> {
    const known = this.#sameObjectAt(job, rec, now);
    if (known !== undefined) return known;
    const seen = await (this.#options.identify as NonNullable<InboxOptions['identify']>)(rec.url);
    if (seen.kind === 'gone') return false;
    if (seen.kind === 'unknown') {
      (this.#options.log ?? silentLogger).warn(
        `journal: could not ask the origin whether ${rec.channelId} is the recording already saved (${seen.reason}): it is downloaded again`,
      );
      return false;
    }
    const saved: ObjectVersion = job.origin ?? { etag: null, lastModified: null, bytes: job.bytes };
    return sameVersion(saved, seen) ?? false;
  }

  /** What #sameObject can say without asking the origin, or undefined when the origin must be asked. */
  #sameObjectAt(job: RecordingJob, rec: NewRecording, now: Date): boolean | undefined {
    if (job.state === 'expired') return false;
    if (job.state !== 'saved') return now.getTime() < Date.parse(job.deadline);
    if (rec.announcedBytes !== null && job.announcedBytes !== null && rec.announcedBytes !== job.announcedBytes) {
      return false;
    }
    return this.#options.identify ? undefined : true;
  }

  #assertOpen(): void {
    if (this.#closed) throw new JournalWriteError('The recordings inbox is closed.');
  }
}

/** A job of the other webhook form found for a new one: a duplicate of it, or its twin. */
type AliasFound = { job: RecordingJob; duplicate: boolean };

/** A job whose download went wrong so far: it waits on an error, or ended failed, expired or gone. */
function isFailing(job: RecordingJob): boolean {
  return (
    job.state === 'failed' ||
    job.state === 'expired' ||
    job.state === 'gone' ||
    (job.state !== 'saved' && job.error !== null)
  );
}
