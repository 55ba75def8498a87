/**
 * The crash handlers of the real `node bin/tally.js listen` process: an error nobody caught is injected through
 * a `--import` hook on SIGUSR2 (after the receiver is up), and the process must log it with its stack in
 * <data>/logs/listen.1.log, say it once on stderr, and then carry on (a lost promise) or stop the graceful way
 * with exit code 70 (an uncaught exception).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuiltCli, ROOT } from './support/built-cli.js';

const homes: string[] = [];
afterAll(async () => {
  for (const home of homes) await rm(home, { recursive: true, force: true });
});
beforeAll(() => ensureBuiltCli(), 180_000);

/** On SIGUSR2, the hook throws (`throw`) or rejects a promise nobody awaits (`reject`), outside any handler. */
const HOOK =
  "process.on('SIGUSR2', () => setImmediate(() => {" +
  " const e = new Error('injected ' + process.env.TALLY_TEST_CRASH + ' secret=hunter2hunter2');" +
  " if (process.env.TALLY_TEST_CRASH === 'throw') throw e; void Promise.reject(e); }));";

async function listen(mode: 'throw' | 'reject') {
  const home = await mkdtemp(join(tmpdir(), 'tally-cli-crash-'));
  homes.push(home);
  const child = spawn(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(HOOK)}`,
      join(ROOT, 'bin/tally.js'),
      'listen',
      '--ndjson',
      '--folder',
      join(home, 'recordings'),
      '--port',
      '0',
      '--tunnel',
      'none',
    ],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: home, TALLY_HOME: home, TALLY_TEST_CRASH: mode },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextEvent = async (type: string) => {
    for (;;) {
      const { value, done } = await lines.next();
      if (done) throw new Error(`no ${type} event; stderr: ${stderr}`);
      if ((JSON.parse(value as string) as { type: string }).type === type) return;
    }
  };
  const stderrLine = (pattern: RegExp) =>
    new Promise<string>((resolve) => {
      const check = () => {
        const line = stderr.split('\n').find((l) => pattern.test(l));
        if (line === undefined) return;
        child.stderr.off('data', check);
        resolve(line);
      };
      child.stderr.on('data', check);
      check();
    });
  const log = () => readFile(join(home, 'logs', 'listen.1.log'), 'utf8');
  return { child, exited, nextEvent, stderrLine, log, stderr: () => stderr };
}

describe('tally listen when an error escapes', () => {
  it('logs a lost promise with its stack, says it once, and keeps receiving', async () => {
    const run = await listen('reject');
    await run.nextEvent('ready');
    run.child.kill('SIGUSR2');
    const said = await run.stderrLine(/^tally: unexpected error:/);
    expect(said).toMatch(/injected reject .*Carrying on\. The details are in .*\/logs\.$/);
    const logged = async () => (await run.log()).match(/unexpected error: Error: injected reject/g)?.length ?? 0;
    const before = await logged();
    expect(before).toBeGreaterThan(0);
    run.child.kill('SIGUSR2');
    await expect.poll(logged).toBeGreaterThan(before);
    expect(run.stderr().match(/^tally: unexpected error/gm)).toHaveLength(1);
    const text = await run.log();
    expect(text).toContain('unexpected error: Error: injected reject secret=[redacted]\\n    at ');
    expect(text).not.toContain('hunter2hunter2');
    // Still running: a graceful stop now exits 0.
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 60_000);

  it('stops the graceful way with exit code 70 after an uncaught exception', async () => {
    const run = await listen('throw');
    await run.nextEvent('ready');
    run.child.kill('SIGUSR2');
    expect(await run.exited).toBe(70);
    expect(run.stderr()).toMatch(/tally: unexpected error: injected throw .*Stopping to be safe \(exit code 70\)/);
    const text = await run.log();
    expect(text).toContain('unexpected error: Error: injected throw secret=[redacted]\\n    at ');
  }, 60_000);
});
