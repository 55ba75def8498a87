/**
 * Keeps a folder to its newest recordings: the demo's own folder would otherwise grow for as long as the demo
 * runs (issue 10: 639 MB in 30 minutes). Only finished recordings count and go; parts, sidecars, reservations
 * and links (never followed) are left alone, and nothing below the folder is touched.
 */
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Names that belong to a download in progress, not to a finished recording. */
const IN_PROGRESS = /\.(part|part\.json|part\.json\.tmp|reserved|tmp)$/i;

/** Deletes the oldest finished recordings of `dir` beyond the newest `keep`; a missing folder is nothing to do. */
export async function keepNewestRecordings(dir: string, keep: number): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const files = await Promise.all(
    names
      .filter((name) => !IN_PROGRESS.test(name))
      .map(async (name) => {
        const path = join(dir, name);
        const info = await lstat(path).catch(() => null);
        return info?.isFile() ? { path, mtime: info.mtimeMs } : null;
      }),
  );
  const old = files
    .filter((f) => f !== null)
    .sort((a, b) => b.mtime - a.mtime)
    .slice(keep);
  await Promise.all(old.map((f) => rm(f.path, { force: true })));
  return old.length;
}
