/**
 * The recordings journal's lines: the schema a replayed line must pass, reading one snapshot back from the
 * journal where the index says it is (see job-index.ts), and the handle the journal is appended through.
 */
import { NoteSchema } from '../note-schema.js';
import { constants, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { TallyError } from '../errors.js';
import { jsonOfLine } from '../jsonl-journal.js';
import { aliasHash, type JobAliases } from './job-index.js';
import { aliasKeys } from './recording-key.js';
import type { RecordingJob } from './types.js';

/** The journal's file name in the state folder. */
export const JOURNAL_FILE = 'inbox.jsonl';
/** Bounds the latency of one batch under a flood: a batch (appended or rewritten) is at most this many bytes. */
export const MAX_BATCH_BYTES = 1 << 20;
import type { OriginProbe } from '../download/origin-probe.js';
import type { Logger } from '../logger.js';

/** The part of a FileHandle the journal uses; `wrapJournal` may replace it (test seam for failing disks). */
export interface JournalFile {
  write(buffer: Buffer, offset: number, length: number): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * On Linux the journal is opened O_DSYNC: a write returns only once its bytes are as durable as after an
 * fdatasync, so a commit is one system call and one trip through the thread pool instead of two (the second
 * trip also waited for the JavaScript thread, busy with the next webhooks, to issue the fdatasync). Elsewhere
 * the flag is missing (Windows) or weaker than libuv's fdatasync (macOS, where that is F_FULLFSYNC): there the
 * journal appends and fdatasyncs.
 */
export const DSYNC_FLAGS =
  process.platform === 'linux' && constants.O_DSYNC !== undefined
    ? constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_DSYNC
    : null;

/** The journal's handle: with O_DSYNC every write is already durable, so `datasync` has nothing left to do. */
function journalHandle(raw: FileHandle): JournalFile {
  if (DSYNC_FLAGS === null) return raw;
  return {
    write: (buffer, offset, length) => raw.write(buffer, offset, length),
    // A real fdatasync here would cost a second flush of the disk's cache for nothing.
    datasync: () => Promise.resolve(),
    // O_DSYNC covers writes only: a truncation (cutting back a failed batch) is synced explicitly.
    truncate: async (length) => {
      await raw.truncate(length);
      await raw.datasync();
    },
    close: () => raw.close(),
  };
}

/** Wraps the journal's appending handle (see DSYNC_FLAGS and `InboxOptions.wrapJournal`). */
export function journalOpener(options: InboxOptions): (raw: FileHandle) => JournalFile {
  return (raw) => (options.wrapJournal ? options.wrapJournal(journalHandle(raw)) : journalHandle(raw));
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
  /** Wall clock for pruning (tests): finished jobs are judged by their stored `updatedAt`. */
  now?: () => number;
  /**
   * How long the service keeps a recording after its webhook, for each job's deadline (default RETENTION_MS, the
   * service's 6 hours; the demo sandbox's is shorter by its time factor).
   */
  retentionMs?: number;
  /** Where a failed background compaction is reported (the journal itself stays valid). */
  log?: Logger;
  /**
   * Asks the origin which object a URL names now (download/origin-probe.ts). With it, a webhook for a URL whose job
   * is finished is a duplicate only while the origin still serves the object that job saved; a different one is a
   * new recording (issue 31). Without it, the URL alone decides (tests of the journal itself).
   */
  identify?: (url: string) => Promise<OriginProbe>;
}

/** What `open` found while replaying the journal. */
export interface ReplayReport {
  jobs: number;
  lines: number;
  /** Complete lines that were not valid JSON or not a job (skipped, never fatal). */
  skippedLines: number;
  /** Bytes of an unterminated, unparsable last line cut off after a crash. */
  truncatedBytes: number;
  /** Where the journal was copied before damaged lines were skipped, or null when none were. */
  damagedCopy: string | null;
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

const jobSchema = z.looseObject({
  key: z.string().min(1),
  channelId: z.string(),
  url: z.string(),
  receivedAt: z.string(),
  deadline: z.string(),
  // A damaged service deadline only costs judging by the local one.
  serviceDeadline: z.string().nullable().optional().catch(undefined),
  announcedBytes: z.number().nullable(),
  duration: z.string().nullable(),
  thumbnail: z.string().nullable(),
  shape: z.string(),
  state: z.enum(['pending', 'downloading', 'saved', 'failed', 'expired', 'gone']),
  attempts: z.number().int().nonnegative(),
  path: z.string().nullable(),
  bytes: z.number().nullable(),
  totalBytes: z.number().nullable(),
  error: z.string().nullable(),
  // Notes of a damaged line are dropped rather than the job: the English `error` still says it.
  errorNotes: z.array(NoteSchema).nullable().optional().catch(undefined),
  updatedAt: z.string(),
  // A damaged link only costs the pairing (the two jobs download on their own), never the job.
  twin: z.string().min(1).optional().catch(undefined),
  savedBy: z.string().min(1).optional().catch(undefined),
  // A damaged object version only costs a look at the origin when the same URL comes again (issue 31).
  origin: z
    .object({ etag: z.string().nullable(), lastModified: z.string().nullable(), bytes: z.number().nullable() })
    .optional()
    .catch(undefined),
  follows: z.string().min(1).optional().catch(undefined),
  twinDiffers: z.literal(true).optional().catch(undefined),
});
const lineSchema = z.object({ v: z.literal(1), job: jobSchema });

/** A journal line as a job, or null when it is not one (damage is skipped, never fatal). */
export function parseLine(text: string): RecordingJob | null {
  const result = lineSchema.safeParse(jsonOfLine(text));
  return result.success ? (result.data.job as RecordingJob) : null;
}

/** The hashes of a job's alias keys for the index (see aliasKeys), or null. */
export function aliasOf(job: RecordingJob): JobAliases | null {
  const keys = aliasKeys(job.channelId, job.url);
  return keys ? { own: aliasHash(keys.own), trimmed: keys.trimmed === null ? null : aliasHash(keys.trimmed) } : null;
}

/** Reads exactly `length` bytes at `position` (a journal line known to be complete on disk). */
export function readFully(fd: number, buffer: Buffer, length: number, position: number): void {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) throw new Error('The recordings journal is shorter than Tally wrote it.');
    done += n;
  }
}
