/**
 * Every `--help` example runs as printed: each example line of every command `tally --help` lists is run by bash,
 * verbatim, with `tally` on PATH as the built CLI, in a fresh folder, against a sandbox this test starts (its
 * variables in the environment, as `tally sandbox` prints them). An example that runs until Ctrl+C must print
 * something and then stop cleanly on SIGINT. The few lines that need what no offline test has (a public tunnel, a
 * remote team server, the OS keychain, a terminal to answer a question) are listed below with the reason; a new
 * example that is neither listed nor runnable fails here.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxEnv } from '../electron/cli/sandbox.js';
import { startSandbox, type Sandbox } from '../electron/core/sandbox/index.js';
import { ensureRendererBuilt } from './e2e/support/popover-harness.js';
import { ensureBuiltCli, ROOT, TALLY_BIN } from './support/built-cli.js';

/** Lines no offline test can run, and why. */
const NOT_OFFLINE: [RegExp, string][] = [
  [/ngrok|example\.com|studio\.local|--team nats:/, 'needs a public tunnel or a team server elsewhere'],
  [/^(printf .*\| )?tally log(in|out)\b/, 'writes the OS keychain (tests/keychain.spec.ts runs it on a real one)'],
  [/^tally end \S+$/, 'asks for confirmation on a terminal'],
  [/127\.0\.0\.1:\d+/, 'names a server on a fixed port of its own'],
  [/^tally (status|retry)\b/, 'asks a running listen, serve or tray app and its recordings (tests/health.spec.ts)'],
];

/** Lines that run until Ctrl+C. */
const RUNS_ON = /--watch|^tally (listen|follow|serve)\b|^tally sandbox(?!.* -- )/;

/** The channel the `tally end` examples name, live until one of them ends it. */
const EXAMPLE_CHANNEL = '1581324488053_Dc5aQ';

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let dir: string;
let sandbox: Sandbox;
let env: NodeJS.ProcessEnv;

/** Runs `command` in bash with the test's environment; `untilOutput` sends SIGINT once it printed a line. */
function run(command: string, cwd: string, untilOutput: boolean): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    const timer = setTimeout(() => {
      process.kill(-(child.pid as number), 'SIGKILL');
      reject(new Error(`"${command}" did not finish: ${stdout}${stderr}`));
    }, 25_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (untilOutput && !interrupted && stdout.includes('\n')) {
        interrupted = true;
        // Ctrl+C in a terminal signals the whole foreground process group: bash and tally alike.
        process.kill(-(child.pid as number), 'SIGINT');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

async function tally(args: string): Promise<string> {
  const result = await run(`tally ${args}`, dir, false);
  return result.stdout;
}

/** The example lines of one command's help, without their trailing comments. */
function examplesOf(help: string): string[] {
  const at = help.indexOf('\nExamples:\n');
  if (at === -1) return [];
  const lines: string[] = [];
  for (const line of help.slice(at + '\nExamples:\n'.length).split('\n')) {
    if (!line.startsWith('  ')) break;
    lines.push(line.replace(/\s+#\s.*$/, '').trim());
  }
  return lines;
}

beforeAll(async () => {
  await ensureBuiltCli();
  ensureRendererBuilt(ROOT);
  dir = await mkdtemp(join(tmpdir(), 'tally-help-examples-'));
  const bin = join(dir, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'tally'), `#!/bin/sh\nexec '${process.execPath}' '${TALLY_BIN}' "$@"\n`);
  await chmod(join(bin, 'tally'), 0o755);
  sandbox = await startSandbox({ searchIndexDelayMs: 0, seed: 5 });
  env = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: dir,
    TALLY_HOME: join(dir, 'state'),
    ...sandboxEnv(sandbox),
    TALLY_RETRIES: '0',
  };
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the --help examples', () => {
  it('every command tally --help lists has examples, and each one runs verbatim or says why it cannot here', async () => {
    const main = await tally('--help');
    const commands = [...main.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1] as string);
    expect(commands).toEqual(expect.arrayContaining(['live', 'search', 'end', 'listen', 'serve', 'sandbox']));

    const ran: string[] = [];
    const skipped: string[] = [];
    sandbox.control.startBroadcast({ id: EXAMPLE_CHANNEL, record: false, watchers: 2 });
    for (const name of commands) {
      const examples = examplesOf(await tally(`${name} --help`));
      expect(examples, `tally ${name} --help has no examples`).not.toEqual([]);
      for (const example of examples) {
        const why = NOT_OFFLINE.find(([pattern]) => pattern.test(example))?.[1];
        if (why) {
          skipped.push(`${example}: ${why}`);
          continue;
        }
        // Something live for the examples that end a channel (the named one first, then any).
        if (sandbox.control.listBroadcasts({ state: 'live' }).length === 0) {
          sandbox.control.startBroadcast({ id: `example-${ran.length}`, record: false, watchers: 2 });
        }
        // Each example in a folder of its own, as a producer would try it.
        const cwd = await mkdtemp(join(dir, 'try-'));
        const runsOn = RUNS_ON.test(example);
        const outcome = await run(example, cwd, runsOn);
        const said = `${example}\n${outcome.stdout}${outcome.stderr}`;
        if (runsOn) {
          expect(outcome.stdout, said).toMatch(/\S/);
          // Stopped by Ctrl+C: a clean stop (0), or the shell's report of the interrupt (130).
          expect([0, 130], said).toContain(outcome.code ?? 128 + 2);
        } else {
          expect(outcome.code, said).toBe(0);
        }
        ran.push(example);
      }
    }
    // What could not run here, for the log: each line with its reason.
    console.info(`not run offline:\n  ${skipped.join('\n  ')}`);
    expect(ran).toEqual(
      expect.arrayContaining([
        "tally live --json | jq '.[].id'",
        `tally end ${EXAMPLE_CHANNEL} --yes`,
        'tally sandbox --quiet -- tally live',
        'tally listen --sandbox --folder ./try-it',
        'tally serve --sandbox',
      ]),
    );
  }, 300_000);
});
