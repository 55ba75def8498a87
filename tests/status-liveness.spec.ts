/**
 * `tally status` decides who runs by asking (issue 30, finding 8): a stale run file whose PID now belongs to
 * another program (a spawned `sleep`) made status exit 2 "process N does not answer" for as long as that program
 * lived. Now the file is removed with a line on stderr and status exits 3, nothing runs; a holder that takes the
 * connection and never answers (hung) is still reported, and its file kept.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { main } from '../electron/cli.js';
import { captureIo } from './support/cli/io.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function home(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-status-ask-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'run'), { recursive: true, mode: 0o700 });
  return dir;
}

async function status(dir: string, json = true): Promise<{ code: number; out: string; err: string }> {
  const made = captureIo(new AbortController().signal, { TALLY_HOME: dir });
  const code = await main(['status', ...(json ? ['--json'] : [])], made.io);
  return { code, out: made.out(), err: made.err() };
}

it('removes a stale run file whose PID now belongs to another program, and exits 3: nothing runs', async () => {
  const dir = await home();
  const sleep = spawn('sleep', ['600'], { stdio: 'ignore' });
  cleanups.push(() => sleep.kill('SIGKILL'));
  const pid = sleep.pid as number;
  const socket = join(dir, 'run', `${pid}-a1b2c3.sock`);
  // What a `tally listen` killed with -9 leaves behind: its run file and its socket file.
  await writeFile(socket, '');
  await writeFile(
    join(dir, 'run', `${pid}-a1b2c3.json`),
    JSON.stringify({ pid, face: 'listen', startedAt: '2026-11-27T10:00:00.000Z', socket }),
  );

  const seen = await status(dir, false);
  expect(seen.code).toBe(3);
  expect(seen.out).toBe('No Tally is running on this computer (TALLY_HOME). Start the app or "tally listen".\n');
  expect(seen.err).toBe(
    `Removed the stale run file of tally listen (process ${pid}): nothing answers on its control socket, so process ${pid} is another program now.\n`,
  );
  expect(await readdir(join(dir, 'run'))).toEqual([]);
  expect(sleep.exitCode).toBeNull();
  // Asked again: nothing left to remove, nothing said.
  expect(await status(dir)).toEqual({ code: 3, out: '{"running":[],"state":null}\n', err: '' });
});

it('still reports a holder that takes the connection and never answers (hung), and keeps its file', async () => {
  const dir = await home();
  const socket = join(dir, 'run', `${process.pid}-d4e5f6.sock`);
  const hung = createServer(() => undefined);
  await new Promise<void>((resolve) => hung.listen(socket, resolve));
  cleanups.push(() => {
    hung.close();
  });
  const held: { destroy(): void }[] = [];
  hung.on('connection', (c) => held.push(c));
  cleanups.push(() => held.forEach((c) => c.destroy()));
  await writeFile(
    join(dir, 'run', `${process.pid}-d4e5f6.json`),
    JSON.stringify({ pid: process.pid, face: 'listen', startedAt: '2026-11-27T10:00:00.000Z', socket }),
  );
  const seen = await status(dir, false);
  expect(seen.code).toBe(2);
  expect(seen.out).toMatch(
    new RegExp(`^✖ tally listen \\(process ${process.pid}\\) does not answer: no answer within 3000 ms`),
  );
  expect(seen.err).toBe('');
  expect((await readdir(join(dir, 'run'))).sort()).toEqual([
    `${process.pid}-d4e5f6.json`,
    `${process.pid}-d4e5f6.sock`,
  ]);
}, 15_000);
