/**
 * The built CLI in dist/, for tests that run `node bin/tally.js` as a real child process. dist/ is rebuilt
 * with tsc only when it is missing or older than a source file (`npm test` builds first, so then never).
 */
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const TALLY_BIN = join(ROOT, 'bin/tally.js');

/** Source files whose compiled twin must exist and be newer (same selection as tsconfig.build.json). */
export function staleOutputs(): string[] {
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'preload') walk(path);
        continue;
      }
      if (
        !entry.name.endsWith('.ts') ||
        /\.(spec|test)\.ts$/.test(entry.name) ||
        entry.name.startsWith('test-') ||
        entry.name.endsWith('.d.ts')
      )
        continue;
      const out = join(ROOT, 'dist', relative(ROOT, path)).replace(/\.ts$/, '.js');
      let outTime = 0;
      try {
        outTime = statSync(out).mtimeMs;
      } catch {
        // missing output
      }
      if (outTime < statSync(path).mtimeMs) stale.push(relative(ROOT, path));
    }
  };
  walk(join(ROOT, 'electron'));
  return stale;
}

function build(): Promise<void> {
  return new Promise((resolve) => {
    // tsc emits even when files owned by work in progress elsewhere have type errors; the checks below
    // say whether what the CLI needs was produced.
    execFile(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      { cwd: ROOT },
      () => resolve(),
    );
  });
}

let building: Promise<void> | null = null;

/** Rebuilds dist/ if any CLI source is newer than its output; concurrent callers share one build. */
export function ensureBuiltCli(): Promise<void> {
  if (staleOutputs().length === 0) return Promise.resolve();
  building ??= build().finally(() => {
    building = null;
  });
  return building;
}
