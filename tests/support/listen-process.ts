/**
 * `tally listen --ndjson` as a real child process, with its events parsed line by line, so tests can wait
 * on what it says (never on time) and kill it with SIGKILL like a crash would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ROOT, TALLY_BIN } from './built-cli.js';

export interface ListenEvent {
  type: string;
  [key: string]: unknown;
}

export interface ListenProcess {
  readonly child: ChildProcess;
  readonly events: ListenEvent[];
  /** stderr so far (for failure messages). */
  stderr(): string;
  /** Resolves with the first event (already seen or future) matching `predicate`. */
  waitFor(predicate: (e: ListenEvent) => boolean, what?: string): Promise<ListenEvent>;
  /** Resolves with the exit code / signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startListen(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { nodeArgs?: string[] } = {},
): ListenProcess {
  return startTally('listen', args, env, options);
}

/** Any long-running `tally <command> --ndjson` (listen, follow) as a child process. */
export function startTally(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { cwd?: string; nodeArgs?: string[] } = {},
): ListenProcess {
  // nodeArgs go to node itself, before the entry point (an --import hook).
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), TALLY_BIN, command, '--ndjson', ...args], {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: ListenEvent[] = [];
  const waiters: { predicate: (e: ListenEvent) => boolean; resolve: (e: ListenEvent) => void }[] = [];
  let stderr = '';
  let stdoutNoise = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const rl = createInterface({ input: child.stdout! });
  rl.on('line', (line) => {
    let event: ListenEvent;
    try {
      event = JSON.parse(line) as ListenEvent;
    } catch {
      stdoutNoise += `${line}\n`;
      return;
    }
    events.push(event);
    for (const w of [...waiters]) {
      if (w.predicate(event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
  });
  return {
    child,
    events,
    stderr: () => stderr + (stdoutNoise ? `\n(non-JSON stdout)\n${stdoutNoise}` : ''),
    exited,
    waitFor(predicate, what = 'event') {
      const seen = events.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ predicate, resolve });
        void exited.then(({ code, signal }) =>
          reject(new Error(`tally ${command} exited (${code ?? signal}) before ${what}.\n${stderr}`)),
        );
      });
    },
  };
}
