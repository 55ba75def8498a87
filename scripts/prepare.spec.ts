import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { BUILD_OUTPUTS, buildReason } from './prepare.mjs';

const buildReasonOf = buildReason as (root: string) => string | null;
const outputs = BUILD_OUTPUTS as string[];

async function touch(root: string, path: string, seconds: number): Promise<void> {
  const file = join(root, path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, 'x');
  await utimes(file, seconds, seconds);
}

describe('prepare: build only when the build is older than its sources', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tally-prepare-'));
    await touch(root, 'electron/core/app/app-core.ts', 1_000);
    await touch(root, 'renderer/src/App.svelte', 1_000);
    await touch(root, 'package.json', 1_000);
    // Folders carry their own times; keep them old too.
    for (const dir of ['electron/core/app', 'electron/core', 'electron', 'renderer/src', 'renderer'])
      await utimes(join(root, dir), 1_000, 1_000);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('builds a fresh checkout, naming the missing output', async () => {
    expect(buildReasonOf(root)).toBe('dist/electron/cli.js is missing');
    for (const output of outputs.slice(0, 2)) await touch(root, output, 2_000);
    expect(buildReasonOf(root)).toBe('dist/renderer/index.html is missing');
  });

  it('skips the build when every output is newer than every source (a second npx tally)', async () => {
    for (const output of outputs) await touch(root, output, 2_000);
    expect(buildReasonOf(root)).toBeNull();
  });

  it('rebuilds after a source changes, deep in a folder or at the top', async () => {
    for (const output of outputs) await touch(root, output, 2_000);
    await touch(root, 'electron/core/app/app-core.ts', 3_000);
    expect(buildReasonOf(root)).toBe('electron changed since the last build');
    await touch(root, 'electron/core/app/app-core.ts', 1_000);
    await utimes(join(root, 'electron/core/app'), 1_000, 1_000);
    await touch(root, 'package.json', 3_000);
    expect(buildReasonOf(root)).toBe('package.json changed since the last build');
  });
});
