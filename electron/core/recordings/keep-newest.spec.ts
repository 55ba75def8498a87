import { mkdir, mkdtemp, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keepNewestRecordings } from './keep-newest.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('keepNewestRecordings (the demo folder kept bounded)', () => {
  it('keeps the newest files of the demo folder and deletes the rest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-demo-prune-'));
    dirs.push(dir);
    const base = Date.now() / 1000;
    for (let i = 0; i < 5; i++) {
      const path = join(dir, `show-${i}.mp4`);
      await writeFile(path, 'x');
      // show-4 is the newest.
      await utimes(path, base + i, base + i);
    }
    await expect(keepNewestRecordings(dir, 2)).resolves.toBe(3);
    expect((await readdir(dir)).sort()).toEqual(['show-3.mp4', 'show-4.mp4']);
  });

  it('does nothing when no demo has saved anything yet', async () => {
    await expect(keepNewestRecordings(join(tmpdir(), 'tally-no-such-demo-folder'), 2)).resolves.toBe(0);
  });

  it('leaves downloads in progress, links and sub-folders alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-demo-prune-'));
    dirs.push(dir);
    const outside = await mkdtemp(join(tmpdir(), 'tally-demo-outside-'));
    dirs.push(outside);
    await writeFile(join(outside, 'precious.mp4'), 'x');
    const old = Date.now() / 1000 - 3600;
    for (const name of ['old.mp4.part', 'old.mp4.part.json', 'old.mp4.reserved']) {
      await writeFile(join(dir, name), 'x');
      await utimes(join(dir, name), old, old);
    }
    await symlink(join(outside, 'precious.mp4'), join(dir, 'link.mp4'));
    await mkdir(join(dir, 'client'));
    await writeFile(join(dir, 'new.mp4'), 'x');
    await expect(keepNewestRecordings(dir, 0)).resolves.toBe(1);
    expect((await readdir(dir)).sort()).toEqual([
      'client',
      'link.mp4',
      'old.mp4.part',
      'old.mp4.part.json',
      'old.mp4.reserved',
    ]);
    expect(await readdir(outside)).toEqual(['precious.mp4']);
  });
});
