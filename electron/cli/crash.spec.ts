import { EventEmitter } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureIo } from '../../tests/support/cli/io.js';
import { closeCommandLog, openCommandLog } from './command-log.js';
import { EXIT_SOFTWARE, installCliCrashHandlers } from './crash.js';

const homes: string[] = [];
afterEach(async () => {
  await closeCommandLog();
  for (const home of homes.splice(0)) await rm(home, { recursive: true, force: true });
});

async function setup() {
  const home = await mkdtemp(join(tmpdir(), 'tally-cli-crash-'));
  homes.push(home);
  const run = captureIo(new AbortController().signal, { TALLY_HOME: home });
  await openCommandLog(run.io, 'listen');
  const proc = Object.assign(new EventEmitter(), {
    exitCode: undefined as number | undefined,
    exits: [] as number[],
    exit(code: number): never {
      proc.exits.push(code);
      return undefined as never;
    },
  });
  let stops = 0;
  installCliCrashHandlers({ process: proc, stderr: run.io.stderr, stop: () => stops++, forceExitMs: 60_000 });
  const file = () => readFile(join(home, 'logs', 'listen.1.log'), 'utf8');
  return { proc, run, file, stops: () => stops, home };
}

describe('installCliCrashHandlers', () => {
  it('logs a lost promise with its stack in the log file, says it once on stderr, and carries on', async () => {
    const { proc, run, file, stops, home } = await setup();
    proc.emit('unhandledRejection', new Error('lost: secret=abc123456'));
    proc.emit('unhandledRejection', new Error('lost again'));
    const text = await file();
    expect(text).toContain('unexpected error: Error: lost: secret=[redacted]\\n    at ');
    expect(text).not.toContain('abc123456');
    expect(text).toContain('lost again');
    const said = run
      .err()
      .split('\n')
      .filter((l) => l.startsWith('tally: '));
    expect(said).toEqual([
      `tally: unexpected error: lost: secret=abc123456. Carrying on. The details are in ${join(home, 'logs')}.`,
    ]);
    expect(stops()).toBe(0);
    expect(proc.exitCode).toBeUndefined();
  });

  it('stops the command the graceful way after an uncaught exception, with exit code 70', async () => {
    const { proc, run, file, stops } = await setup();
    proc.emit('uncaughtException', new Error('state broken'));
    proc.emit('uncaughtException', new Error('and again'));
    expect(stops()).toBe(1);
    expect(proc.exitCode).toBe(EXIT_SOFTWARE);
    expect(proc.exits).toEqual([]);
    expect(await file()).toContain('state broken');
    expect(run.err()).toContain('Stopping to be safe (exit code 70)');
  });
});
