/**
 * One writer of settings.json (issue 35): the tray app's core, `tally serve` (the same core) and every CLI command
 * open the file through one module (core/settings.ts over core/settings-file.ts), so they share one schema, one
 * migration path and one format, and read each other's writes.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../electron/cli/settings.js';
import { SETTINGS_VERSION } from '../electron/core/settings.js';
import { cleanups, makeCore, runCleanups } from './support/app/core-helpers.js';
import { sourceFiles } from './architecture/imports.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

afterEach(runCleanups);

async function homeWith(raw: unknown): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'tally-one-writer-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  await writeFile(join(home, 'settings.json'), JSON.stringify(raw));
  return home;
}

describe('settings.json has one writer', () => {
  it('the CLI migrates a file the app wrote long ago, and the app and the CLI read each other', async () => {
    // A version-1 file: one team server as `studio.url`, as the app wrote it before studio clusters.
    const home = await homeWith({
      version: 1,
      receiverPort: 0,
      recordingsFolder: join(tmpdir(), 'tally-one-writer-recordings'),
      pollIntervalSec: 9,
      studio: { url: 'nats://team.example:4222' },
    });
    const cli = loadSettings({ env: { TALLY_HOME: home } });
    expect(cli.settings.studio.servers).toEqual(['nats://team.example:4222']);
    expect(cli.settings.pollIntervalSec).toBe(9);
    // Migrated once, on disk, in the format every earlier version wrote (tab-indented JSON).
    const migrated = await readFile(join(home, 'settings.json'), 'utf8');
    expect(JSON.parse(migrated)).toMatchObject({
      version: SETTINGS_VERSION,
      studio: { servers: [expect.any(String)] },
    });
    expect(migrated).toMatch(/^\{\n\t"/);

    // The app (its core, as the tray app and `tally serve` run it) reads the migrated file and writes a change...
    const core = await makeCore(home);
    const view = await core.handlers['settings:update']({ concurrency: 6 });
    expect(view.pollIntervalSec).toBe(9);
    // ...which the CLI reads, and a change made through the CLI's store reaches the running app.
    expect(loadSettings({ env: { TALLY_HOME: home } }).settings.concurrency).toBe(6);
    cli.store.update({ concurrency: 3 });
    expect((await core.handlers['settings:get']()).concurrency).toBe(3);
  });

  it('no other module opens it: neither conf nor electron-store is imported anywhere in electron/', () => {
    const writers = sourceFiles(join(ROOT, 'electron'))
      .filter((file) => /from ['"](conf|electron-store)['"]/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(writers).toEqual([]);
  });
});
