/**
 * Shared pieces of the reliability suites: hashing files, reading a child's memory and open file handles
 * from /proc, the environment that points `tally listen` at a sandbox, and waiting on many NDJSON events
 * with one deadline that reports exactly what is still missing.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { Sandbox } from '../../../electron/core/sandbox/index.js';
import type { ListenEvent, ListenProcess } from '../../support/listen-process.js';

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => hash.update(c))
      .once('error', reject)
      .once('end', () => resolve(hash.digest('hex')));
  });
}

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

/** Environment for `tally listen` against the sandbox (credentials from env, so no keychain is touched). */
export function listenEnv(sb: Sandbox, home: string): NodeJS.ProcessEnv {
  return {
    TALLY_HOME: home,
    TALLY_DOWNLOAD_ORIGINS: sb.downloadOrigin,
    TALLY_BASE_URL: sb.endpoints.baseUrl,
    TALLY_CONSOLE_API_URL: sb.endpoints.consoleApiUrl,
    TALLY_ADMIN_URL: sb.endpoints.adminUrl,
    TALLY_SERVICE_ID: sb.credentials.serviceId,
    TALLY_SECRET: sb.credentials.secret,
  };
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
