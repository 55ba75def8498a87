#!/usr/bin/env node
// npm's `prepare` step: builds the CLI, the preload and the browser UI, unless the build is already newer
// than every source it is made from. `npx tally` runs `prepare` too: npm installs the project itself into
// its npx cache to link the `tally` bin, so a build on every first `npx tally` made it take 15-20 s.
// TALLY_REBUILD=1 builds whatever the dates say.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the build writes; the oldest of them must be newer than every input. */
export const BUILD_OUTPUTS = ['dist/electron/cli.js', 'dist/preload/index.cjs', 'dist/renderer/index.html'];
/** What the build reads: source folders (walked) and single files. */
export const BUILD_INPUTS = [
  'electron',
  'renderer',
  'package.json',
  'package-lock.json',
  'tsconfig.base.json',
  'tsconfig.build.json',
  'tsconfig.web.json',
  'vite.config.ts',
  'scripts/build-preload.mjs',
];

function mtimeOrNull(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** Newest modification time under `path` (a file or a folder walked recursively), or null if absent. */
function newestUnder(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return null;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const time = newestUnder(join(path, entry.name));
    if (time !== null && time > newest) newest = time;
  }
  return newest;
}

/** Why `root` needs a build, or null when every output is newer than every input. */
export function buildReason(root) {
  let oldestOutput = Infinity;
  for (const output of BUILD_OUTPUTS) {
    const time = mtimeOrNull(join(root, output));
    if (time === null) return `${output} is missing`;
    oldestOutput = Math.min(oldestOutput, time);
  }
  for (const input of BUILD_INPUTS) {
    const time = newestUnder(join(root, input));
    if (time !== null && time > oldestOutput) return `${input} changed since the last build`;
  }
  return null;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const reason = process.env.TALLY_REBUILD ? 'TALLY_REBUILD is set' : buildReason(process.cwd());
  if (reason === null) {
    console.log('Tally is already built (dist/ is newer than its sources).');
  } else {
    console.log(`Building Tally: ${reason}.`);
    const result = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
    process.exit(result.status ?? 1);
  }
}
