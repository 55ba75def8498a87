/**
 * The dependency tree as `npm ls` sees it: nothing invalid or missing, no runtime package on a version with
 * published advisories we know of (axios 0.21.x under localtunnel, overridden in package.json), and `engines`
 * naming the Node major the suite runs on (.nvmrc: the one Electron bundles), not an older one nobody tests.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const npm = (args: string[]) =>
  promisify(execFile)('npm', args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }).catch(
    (error: { stdout?: string; stderr?: string; code?: number }) => ({
      stdout: error.stdout ?? '',
      stderr: `${error.stderr ?? ''} (exit ${error.code})`,
    }),
  );

interface Tree {
  version?: string;
  dependencies?: Record<string, Tree>;
}

/** Every version of `name` in the tree. */
function versionsOf(tree: Tree, name: string): string[] {
  const out: string[] = [];
  for (const [dep, sub] of Object.entries(tree.dependencies ?? {})) {
    if (dep === name && sub.version) out.push(sub.version);
    out.push(...versionsOf(sub, name));
  }
  return out;
}

describe('dependencies', () => {
  it('npm ls --all finds nothing invalid, missing or extraneous', async () => {
    const { stdout, stderr } = await npm(['ls', '--all']);
    const problems = stdout.split('\n').filter((line) => /\b(invalid|missing|extraneous)\b/.test(line));
    expect(problems, stderr).toEqual([]);
    expect(stderr).not.toMatch(/ERR!/);
  }, 60_000);

  it('resolves no runtime dependency to axios 0.x (localtunnel gets a fixed 1.x)', async () => {
    const { stdout } = await npm(['ls', 'axios', '--omit=dev', '--all', '--json']);
    const versions = versionsOf(JSON.parse(stdout) as Tree, 'axios');
    expect(versions.length).toBeGreaterThan(0);
    for (const version of versions) expect(version).toMatch(/^1\.(1[2-9]|[2-9]\d)\./);
  }, 60_000);

  it('names in engines the Node major that the suite and CI run on', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const tested = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim();
    expect(pkg.engines.node).toBe(`>=${tested}`);
    expect(process.versions.node.split('.')[0]).toBe(tested);
  });
});
