/**
 * The real `tally` command in a bench: the built CLI started through bin/tally.js with the Node flags of its
 * shebang, as a user starts it, with `--ndjson` output read line by line. Memory is the kernel's figures for
 * the process (VmRSS now, VmHWM the high-water mark), read from /proc while it runs.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cliNodeFlags } from './child.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/tally.js');

export type CliEvent = Record<string, unknown>;

export interface CliProcess {
  pid: number;
  /** The next event of `type`; rejects on a `failed`/`expired` event or when the process exits first. */
  next(type: string): Promise<CliEvent>;
  /** Calls `listener` with every event from now on (with the time it was read). */
  onEvent(listener: (event: CliEvent, at: number) => void): void;
  /** Resident set size now, in MB. */
  rssMb(): Promise<number>;
  /** The process's peak resident set size so far, in MB. */
  peakRssMb(): Promise<number>;
  /** CPU time the process has used so far (all its threads, user and system), in seconds. */
  cpuSeconds(): Promise<number>;
  /** SIGTERM, and resolves once it exited. */
  stop(): Promise<void>;
}

/**
 * CPU seconds a process has used so far (user + system, every thread), from /proc/<pid>/stat: on a shared machine
 * its wall times move with the load, its CPU much less.
 */
export async function cpuSecondsOf(pid: number): Promise<number> {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in clock ticks
  // of 1/100 s (USER_HZ).
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const statusKb = async (pid: number, field: string): Promise<number> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
};

/** Starts `tally <args>` with a clean environment (`env` added to PATH and HOME=`home`). */
export async function startCli(args: string[], home: string, env: NodeJS.ProcessEnv = {}): Promise<CliProcess> {
  const flags = await cliNodeFlags();
  const child = spawn(process.execPath, [...flags, BIN, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: home, TALLY_HOME: join(home, 'home'), ...env },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout });
  const pid = child.pid as number;
  return {
    pid,
    next: (type) =>
      new Promise((resolve, reject) => {
        const onLine = (line: string) => {
          const event = JSON.parse(line) as CliEvent;
          if (event.type === type) {
            lines.off('line', onLine);
            resolve(event);
          }
          if (event.type === 'failed' || event.type === 'expired') reject(new Error(`tally ${args[0]}: ${line}`));
        };
        lines.on('line', onLine);
        void exited.then((code) => reject(new Error(`tally ${args[0]} exited (${code}) before ${type}: ${stderr}`)));
      }),
    onEvent: (listener) => lines.on('line', (line) => listener(JSON.parse(line) as CliEvent, performance.now())),
    rssMb: async () => (await statusKb(pid, 'VmRSS')) / 1024,
    peakRssMb: async () => (await statusKb(pid, 'VmHWM')) / 1024,
    cpuSeconds: () => cpuSecondsOf(pid),
    async stop() {
      child.kill('SIGTERM');
      await exited;
      lines.close();
    },
  };
}

export interface ListenRun {
  peakRssMb: number;
  readyRssMb: number;
  /** From the webhook's POST to the `saved` event: download, verification, fsync. */
  ms: number;
  /** CPU seconds the process used over the same span. */
  cpu: number;
  path: string;
}

/**
 * `tally listen` receiving one webhook for `url` (a recording of `bytes`) and saving it into `<dir>/recordings`;
 * resolves after the save, with the process's memory read before it stops. `env` is added to its environment
 * (NODE_EXTRA_CA_CERTS for an origin signed by the bench's own CA).
 */
export async function runListen(
  url: string,
  bytes: number,
  dir: string,
  env: NodeJS.ProcessEnv = {},
): Promise<ListenRun> {
  const folder = join(dir, 'recordings');
  const cli = await startCli(['listen', '--ndjson', '--folder', folder, '--port', '0', '--tunnel', 'none'], dir, {
    TALLY_DOWNLOAD_ORIGINS: new URL(url).origin,
    ...env,
  });
  try {
    const ready = await cli.next('ready');
    const readyRssMb = await cli.rssMb();
    const saved = cli.next('saved');
    const cpu = await cli.cpuSeconds();
    const started = performance.now();
    const answer = await fetch(String(ready.localUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'bench-recording', url, filesize: String(bytes) }),
    });
    if (answer.status !== 200) throw new Error(`webhook answered ${answer.status}`);
    const event = await saved;
    const ms = performance.now() - started;
    const used = (await cli.cpuSeconds()) - cpu;
    const peakRssMb = await cli.peakRssMb();
    if (event.bytes !== bytes) throw new Error(`saved ${String(event.bytes)} bytes, expected ${bytes}`);
    return { peakRssMb, readyRssMb, ms, cpu: used, path: String(event.path) };
  } finally {
    await cli.stop();
  }
}
