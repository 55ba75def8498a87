/**
 * A real small disk for the full-disk cases: a tmpfs of a given size mounted on a fresh temp folder (root only;
 * CI runs as root). Where it cannot be mounted the cases are skipped, except under CI, where a skip would hide
 * the very cases the suite exists for: there the suite fails instead (like the S3 spec without Ceph).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SmallDisk {
  /** The mount point (an empty folder on the small disk). */
  dir: string;
  /** Unmounts the disk and removes the folder. */
  close(): Promise<void>;
}

/** Mounts a tmpfs of `bytes` (rounded up to pages), or resolves null when this machine cannot. */
export async function mountSmallDisk(bytes: number): Promise<SmallDisk | null> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-disk-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', dir]);
  } catch {
    await rm(dir, { recursive: true, force: true });
    return null;
  }
  return {
    dir,
    async close() {
      await run('umount', ['-l', dir]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Whether a tmpfs can be mounted here; under CI, throws instead of answering no (see the file comment). */
export async function canMountSmallDisks(suite: string): Promise<boolean> {
  const probe = await mountSmallDisk(64 * 1024);
  if (probe) {
    await probe.close();
    return true;
  }
  if (process.env.CI) throw new Error(`${suite}: CI must be able to mount a tmpfs (run as root).`);
  return false;
}
