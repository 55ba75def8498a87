/**
 * "Can Tally save recordings here?", asked before the producer relies on a folder: the folder is created if
 * missing, and a small file is written and removed, so permissions, a read-only disk or a file in the way
 * show up now rather than when the first recording arrives.
 */
import { isAbsolute } from 'node:path';
import { ensureWritableFolder } from '../folder-check.js';

export async function checkFolder(path: string): Promise<{ ok: boolean; message: string | null }> {
  if (!isAbsolute(path)) return { ok: false, message: 'Enter the full path of the folder.' };
  try {
    // The core's one folder check (created level by level, never a recursive mkdir that spins on /proc).
    await ensureWritableFolder(path, { source: 'the recordings folder' });
    return { ok: true, message: null };
  } catch (error) {
    const code = ((error as { cause?: NodeJS.ErrnoException }).cause ?? (error as NodeJS.ErrnoException)).code;
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? 'Tally is not allowed to write there.'
        : code === 'EROFS'
          ? 'The disk is read-only.'
          : code === 'ENOTDIR' || code === 'EEXIST'
            ? 'A file is in the way of that folder.'
            : code === 'ENOSPC'
              ? 'The disk is full.'
              : code === 'ENOENT'
                ? 'This file system does not allow folders there.'
                : code === 'ETIMEDOUT'
                  ? 'The folder did not answer in time.'
                  : `It cannot be written (${code ?? 'unknown error'}).`;
    return { ok: false, message: `Recordings cannot be saved in ${path}: ${why}` };
  }
}
