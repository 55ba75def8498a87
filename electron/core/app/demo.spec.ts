import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pruneDemoRecordings } from './demo.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('pruneDemoRecordings', () => {
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
    await pruneDemoRecordings(dir, 2);
    expect((await readdir(dir)).sort()).toEqual(['show-3.mp4', 'show-4.mp4']);
  });

  it('does nothing when no demo has saved anything yet', async () => {
    await expect(pruneDemoRecordings(join(tmpdir(), 'tally-no-such-demo-folder'), 2)).resolves.toBeUndefined();
  });
});
