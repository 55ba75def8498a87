/**
 * @doyensec/electronegativity, installed on first use into node_modules/.cache rather than kept in the
 * project's dependencies: the scanner pins an old typescript-estree whose packages left invalid entries in
 * `npm ls --all`, and nothing of it ships. The version is pinned here, so every run scans with the same rules.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const ELECTRONEGATIVITY_VERSION = '1.10.3';

/** The scanner's runner.js, installing the pinned version first when the cache does not hold it. */
export async function electronegativityRunner(root: string): Promise<string> {
  const prefix = join(root, 'node_modules', '.cache', `electronegativity-${ELECTRONEGATIVITY_VERSION}`);
  const runner = join(prefix, 'node_modules', '@doyensec', 'electronegativity', 'dist', 'runner.js');
  if (existsSync(runner)) return runner;
  // The npm that runs this process (npm_execpath) or the one on PATH, with the registry the project uses.
  const npmCli = process.env.npm_execpath;
  const [cmd, args] = npmCli && npmCli.endsWith('.js') ? [process.execPath, [npmCli]] : ['npm', []];
  await promisify(execFile)(
    cmd,
    [
      ...args,
      'install',
      '--prefix',
      prefix,
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      `@doyensec/electronegativity@${ELECTRONEGATIVITY_VERSION}`,
    ],
    { cwd: root, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 },
  );
  return runner;
}
