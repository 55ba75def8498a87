/**
 * The compacted copy of the journal: each job's latest snapshot copied as it is on disk (nothing is parsed), in
 * batches of about 1 MiB, so a journal of 100,000 jobs never becomes one big string. Split from inbox.ts, which
 * renames the copy into place and switches its index to the new offsets.
 */
import { fstatSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { appendFully } from '../jsonl-journal.js';
import type { JobIndex } from './job-index.js';
import { readFully } from './journal-lines.js';

const BATCH_BYTES = 1 << 20;

/**
 * Writes every job of `index` but `dropped` from the journal open as `reader` to `tmp` (fsync'd). Resolves with
 * each slot's new offset, the bytes and the lines written.
 */
export async function writeCompacted(
  tmp: string,
  reader: number,
  index: JobIndex,
  dropped: ReadonlySet<string>,
): Promise<{ moved: Float64Array; written: number; lineCount: number }> {
  const out = await open(tmp, 'w', 0o600);
  const moved = index.offsetsLike();
  let written = 0;
  let lineCount = 0;
  try {
    let batch: Buffer[] = [];
    let batchBytes = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const data = Buffer.concat(batch);
      await appendFully(out, data);
      written += data.length;
      batch = [];
      batchBytes = 0;
    };
    for (const { key, slot, offset, length } of index.entries()) {
      if (dropped.has(key)) continue;
      const line = Buffer.allocUnsafe(length + 1);
      readFully(reader, line, length, offset);
      line[length] = 0x0a;
      moved[slot] = written + batchBytes;
      batch.push(line);
      batchBytes += line.length;
      lineCount += 1;
      if (batchBytes >= BATCH_BYTES) await flush();
    }
    await flush();
    await out.sync();
  } finally {
    await out.close();
  }
  return { moved, written, lineCount };
}

/** Whether `path` no longer names the file open as `reader` (deleted, its folder deleted, or replaced). */
export async function journalMoved(path: string, reader: number): Promise<boolean> {
  const held = fstatSync(reader);
  try {
    const now = await stat(path);
    return now.ino !== held.ino || now.dev !== held.dev;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return true;
    throw error;
  }
}
