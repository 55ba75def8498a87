/**
 * The one JSON-lines journal opener, for the recordings inbox, the upload log and the studio ledgers. Both append one JSON
 * object per line and must come back after a crash at any byte: complete lines are replayed (a damaged one
 * is skipped and counted, never fatal), and a last line without its newline is either completed, when it
 * parses (it may have been acknowledged), or cut off.
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir, writeAll } from './durable-fs.js';

/** What replaying found. */
export interface JsonLinesReplay {
  /** Lines kept (including a completed torn last line). */
  lines: number;
  /** Complete lines that `accept` refused (not JSON, not a record): skipped. */
  skippedLines: number;
  /** Bytes of an unterminated, unacceptable last line, cut off. */
  truncatedBytes: number;
}

/** The part of a file handle a journal writes through (a test seam may stand in for it). */
export interface JournalHandle {
  write(buffer: Buffer, offset: number, length: number): Promise<{ bytesWritten: number }>;
  truncate(len?: number): Promise<void>;
  datasync(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenedJournal<F extends JournalHandle> {
  path: string;
  /** Open for appending, positioned after the last complete line. */
  file: F;
  /** Bytes known complete and durable. */
  size: number;
  replay: JsonLinesReplay;
}

/** Appends `data` whole through the journal handle's plain `write`. */
export function appendFully(file: JournalHandle, data: Buffer): Promise<void> {
  return writeAll({ writev: ([buffer]) => file.write(buffer!, 0, buffer!.length) }, [data]);
}

/** A line longer than this is damage (no record comes near it with the webhook's field caps). */
export const MAX_LINE_BYTES = 64 * 1024;
/** Replay reads the file in chunks of this size, whatever its size. */
const READ_CHUNK_BYTES = 1 << 20;

/**
 * Replays `path` line by line in fixed-size chunks: memory follows the records kept, not the file's size (a
 * 700 MB journal once could not be opened at all, "Cannot create a string longer than 0x1fffffe8 characters",
 * which stranded every acknowledged recording in it). An over-long line is skipped as damage without ever being
 * held whole. Resolves with the bytes up to the last newline and the unterminated tail (null when over-long).
 */
async function replayLines(
  path: string,
  accept: Accept,
  replay: JsonLinesReplay,
): Promise<{ completeBytes: number; tail: Buffer | null; totalBytes: number } | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const take = (line: Buffer, offset: number): void => {
    const text = line.toString('utf8');
    if (text.trim() === '') return;
    if (accept(text, offset, line.length)) replay.lines += 1;
    else replay.skippedLines += 1;
  };
  let carry: Buffer[] = [];
  let carryBytes = 0;
  /** The current line is already over the limit: its bytes are dropped until its newline. */
  let oversized = false;
  let position = 0;
  let completeBytes = 0;
  const chunk = Buffer.alloc(READ_CHUNK_BYTES);
  try {
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, bytesRead);
      let start = 0;
      for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, start)) {
        const piece = data.subarray(start, nl);
        if (oversized || carryBytes + piece.length > MAX_LINE_BYTES) replay.skippedLines += 1;
        else take(carry.length ? Buffer.concat([...carry, piece]) : piece, completeBytes);
        carry = [];
        carryBytes = 0;
        oversized = false;
        start = nl + 1;
        completeBytes = position + start;
      }
      const rest = data.subarray(start);
      if (!oversized && carryBytes + rest.length <= MAX_LINE_BYTES) {
        // Copied: `chunk` is reused by the next read.
        if (rest.length > 0) carry.push(Buffer.from(rest));
        carryBytes += rest.length;
      } else {
        oversized = true;
        carry = [];
        carryBytes = 0;
      }
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
  return { completeBytes, tail: oversized ? null : Buffer.concat(carry), totalBytes: position };
}

/** Takes one replayed line (its byte offset in the file and byte length, newline excluded); false skips it. */
export type Accept = (line: string, offset: number, bytes: number) => boolean;

/**
 * Opens (creating if needed) `dir/name` for appending and replays it line by line through `accept`, which
 * returns whether it took the line. `wrap` may replace the handle (tests inject a full disk through it);
 * `flags` are the open flags for appending (the inbox adds O_DSYNC).
 */
export async function openJsonLines<F extends JournalHandle = FileHandle>(
  dir: string,
  name: string,
  accept: Accept,
  wrap: (raw: FileHandle) => F = (raw) => raw as unknown as F,
  flags: string | number = 'a',
  /**
   * Called before an unterminated tail longer than any line is cut off: that is damage, not a torn last write
   * (which is at most one line), and the caller may keep the file as it was first.
   */
  beforeCut?: (path: string) => Promise<void>,
): Promise<OpenedJournal<F>> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  const replay: JsonLinesReplay = { lines: 0, skippedLines: 0, truncatedBytes: 0 };
  const found = await replayLines(path, accept, replay);
  const created = found === null;
  const { completeBytes, tail, totalBytes } = found ?? { completeBytes: 0, tail: Buffer.alloc(0), totalBytes: 0 };
  const file = wrap(await open(path, flags, 0o600));
  let size = completeBytes;
  try {
    if (totalBytes > completeBytes) {
      if (tail !== null && accept(tail.toString('utf8'), completeBytes, tail.length)) {
        // Written whole but the newline never made it: keep the record, it may have been acknowledged.
        replay.lines += 1;
        await appendFully(file, Buffer.from('\n'));
        size = totalBytes + 1;
      } else {
        if (beforeCut && totalBytes - completeBytes > MAX_LINE_BYTES) await beforeCut(path);
        await file.truncate(completeBytes);
        replay.truncatedBytes = totalBytes - completeBytes;
      }
      await file.datasync();
    }
    if (created) await syncDir(dir);
  } catch (error) {
    // The open failure is what the caller reports; the handle must not leak either way.
    await file.close().catch(() => undefined);
    throw error;
  }
  return { path, file, size, replay };
}

/**
 * Serialised, durable appends to an opened JSON-lines file, for the small journals (the upload log, the studio
 * ledgers): each line is written whole and fdatasync'd before its promise resolves. A failed append is cut off so
 * the next line does not glue onto it, or, when even the cut fails, the next line starts on a new line (replay
 * then skips the fragment as damage).
 */
export class JsonLinesAppender {
  readonly #file: JournalHandle;
  readonly #name: string;
  #size: number;
  #chain: Promise<unknown> = Promise.resolve();
  #closed = false;
  #dirtyTail = false;

  /** `name` says which journal in the error after `close()`, e.g. "upload log". */
  constructor(opened: { file: JournalHandle; size: number }, name: string) {
    this.#file = opened.file;
    this.#size = opened.size;
    this.#name = name;
  }

  /** Lines waiting for the next write: appends that arrive together share one write and one fdatasync. */
  #pending: { value: unknown; onWritten: (() => void) | undefined; done: (error?: unknown) => void }[] = [];
  #scheduled = false;

  /**
   * Appends `value` as one line; `onWritten` runs once it is durable, before the promise resolves. Lines appended
   * while a write is in progress go out together in the next one (group commit), in the order they came.
   */
  append(value: unknown, onWritten?: () => void): Promise<void> {
    const result = new Promise<void>((resolve, reject) => {
      this.#pending.push({ value, onWritten, done: (error) => (error === undefined ? resolve() : reject(error)) });
    });
    if (!this.#scheduled) {
      this.#scheduled = true;
      this.#chain = this.#chain.then(() => this.#writePending()).catch(() => undefined);
    }
    return result;
  }

  async #writePending(): Promise<void> {
    this.#scheduled = false;
    const batch = this.#pending.splice(0);
    if (batch.length === 0) return;
    if (this.#closed) {
      for (const b of batch) b.done(new Error(`The ${this.#name} is closed.`));
      return;
    }
    const text = batch.map((b) => `${JSON.stringify(b.value)}\n`).join('');
    const line = Buffer.from(`${this.#dirtyTail ? '\n' : ''}${text}`);
    try {
      await appendFully(this.#file, line);
      await this.#file.datasync();
    } catch (error) {
      await this.#file.truncate(this.#size).then(
        () => (this.#dirtyTail = false),
        () => (this.#dirtyTail = true),
      );
      for (const b of batch) b.done(error);
      return;
    }
    this.#size += line.length;
    this.#dirtyTail = false;
    for (const b of batch) {
      try {
        b.onWritten?.();
        b.done();
      } catch (error) {
        b.done(error);
      }
    }
  }

  /** Waits for pending appends, then closes the file. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#chain;
    this.#closed = true;
    await this.#file.close();
  }
}

/**
 * A journal line as a JSON value, or undefined when it is not JSON (a torn or damaged line, skipped by every
 * reader): each journal checks the value against its own schema.
 */
export function jsonOfLine(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
