/**
 * One receiver per state folder. Two processes appending to the same journal (the tray app and a
 * `tally listen` on the same machine) would interleave records and both download every recording, so the
 * second one is refused with a clear message. A lock left by a killed process (kill -9, power loss) is
 * detected by its dead PID and taken over. A PID alone is not an identity: after a reboot or enough processes
 * it belongs to someone else, and a stale lock then blocked every start while blaming an innocent process
 * (issue 20). Where the system says when a process started (Linux /proc), the lock holds that too, and a live
 * PID that started at another time is not the holder.
 */
import { readFileSync } from 'node:fs';
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

/** When process `pid` started, as the kernel counts it (clock ticks since boot) with the boot it is from, or null. */
export function processStart(pid: number): string | null {
  if (process.platform !== 'linux') return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields[19];
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return ticks ? `${boot}:${ticks}` : null;
  } catch {
    return null;
  }
}

export interface StateLock {
  release(): Promise<void>;
  /** Writes the lock file again if it vanished (the state folder was deleted while running). */
  restore(): Promise<void>;
}

/** Whether the process the lock names is still the one that wrote it. */
function holds(pid: number, start: unknown): boolean {
  if (pid === process.pid || !alive(pid)) return false;
  if (typeof start !== 'string') return true;
  const now = processStart(pid);
  return now === null || now === start;
}

/** Takes the lock of `dir` for this process, or throws a ConfigError naming the holder. */
export async function acquireStateLock(dir: string, label = 'Tally'): Promise<StateLock> {
  const path = join(dir, LOCK_FILE);
  const start = processStart(process.pid);
  const write = async (): Promise<void> => {
    const fh = await open(path, 'wx', 0o600);
    try {
      await fh.writeFile(
        JSON.stringify({ pid: process.pid, ...(start ? { start } : {}), label, at: new Date().toISOString() }),
      );
      await fh.sync();
    } finally {
      await fh.close();
    }
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await write();
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          await rm(path, { force: true });
        },
        async restore() {
          if (released) return;
          await write().catch((error: unknown) => {
            if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
          });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder: { pid?: unknown; label?: unknown; start?: unknown } = {};
      try {
        holder = JSON.parse(await readFile(path, 'utf8')) as typeof holder;
      } catch {
        // A torn lock file (crash while writing it) is stale.
      }
      const pid = typeof holder.pid === 'number' ? holder.pid : -1;
      if (holds(pid, holder.start)) {
        throw new ConfigError(
          `Another ${typeof holder.label === 'string' ? holder.label : 'Tally'} (process ${pid}) is already receiving recordings with the state folder ${dir}. Stop it first, or set TALLY_HOME to another folder.`,
        );
      }
      await rm(path, { force: true });
    }
  }
  throw new ConfigError(`Could not take the lock ${path}.`);
}
