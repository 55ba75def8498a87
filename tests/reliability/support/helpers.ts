/**
 * Shared pieces of the reliability suites: reading a child's memory and open file handles from /proc, and
 * waiting on many NDJSON events with one deadline that reports exactly what is still missing. Hashing files and
 * the environment that points `tally listen` at a sandbox come from tests/support and are re-exported here.
 */
import { readdir, readFile } from 'node:fs/promises';
import type { ListenEvent, ListenProcess } from '../../support/listen-process.js';

export { listenEnv, sha256File } from '../../support/sandbox-files.js';

export interface ResourceSample {
  rssMb: number;
  fds: number;
}

/** VmRSS and the number of open descriptors of a live process (Linux /proc). */
export async function sampleResources(pid: number): Promise<ResourceSample> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? NaN);
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  return { rssMb: kb / 1024, fds };
}

/**
 * Resolves once `predicate` holds over the events seen so far, re-checking on every new event; rejects with
 * `describe()` of what is missing if `deadlineMs` passes first (a deadline, not a sleep: it only bounds a hang)
 * or if the process exits.
 */
export function waitUntil(
  proc: ListenProcess,
  predicate: (events: ListenEvent[]) => boolean,
  describe: () => string,
  deadlineMs: number,
): Promise<void> {
  if (predicate(proc.events)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      proc.child.stdout?.off('data', onData);
      if (error) reject(error);
      else resolve();
    };
    // Events are parsed line by line after each chunk; re-check on the next turn so the parser has run.
    const onData = () => setImmediate(() => predicate(proc.events) && finish());
    const timer = setTimeout(
      () => finish(new Error(`deadline of ${deadlineMs} ms passed: ${describe()}\n${proc.stderr()}`)),
      deadlineMs,
    );
    proc.child.stdout?.on('data', onData);
    void proc.exited.then(({ code, signal }) =>
      finish(new Error(`tally listen exited (${code ?? signal}): ${describe()}\n${proc.stderr()}`)),
    );
  });
}
