/**
 * The one JSON-lines journal opener, for the recordings inbox and the upload log. Both append one JSON
 * object per line and must come back after a crash at any byte: complete lines are replayed (a damaged one
 * is skipped and counted, never fatal), and a last line without its newline is either completed, when it
 * parses (it may have been acknowledged), or cut off.
 */
import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
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

/**
 * Opens (creating if needed) `dir/name` for appending and replays it line by line through `accept`, which
 * returns whether it took the line. `wrap` may replace the handle (tests inject a full disk through it).
 */
export async function openJsonLines<F extends JournalHandle = FileHandle>(
  dir: string,
  name: string,
  accept: (line: string) => boolean,
  wrap: (raw: FileHandle) => F = (raw) => raw as unknown as F,
): Promise<OpenedJournal<F>> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  let content: Buffer;
  let created = false;
  try {
    content = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    content = Buffer.alloc(0);
    created = true;
  }
  const replay: JsonLinesReplay = { lines: 0, skippedLines: 0, truncatedBytes: 0 };
  const lastNewline = content.lastIndexOf(0x0a);
  const complete = content.subarray(0, lastNewline + 1);
  const tail = content.subarray(lastNewline + 1);
  for (const text of complete.toString('utf8').split('\n')) {
    if (text.trim() === '') continue;
    if (accept(text)) replay.lines += 1;
    else replay.skippedLines += 1;
  }
  const file = wrap(await open(path, 'a', 0o600));
  let size = complete.length;
  try {
    if (tail.length > 0) {
      if (accept(tail.toString('utf8'))) {
        // Written whole but the newline never made it: keep the record, it may have been acknowledged.
        replay.lines += 1;
        await appendFully(file, Buffer.from('\n'));
        size = content.length + 1;
      } else {
        await file.truncate(complete.length);
        replay.truncatedBytes = tail.length;
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
