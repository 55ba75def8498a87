/**
 * The compacted copy of the journal: each job's latest snapshot copied as it is on disk (nothing is parsed), in
 * batches of about 1 MiB, so a journal of 100,000 jobs never becomes one big string. Split from inbox.ts, which
 * renames the copy into place and switches its index to the new offsets.
 */
import { fstatSync, statSync } from 'node:fs';
import { copyFile, open } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { syncDir } from '../durable-fs.js';
import { appendFully } from '../jsonl-journal.js';
import type { JobIndex } from './job-index.js';
import { JOURNAL_FILE, MAX_BATCH_BYTES, readFully } from './journal-lines.js';

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
      if (batchBytes >= MAX_BATCH_BYTES) await flush();
    }
    await flush();
    await out.sync();
  } finally {
    await out.close();
  }
  return { moved, written, lineCount };
}

/**
 * Whether `path` no longer names the file open as `reader` (deleted, its folder deleted, or replaced). Synchronous:
 * it runs before every journal commit, and two stat calls on the local state folder take microseconds, where a
 * trip through the thread pool cost a commit about a fifth of its time in a burst (issue 22).
 */
export function journalMoved(path: string, reader: number): boolean {
  const held = fstatSync(reader);
  try {
    const now = statSync(path);
    return now.ino !== held.ino || now.dev !== held.dev;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return true;
    throw error;
  }
}

/**
 * Copies a journal that had damaged lines to `<name>.damaged-<time>` beside it, and says so in one line: damage
 * used to be skipped without a word, and an all-garbage journal lost its acknowledged jobs silently (issue 20).
 * Resolves with the copy's path (null when the copy failed: that is said too).
 */
export async function keepDamaged(path: string, found: string, log: Logger | undefined): Promise<string | null> {
  const aside = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  let kept: string | null = aside;
  try {
    await copyFile(path, aside);
    await syncDir(join(aside, '..'));
  } catch {
    kept = null;
  }
  log?.warn(`journal: ${found}; ${kept ? `the file as it was is kept as ${kept}` : 'a copy of it could not be kept'}`);
  return kept;
}

/** Runs `opening`; a journal that is a folder (or unreadable) becomes one clear ConfigError instead of a crash. */
export async function openJournal<T>(dir: string, opening: () => Promise<T>): Promise<T> {
  try {
    return await opening();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') {
      throw new ConfigError(
        `The recordings journal ${join(dir, JOURNAL_FILE)} is a folder, not a file. Move it away (Tally then starts a new journal) or set TALLY_HOME to another state folder.`,
        { cause: error },
      );
    }
    throw error;
  }
}
