import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { LOCK_FILE, acquireStateLock, processStart } from './state-lock.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The PID of a process that has certainly exited (a child we ran to completion). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid as number;
}

describe('acquireStateLock', () => {
  it('writes a private lock naming this process, and removes it on release (twice is fine)', async () => {
    const lock = await acquireStateLock(dir, 'tally listen');
    const path = join(dir, LOCK_FILE);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid, label: 'tally listen' });
    if (process.platform !== 'win32') expect((await stat(path)).mode & 0o777).toBe(0o600);
    await lock.release();
    await lock.release();
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses while another live process holds the folder, naming it and what to do', async () => {
    // The parent of this test process is alive for as long as the test runs; the lock names its start time, as
    // a lock of this Tally does (one without it is asked over a control socket: state-lock-liveness.spec.ts).
    const start = processStart(process.ppid);
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, start, label: 'Tally (tray)' }));
    const refused = acquireStateLock(dir);
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    await expect(refused).rejects.toThrow(
      `Another Tally (tray) (process ${process.ppid}) is already receiving recordings with the state folder ${dir}. Stop it first, or set TALLY_HOME to another folder.`,
    );
  });

  it('takes over a lock left by a killed process, and a torn lock file', async () => {
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: await deadPid(), label: 'Tally' }));
    const first = await acquireStateLock(dir);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    await first.release();

    await writeFile(join(dir, LOCK_FILE), '{"pid": 12');
    const second = await acquireStateLock(dir);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    await second.release();
  });
});
