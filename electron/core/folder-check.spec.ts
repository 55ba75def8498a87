/**
 * Folders are checked (created level by level, then a real file written) before anything relies on them:
 * bad folders give one clear ConfigError naming the folder and where it came from, and nothing spins.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { captureIo } from '../../tests/support/cli/io.js';
import { createAppCore } from './app/app-core.js';
import { MemorySecretStore } from './credentials.js';
import { ConfigError } from './errors.js';
import { ensureWritableFolder } from './folder-check.js';
import { openSettingsStore } from './settings.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-folder-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const source = 'the recordings folder (--folder)';

describe('ensureWritableFolder', () => {
  it('creates every missing level and leaves no probe file behind', async () => {
    const dir = await temp();
    const folder = join(dir, 'a', 'b', 'c');
    await expect(ensureWritableFolder(folder, { source })).resolves.toBe(folder);
    expect(await readdir(folder)).toEqual([]);
  });

  it('accepts a folder reached through a symbolic link the user made (a recordings disk)', async () => {
    const dir = await temp();
    await mkdir(join(dir, 'disk'));
    await symlink(join(dir, 'disk'), join(dir, 'Recordings'));
    await expect(ensureWritableFolder(join(dir, 'Recordings'), { source })).resolves.toBe(join(dir, 'Recordings'));
  });

  it('refuses a path through a file, naming the folder and the flag', async () => {
    const dir = await temp();
    await writeFile(join(dir, 'file'), 'x');
    const error = await ensureWritableFolder(join(dir, 'file', 'sub'), { source }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      `Cannot use ${join(dir, 'file', 'sub')} as the recordings folder (--folder): a part of the path is a file, not a folder. Choose another folder.`,
    );
  });

  it.runIf(existsSync('/proc/self'))(
    'refuses a folder in /proc at once, where a recursive mkdir spins for ever',
    async () => {
      const started = Date.now();
      await expect(ensureWritableFolder('/proc/tally-recordings/x', { source })).rejects.toThrow(
        'this file system does not allow folders there',
      );
      expect(Date.now() - started).toBeLessThan(1000);
    },
  );

  // Root ignores file modes: there the same refusals come from /sys, which refuses even root (below).
  it.runIf(process.platform !== 'win32' && process.getuid?.() !== 0)(
    'refuses a folder it may not create and an existing read-only folder, naming each (as an ordinary user)',
    async () => {
      const dir = await temp();
      const readOnly = join(dir, 'read-only');
      await mkdir(readOnly);
      await chmod(readOnly, 0o555);
      cleanups.push(() => chmod(readOnly, 0o755));
      for (const folder of [join(readOnly, 'Recordings'), readOnly]) {
        await expect(ensureWritableFolder(folder, { source })).rejects.toThrow(
          `Cannot use ${folder} as the recordings folder (--folder): permission denied. Choose another folder.`,
        );
      }
    },
  );

  it.runIf(existsSync('/sys/kernel'))(
    'refuses a folder the system will not let it create (even as root), naming the folder and the flag',
    async () => {
      await expect(ensureWritableFolder('/sys/kernel/tally-recordings', { source })).rejects.toThrow(
        'Cannot use /sys/kernel/tally-recordings as the recordings folder (--folder): permission denied. Choose another folder.',
      );
    },
  );

  it.runIf(existsSync('/sys/kernel'))(
    'refuses an existing folder that does not take files (even as root)',
    async () => {
      await expect(ensureWritableFolder('/sys/kernel', { source })).rejects.toThrow(
        /Cannot use \/sys\/kernel as the recordings folder \(--folder\): (permission denied|the file system is read-only)/,
      );
    },
  );
});

describe.runIf(process.platform !== 'win32')('a file system that stops answering', () => {
  it('is refused after the timeout with a clear line, while every file call is still stuck', async () => {
    const dir = await temp();
    // Node does file calls on a small pool of threads; FIFOs opened for reading with no writer block each one in
    // open(2), the way a dead network mount blocks them in the kernel: from here on no file call completes.
    const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    const fifos = Array.from({ length: threads }, (_, i) => join(dir, `stuck-${i}`));
    expect(spawnSync('mkfifo', fifos).status).toBe(0);
    const stuck = fifos.map((fifo) => open(fifo, 'r'));
    let answered = false;
    const probe = stat(dir).then(() => (answered = true));
    try {
      const folder = join(dir, 'Recordings');
      await expect(ensureWritableFolder(folder, { source, timeoutMs: 1_000 })).rejects.toThrow(
        `Cannot use ${folder} as the recordings folder (--folder): it did not answer within 1 s. Choose another folder.`,
      );
      // The refusal came from the deadline, not from a file call that got through.
      expect(answered).toBe(false);
    } finally {
      // A writer for each FIFO (a child process: it needs none of the stuck threads) lets the pool go.
      spawnSync('sh', ['-c', 'for f in "$@"; do : > "$f"; done', 'sh', ...fifos]);
      for (const handle of await Promise.all(stuck)) await handle.close();
      await probe;
    }
  });
});

describe.runIf(existsSync('/proc/self'))('bad folders do not wedge the CLI or the app', () => {
  it('tally listen --folder /proc/recordings exits 1 with one line naming --folder', async () => {
    const home = await temp();
    const { io, err } = captureIo(new AbortController().signal, {
      TALLY_HOME: home,
      TALLY_SERVICE_ID: 'svc',
      TALLY_SECRET: 'not-used',
    });
    const code = await main(['listen', '--folder', '/proc/recordings', '--port', '0', '--tunnel', 'none'], io);
    expect(code).toBe(1);
    expect(err().trimEnd().split('\n')).toEqual([
      'tally listen: Cannot use /proc/recordings as the recordings folder (--folder): this file system does not allow folders there. Choose another folder.',
    ]);
  });

  it('the app refuses the folder in Settings, keeps the old one, and the next change still completes', async () => {
    const home = await temp();
    const good = join(home, 'recordings');
    openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: good });
    const core = await createAppCore({
      home,
      secrets: new MemorySecretStore(),
      transport: 'ws',
      demo: false,
      env: {},
      version: '9.9.9',
    });
    cleanups.push(() => core.stop());
    await expect(core.handlers['settings:update']({ recordingsFolder: '/proc/not-writable' })).rejects.toThrow(
      'Cannot use /proc/not-writable as the recordings folder: this file system does not allow folders there.',
    );
    expect(openSettingsStore(home).get().recordingsFolder).toBe(good);
    await expect(core.handlers['settings:update']({ concurrency: 2 })).resolves.toMatchObject({ concurrency: 2 });
  });
});
