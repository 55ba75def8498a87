/**
 * Free-space checks. A recording that cannot fit is refused before the first byte is fetched, so a full disk
 * shows up as a clear message instead of a half-written file and a cryptic ENOSPC later.
 */
import { statfs as nodeStatfs } from 'node:fs/promises';
import { DiskFullError } from './errors.js';

/** The part of `fs.statfs` we use (a test seam). */
export type StatfsFunction = (path: string) => Promise<{ bavail: number | bigint; bsize: number | bigint }>;

/** Bytes available to this (unprivileged) user in the file system holding `folder`, or null when unknown. */
export async function freeBytes(folder: string, statfs: StatfsFunction = nodeStatfs): Promise<number | null> {
  try {
    const stats = await statfs(folder);
    return Number(stats.bavail) * Number(stats.bsize);
  } catch {
    // Some network file systems do not implement statfs: the write itself will report ENOSPC then.
    return null;
  }
}

/**
 * Throws DiskFullError when `folder` has fewer than `neededBytes` available. Unknown free space passes.
 * @throws DiskFullError
 */
export async function ensureFreeSpace(
  folder: string,
  neededBytes: number,
  statfs: StatfsFunction = nodeStatfs,
): Promise<void> {
  if (neededBytes <= 0) return;
  const available = await freeBytes(folder, statfs);
  if (available !== null && available < neededBytes) throw new DiskFullError(folder, neededBytes, available);
}

/** Whether an error from the file system means "no space" (disk full or quota exceeded). */
export function isNoSpaceError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
