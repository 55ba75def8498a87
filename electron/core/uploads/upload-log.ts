/**
 * The record of finished web client uploads: an append-only JSON-lines file (`uploads.jsonl` in the state
 * folder), one line per saved file, fsync'd before the upload is acknowledged, replayed on open. It lets the
 * Recordings view list client recordings after a restart without scanning folders. A torn last line (a crash
 * mid-append) is cut off; damaged lines elsewhere are skipped and counted, never fatal.
 */
import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { JsonLinesAppender, jsonOfLine, openJsonLines } from '../jsonl-journal.js';
import { NoteSchema } from '../note-schema.js';
import type { Note } from '../notes.js';

export const UPLOAD_LOG_FILE = 'uploads.jsonl';

/** One saved upload. */
export interface UploadRecord {
  /** Random, unique per upload (also the Recordings view key, prefixed `upload:`). */
  id: string;
  /** Absolute path of the saved file. */
  path: string;
  /** File name only. */
  fileName: string;
  bytes: number;
  /** Media type essence as received, e.g. `audio/webm` (parameters dropped). */
  contentType: string;
  /** Hex sha256 of the saved bytes. */
  sha256: string;
  /** The page origin that sent it, or null for clients without an Origin header. */
  origin: string | null;
  /** ISO time the upload finished. */
  receivedAt: string;
  /** The channel named by the web SDK's `X-FILENAME` (`<serviceId>.<channelId>LL.ogg`), when it names one. */
  channelId?: string | null;
  /** Which of the SDK's two recordings: its own stream (`LL`) or the remote one (`RR`). */
  track?: 'local' | 'remote' | null;
}

/** An upload Tally refused or lost: the web page never knows (the SDK reports any answer as uploaded). */
export interface RefusedUploadRecord {
  id: string;
  /** HTTP status answered (499: the client went away). */
  status: number;
  reason: string;
  /** The reason as a note (the popover and notifications translate it); absent in lines older than notes. */
  reasonNote?: Note;
  /** The `X-FILENAME` as sent (decoded), when there was one. */
  fileName: string | null;
  channelId: string | null;
  track: 'local' | 'remote' | null;
  origin: string | null;
  /** ISO time of the refusal. */
  at: string;
}

/** Refusals kept in memory for the Recordings view (the newest). */
export const MAX_REFUSED_KEPT = 500;

export interface UploadLogReplay {
  records: number;
  skippedLines: number;
  truncatedBytes: number;
}

const recordSchema = z.looseObject({
  id: z.string().min(1),
  path: z.string().min(1),
  fileName: z.string().min(1),
  bytes: z.number().int().nonnegative(),
  contentType: z.string(),
  sha256: z.string(),
  origin: z.string().nullable(),
  receivedAt: z.string(),
});
const lineSchema = z.object({ v: z.literal(1), upload: recordSchema });
const refusedSchema = z.looseObject({
  id: z.string().min(1),
  status: z.number().int(),
  reason: z.string(),
  // A note this version cannot read costs the translation, not the line.
  reasonNote: NoteSchema.optional().catch(undefined),
  fileName: z.string().nullable(),
  channelId: z.string().nullable(),
  track: z.enum(['local', 'remote']).nullable(),
  origin: z.string().nullable(),
  at: z.string(),
});
const refusedLineSchema = z.object({ v: z.literal(1), refused: refusedSchema });

/** A fresh record id (16 hex characters). */
export function newUploadId(): string {
  return randomBytes(8).toString('hex');
}

/** See the file comment. `open`, `append` per finished upload, `list`, `close` on shutdown. */
export class UploadLog {
  readonly path: string;
  readonly replay: UploadLogReplay;
  readonly #records: UploadRecord[];
  readonly #refused: RefusedUploadRecord[];
  readonly #appender: JsonLinesAppender;

  private constructor(
    path: string,
    file: FileHandle,
    size: number,
    records: UploadRecord[],
    replay: UploadLogReplay,
    refused: RefusedUploadRecord[],
  ) {
    this.path = path;
    this.#refused = refused;
    this.#appender = new JsonLinesAppender({ file, size }, 'upload log');
    this.#records = records;
    this.replay = replay;
  }

  /** Opens (creating if needed) `dir/uploads.jsonl` and replays it. */
  static async open(dir: string): Promise<UploadLog> {
    const records: UploadRecord[] = [];
    const refused: RefusedUploadRecord[] = [];
    const seen = new Set<string>();
    const opened = await openJsonLines(dir, UPLOAD_LOG_FILE, (text) => {
      const record = parseLine(text);
      if (!record) return false;
      if ('status' in record) {
        refused.push(record);
        if (refused.length > MAX_REFUSED_KEPT) refused.shift();
        return true;
      }
      if (!seen.has(record.id)) {
        seen.add(record.id);
        records.push(record);
      }
      return true;
    });
    const { path, file, size } = opened;
    const replay: UploadLogReplay = {
      records: 0,
      skippedLines: opened.replay.skippedLines,
      truncatedBytes: opened.replay.truncatedBytes,
    };
    replay.records = records.length;
    return new UploadLog(path, file, size, records, replay, refused);
  }

  /** Every recorded upload, oldest first (copies). */
  list(): UploadRecord[] {
    return this.#records.map((r) => ({ ...r }));
  }

  /** The record with this id, if any. */
  get(id: string): UploadRecord | undefined {
    const record = this.#records.find((r) => r.id === id);
    return record ? { ...record } : undefined;
  }

  /** Refused uploads, oldest first (copies; the newest MAX_REFUSED_KEPT). */
  listRefused(): RefusedUploadRecord[] {
    return this.#refused.map((r) => ({ ...r }));
  }

  getRefused(id: string): RefusedUploadRecord | undefined {
    const record = this.#refused.find((r) => r.id === id);
    return record ? { ...record } : undefined;
  }

  /** Appends one record and resolves once it is on disk. Appends are serialised. */
  append(record: UploadRecord): Promise<void> {
    return this.#appendLine({ v: 1, upload: record }, () => this.#records.push({ ...record }));
  }

  /** Records a refusal (kept in memory even when the disk refuses the line: the disk may be why). */
  appendRefused(record: RefusedUploadRecord): Promise<void> {
    this.#refused.push({ ...record });
    if (this.#refused.length > MAX_REFUSED_KEPT) this.#refused.shift();
    return this.#appendLine({ v: 1, refused: record }, () => undefined);
  }

  #appendLine(value: unknown, onWritten: () => void): Promise<void> {
    return this.#appender.append(value, onWritten);
  }

  /** Waits for pending appends, then closes the file. Idempotent. */
  close(): Promise<void> {
    return this.#appender.close();
  }
}

function parseLine(text: string): UploadRecord | RefusedUploadRecord | null {
  const value = jsonOfLine(text);
  const result = lineSchema.safeParse(value);
  if (result.success) return result.data.upload as UploadRecord;
  const refused = refusedLineSchema.safeParse(value);
  return refused.success ? (refused.data.refused as RefusedUploadRecord) : null;
}
