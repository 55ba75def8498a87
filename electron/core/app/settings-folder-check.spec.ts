import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkFolder } from './settings-folder-check.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'tally-folder-check-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('checking a recordings folder typed in Settings or the guide', () => {
  it('resolves ~ and relative paths from the home folder, creates the folder and answers with its full path', async () => {
    expect(await checkFolder('~/Videos/Tally', home)).toEqual({
      ok: true,
      message: null,
      notes: null,
      path: join(home, 'Videos', 'Tally'),
    });
    expect((await stat(join(home, 'Videos', 'Tally'))).isDirectory()).toBe(true);
    expect((await checkFolder('Shows', home)).path).toBe(join(home, 'Shows'));
  });

  it('names the resolved folder when it cannot be used', async () => {
    await writeFile(join(home, 'taken'), 'a file, not a folder');
    const result = await checkFolder('~/taken', home);
    expect(result).toMatchObject({ ok: false, path: join(home, 'taken') });
    expect(result.message).toContain(join(home, 'taken'));
  });
});
