/**
 * What the health reads of the disks under the receiver's folders: the free space of each disk once (two
 * folders on one disk are one entry), a path that is not a folder (a file put in its place), or why it cannot
 * be read.
 */
import { stat, statfs } from 'node:fs/promises';
import { describeError } from '../logger.js';
import type { DiskFacts } from './health.js';

/** The disks under `folders` (the recordings folder, the state folder), in that order, each disk once. */
export async function diskFacts(folders: readonly string[]): Promise<DiskFacts[]> {
  const seen = new Set<number>();
  const disks: DiskFacts[] = [];
  for (const path of folders) {
    try {
      const found = await stat(path);
      if (!found.isDirectory()) {
        disks.push({ path, freeBytes: null, error: null, notFolder: true });
        continue;
      }
      const dev = found.dev;
      if (seen.has(dev)) continue;
      seen.add(dev);
      const fs = await statfs(path);
      disks.push({ path, freeBytes: Number(fs.bavail) * Number(fs.bsize), error: null });
    } catch (error) {
      disks.push({ path, freeBytes: null, error: describeError(error) });
    }
  }
  return disks;
}
