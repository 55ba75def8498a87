/**
 * One receiver per state folder. Two processes appending to the same journal (the tray app and a
 * `tally listen` on the same machine) would interleave records and both download every recording, so the
 * second one is refused with a clear message. A lock left by a killed process (kill -9, power loss) is
 * detected by its dead PID and taken over. A PID alone is not an identity: after a reboot or enough processes
 * it belongs to someone else, and a stale lock then blocked every start while blaming an innocent process
 * (issue 20). Where the system says when a process started (Linux /proc), the lock holds that too, and a live
 * PID that started at another time is not the holder. Beyond that the holder is asked (issue 30, finding 8): a
 * Tally that holds the lock answers on its control socket (named by its run file in `<dir>/run/`), so a live
 * PID with a run file whose socket takes no connection, or a lock without a start time (an older Tally's)
 * whose PID has no run file that answers, is stale: it is taken over, with a note, and nobody is blamed.
 */
import { readFileSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { knock, readRunFiles } from '../run-files.js';

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
  /** Set when a stale lock was taken over: whose it was and why it was found stale (one line, for the log). */
  readonly tookOver: string | null;
  release(): Promise<void>;
  /** Writes the lock file again if it vanished (the state folder was deleted while running). */
  restore(): Promise<void>;
}

/**
 * Whether the process the lock names is still the one that wrote it: null when it is, else why not. A PID that
 * is alive is asked over its control socket (see the file comment); only a lock with a matching start time is
 * trusted without a run file (a pipeline opened without a control socket: the demo, a test).
 */
async function staleBecause(dir: string, pid: number, start: unknown): Promise<string | null> {
  if (!alive(pid)) return `process ${pid} has ended`;
  if (typeof start === 'string') {
    const now = processStart(pid);
    if (now !== null && now !== start) return `process ${pid} is another program now (it started at another time)`;
  }
  const runs = (await readRunFiles(dir)).filter((r) => r.info.pid === pid);
  const verdicts = await Promise.all(runs.map((r) => knock(r.info.socket)));
  if (verdicts.some((v) => v !== 'gone')) return null;
  if (runs.length > 0) return `nothing answers on the control socket of process ${pid}, so it is another program now`;
  return typeof start === 'string'
    ? null
    : `the lock has no start time (an older Tally wrote it) and process ${pid} has no control socket that answers`;
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
  let tookOver: string | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await write();
      let released = false;
      return {
        tookOver,
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
      // This very process's own lock (a pipeline reopened in the same process) is taken back without a note.
      const stale =
        pid === process.pid ? null : pid === -1 ? 'the lock file is torn' : await staleBecause(dir, pid, holder.start);
      if (stale === null && pid !== process.pid) {
        throw new ConfigError(
          `Another ${typeof holder.label === 'string' ? holder.label : 'Tally'} (process ${pid}) is already receiving recordings with the state folder ${dir}. Stop it first, or set TALLY_HOME to another folder.`,
        );
      }
      if (stale !== null) tookOver = `a stale receiver lock was taken over: ${stale}`;
      await rm(path, { force: true });
    }
  }
  throw new ConfigError(`Could not take the lock ${path}.`);
}
