/**
 * "Can Tally save recordings here?", asked before the producer relies on a folder: the folder is created if
 * missing, and a small file is written and removed, so permissions, a read-only disk or a file in the way
 * show up now rather than when the first recording arrives.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';

export async function checkFolder(path: string): Promise<{ ok: boolean; message: string | null }> {
  if (!isAbsolute(path)) return { ok: false, message: 'Enter the full path of the folder.' };
  const probe = join(path, `.tally-check-${randomBytes(6).toString('hex')}`);
  try {
    await mkdir(path, { recursive: true });
    await writeFile(probe, 'tally', { flag: 'wx' });
    return { ok: true, message: null };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? 'Tally is not allowed to write there.'
        : code === 'EROFS'
          ? 'The disk is read-only.'
          : code === 'ENOTDIR' || code === 'EEXIST'
            ? 'A file is in the way of that folder.'
            : code === 'ENOSPC'
              ? 'The disk is full.'
              : `It cannot be written (${code ?? 'unknown error'}).`;
    return { ok: false, message: `Recordings cannot be saved in ${path}: ${why}` };
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
}
