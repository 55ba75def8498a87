/**
 * Every `tally` command with an unusable data folder (issue 32, item 6): TALLY_HOME a regular file, a folder
 * this user cannot read, a folder on a read-only disk. Each says so in one line naming TALLY_HOME and exits 1
 * (README: one clear line on stderr), never "Unexpected internal error".
 *
 * Real processes of the built CLI. As root they run without the capabilities that bypass file permissions
 * (`setpriv`, dac_override and dac_read_search dropped), so an unreadable folder is unreadable to them as to any
 * user; the read-only disk is a real tmpfs remounted read-only (skipped where none can be mounted).
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../electron/cli.js';
import { ensureBuiltCli, ROOT, TALLY_BIN } from './support/built-cli.js';
import { runToEnd, type ChildOutput } from './support/child-output.js';
import { mountSmallDisk, type SmallDisk } from './support/tmpfs.js';

/** Plausible arguments per command: the data folder is judged before any of them. */
const ARGS: Record<string, string[]> = {
  live: [],
  search: ['--since', '1h'],
  end: ['some-channel'],
  login: ['--service-id', 'svc'],
  logout: [],
  listen: ['--folder', join(tmpdir(), 'tally-unused-folder')],
  status: [],
  doctor: [],
  retry: ['some-channel'],
  follow: ['--team', 'nats://127.0.0.1:1', '--folder', join(tmpdir(), 'tally-unused-folder')],
  sandbox: [],
  serve: ['--no-open'],
};

const asRoot = process.getuid?.() === 0;

/** Runs `tally <args>` as a user file permissions apply to; resolves with its exit code and output. */
function tally(args: string[], home: string): Promise<ChildOutput> {
  const node = [process.execPath, TALLY_BIN, ...args];
  const [cmd, ...argv] = asRoot
    ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--', ...node]
    : (node as [string, ...string[]]);
  return runToEnd(cmd as string, argv, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: tmpdir(),
      TALLY_HOME: home,
      TALLY_SERVICE_ID: 'svc',
      TALLY_SECRET: 'not-a-real-secret',
      CI: '1',
    },
    timeout: 30_000,
  });
}

describe('an unusable TALLY_HOME', () => {
  let base: string;
  let disk: SmallDisk | null = null;
  const homes: Record<string, string | null> = {};

  beforeAll(async () => {
    await ensureBuiltCli();
    base = await mkdtemp(join(tmpdir(), 'tally-bad-home-'));
    homes.file = join(base, 'a-file');
    await writeFile(homes.file, 'not a folder\n');
    homes.unreadable = join(base, 'unreadable');
    await mkdir(homes.unreadable);
    await chmod(homes.unreadable, 0o000);
    disk = await mountSmallDisk(1024 * 1024);
    if (disk) {
      await mkdir(join(disk.dir, 'state'));
      await promisify(execFile)('mount', ['-o', 'remount,ro', disk.dir]);
      homes['read-only'] = join(disk.dir, 'state');
    } else if (process.env.CI) {
      throw new Error('cli-data-folder: CI must be able to mount a tmpfs (run as root).');
    } else {
      console.log('cli-data-folder: no tmpfs can be mounted here; the read-only rows are skipped.');
      homes['read-only'] = null;
    }
  }, 180_000);

  afterAll(async () => {
    await disk?.close();
    if (base) {
      await chmod(join(base, 'unreadable'), 0o700).catch(() => undefined);
      await rm(base, { recursive: true, force: true });
    }
  });

  it('has a row for every command', () => {
    expect(Object.keys(ARGS).sort()).toEqual([...COMMAND_NAMES].sort());
  });

  const REASON = {
    file: 'is a file, not a folder',
    unreadable: 'cannot be read and written by this user (permission denied)',
    'read-only': 'is on a read-only disk',
  } as const;

  describe.each(Object.entries(REASON))('when it is %s', (kind, reason) => {
    it.each(COMMAND_NAMES)('tally %s says so in one line naming TALLY_HOME and exits 1', async (name) => {
      const home = homes[kind];
      if (home === null) return; // no tmpfs here (said in beforeAll)
      if (home === undefined) throw new Error(`no home for ${kind}`);
      const { code, stdout, stderr } = await tally([name, ...(ARGS[name] ?? [])], home);
      expect(stderr).toBe(
        `tally ${name}: TALLY_HOME (${home}) ${reason}: point TALLY_HOME at a folder Tally can read and write.\n`,
      );
      expect(stdout).toBe('');
      expect(code).toBe(1);
    });
  });
});
