import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CRASH_LOOP_WINDOW_MS,
  crashDumpFolder,
  crashHistoryFile,
  listCrashDumps,
  readCrashes,
  recordCrash,
} from './crash-history.js';

const homes: string[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) await rm(home, { recursive: true, force: true });
});
const tempHome = async () => {
  const home = await mkdtemp(join(tmpdir(), 'tally-crashes-'));
  homes.push(home);
  return home;
};

describe('crash history', () => {
  it('counts the crashes within the window, across processes (the file), this one included', async () => {
    const home = await tempHome();
    const t = 1_800_000_000_000;
    expect(recordCrash(home, t)).toBe(1);
    expect(recordCrash(home, t + 20_000)).toBe(2);
    expect(recordCrash(home, t + 40_000)).toBe(3);
    // The first one left the window: a crash a while later starts counting again.
    expect(recordCrash(home, t + CRASH_LOOP_WINDOW_MS + 30_000)).toBe(2);
    expect(readCrashes(home)).toHaveLength(4);
    expect(JSON.parse(await readFile(crashHistoryFile(home), 'utf8'))).toEqual({ crashes: readCrashes(home) });
  });

  it('reads a damaged file as no crashes, and records over it', async () => {
    const home = await tempHome();
    await writeFile(crashHistoryFile(home), '{"crashes": "yes"');
    expect(readCrashes(home)).toEqual([]);
    expect(recordCrash(home, 5)).toBe(1);
  });

  it('lists the minidumps of the dump folder, newest first', async () => {
    const home = await tempHome();
    expect(listCrashDumps(home)).toEqual([]);
    await mkdir(join(crashDumpFolder(home), 'completed'), { recursive: true });
    await writeFile(join(crashDumpFolder(home), 'completed', 'a.dmp'), 'MDMP');
    await writeFile(join(crashDumpFolder(home), 'settings.dat'), 'x');
    expect(listCrashDumps(home)).toEqual([{ path: join('completed', 'a.dmp'), bytes: 4, at: expect.any(Date) }]);
  });
});
