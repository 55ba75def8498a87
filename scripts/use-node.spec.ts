/**
 * `. scripts/use-node.sh` as a producer sources it: from a folder outside the checkout, and on a machine with no
 * network at all (a network namespace of its own, `unshare -n`), where it must fail in seconds with the reason
 * instead of npm's "A complete log of this run…" a minute later. The shell's Node is the machine's (/usr/bin);
 * the project's Node is this test's own, placed where project-node.mjs keeps it (TALLY_NODE_CACHE).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const SCRIPT = join(ROOT, 'scripts', 'use-node.sh');
const WANTED = process.versions.node.split('.')[0];
/** The shell's PATH: the machine's own Node (another major here) and the usual tools, nothing of this checkout. */
const SYSTEM_PATH = '/usr/bin:/bin';
const systemNode = spawnSync('node', ['-v'], { env: { PATH: SYSTEM_PATH }, encoding: 'utf8' }).stdout.trim();
const canUnshare = spawnSync('unshare', ['-n', 'true']).status === 0;

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-use-node-'));
  dirs.push(dir);
  return dir;
}

/** Runs `script` in bash (optionally with no network), in `cwd`; its output, status and the time it took. */
function bash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  offline = false,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  const [cmd, args] = offline ? ['unshare', ['-n', 'bash', '-c', script]] : ['bash', ['-c', script]];
  const child = spawn(cmd as string, args as string[], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started })),
  );
}

describe('. scripts/use-node.sh', () => {
  it('works when sourced from outside the checkout: the project’s Node comes first on PATH', async () => {
    const outside = await tempDir();
    // The project's Node, already installed where project-node.mjs looks for it.
    const cache = join(outside, 'cache');
    await mkdir(join(cache, `node-${WANTED}`, 'node_modules', '.bin'), { recursive: true });
    await symlink(process.execPath, join(cache, `node-${WANTED}`, 'node_modules', '.bin', 'node'));
    const run = await bash(`. '${SCRIPT}' && node -v`, outside, {
      PATH: SYSTEM_PATH,
      HOME: outside,
      TALLY_NODE_CACHE: cache,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(process.version);
  });

  it.skipIf(!canUnshare || systemNode.split('.')[0] === `v${WANTED}`)(
    'offline, fails within seconds with the reason and leaves the Node on PATH as it was',
    async () => {
      const outside = await tempDir();
      const cache = join(outside, 'cache');
      // An empty npm cache too: nothing can come from anywhere but the network, which this namespace has none of.
      const run = await bash(
        `. '${SCRIPT}'; echo "status $?"; node -v`,
        outside,
        { PATH: SYSTEM_PATH, HOME: outside, TALLY_NODE_CACHE: cache, npm_config_cache: join(outside, 'npm-cache') },
        true,
      );
      expect(run.stdout.split('\n')).toEqual(['status 1', systemNode, '']);
      expect(run.stderr).toMatch(
        new RegExp(
          `^Could not install node@${WANTED}: the package registry cannot be reached \\((EAI_AGAIN|ENOTFOUND|ENETUNREACH)\\)`,
          'm',
        ),
      );
      expect(run.stderr).not.toMatch(/complete log/i);
      expect(run.ms).toBeLessThan(20_000);
    },
    60_000,
  );
});
