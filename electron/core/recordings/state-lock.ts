/**
 * One receiver per state folder. Two processes appending to the same journal (the tray app and a
 * `tally listen` on the same machine) would interleave records and both download every recording, so the
 * second one is refused with a clear message. A lock left by a killed process (kill -9, power loss) is
 * detected by its dead PID and taken over.
 */
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';

export const LOCK_FILE = 'receiver.lock';

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface StateLock {
  release(): Promise<void>;
}

/** Takes the lock of `dir` for this process, or throws a ConfigError naming the holder. */
export async function acquireStateLock(dir: string, label = 'Tally'): Promise<StateLock> {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(path, 'wx', 0o600);
      await fh.writeFile(JSON.stringify({ pid: process.pid, label, at: new Date().toISOString() }));
      await fh.sync();
      await fh.close();
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          await rm(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder: { pid?: unknown; label?: unknown } = {};
      try {
        holder = JSON.parse(await readFile(path, 'utf8')) as typeof holder;
      } catch {
        // A torn lock file (crash while writing it) is stale.
      }
      const pid = typeof holder.pid === 'number' ? holder.pid : -1;
      if (pid !== process.pid && alive(pid)) {
        throw new ConfigError(
          `Another ${typeof holder.label === 'string' ? holder.label : 'Tally'} (process ${pid}) is already receiving recordings with the state folder ${dir}. Stop it first, or set TALLY_HOME to another folder.`,
        );
      }
      await rm(path, { force: true });
    }
  }
  throw new ConfigError(`Could not take the lock ${path}.`);
}
