/**
 * The receiver lock asks its holder (issue 30, finding 8): a lock written without a start time (an older
 * Tally's) whose PID now belongs to another program (a spawned `sleep`) neither blocks a start nor blames that
 * program; a lock whose holder answers on its control socket still refuses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LOCK_FILE, acquireStateLock, processStart } from './state-lock.js';

let dir: string;
const cleanups: (() => unknown)[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-lock-ask-'));
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await rm(dir, { recursive: true, force: true });
});

/** Another program that runs for as long as the test: its PID is "reused" by the tests below. */
function innocent(): ChildProcess {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  cleanups.push(() => child.kill('SIGKILL'));
  return child;
}

it('takes over a lock without a start time whose PID is another program now, and blames nobody', async () => {
  const sleep = innocent();
  const pid = sleep.pid as number;
  await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid, label: 'Tally', at: '2026-11-01T00:00:00.000Z' }));
  const lock = await acquireStateLock(dir, 'tally listen');
  cleanups.push(() => lock.release());
  expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
  expect(lock.tookOver).toBe(
    `a stale receiver lock was taken over: the lock has no start time (an older Tally wrote it) and process ${pid} has no control socket that answers`,
  );
  // The innocent program was only asked about, never signalled.
  expect(sleep.exitCode).toBeNull();
  expect(sleep.signalCode).toBeNull();
});

it('takes over a lock whose run file names a control socket nobody listens on', async () => {
  const pid = innocent().pid as number;
  const run = join(dir, 'run');
  await mkdir(run, { recursive: true });
  // A socket file left behind by a holder that was killed: a plain file where the socket was.
  await writeFile(join(run, `${pid}-abc.sock`), '');
  const info = { pid, face: 'listen', startedAt: '2026-11-01T00:00:00.000Z', socket: join(run, `${pid}-abc.sock`) };
  await writeFile(join(run, `${pid}-abc.json`), JSON.stringify(info));
  await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid, start: processStart(pid), label: 'Tally' }));
  const lock = await acquireStateLock(dir);
  cleanups.push(() => lock.release());
  expect(lock.tookOver).toMatch(/nothing answers on the control socket of process \d+, so it is another program now$/);
});

it('refuses while the holder answers on its control socket, even without a start time', async () => {
  const pid = innocent().pid as number;
  const run = join(dir, 'run');
  await mkdir(run, { recursive: true });
  const socket = join(run, `${pid}-def.sock`);
  const server: Server = createServer((conn) => conn.end());
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  const info = { pid, face: 'listen', startedAt: '2026-11-01T00:00:00.000Z', socket };
  await writeFile(join(run, `${pid}-def.json`), JSON.stringify(info));
  await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid, label: 'Tally' }));
  await expect(acquireStateLock(dir)).rejects.toThrow(`Another Tally (process ${pid}) is already receiving`);
});
