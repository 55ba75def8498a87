/**
 * Helpers that run in their own Node process, so their memory is measured apart from the bench runner and
 * their event loop is not shared with what they measure. Each helper is bundled once with esbuild into plain
 * JavaScript and run with `node`: the shipped app runs compiled JavaScript too, and a TypeScript loader in the
 * child (tsx keeps esbuild and its transform cache resident) would add ~35 MB of RSS and start-up CPU that
 * are not Tally's. The helper prints one JSON line last on stdout; that is its result.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * Bundles `bench/lib/<name>` (TypeScript, with whatever it imports from electron/core) into `outDir` and
 * resolves with the path of the `.mjs` to run.
 */
export async function bundleHelper(name: string, outDir: string, opts: { cjsRequire?: boolean } = {}): Promise<string> {
  const outfile = join(outDir, name.replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [fileURLToPath(new URL(name, import.meta.url))],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    logLevel: 'error',
    // CommonJS dependencies that `require()` Node built-ins (the NATS client's nkeys) need a real `require`.
    ...(opts.cjsRequire
      ? {
          banner: {
            js: "import { createRequire as __tallyRequire } from 'node:module'; const require = __tallyRequire(import.meta.url);",
          },
        }
      : {}),
  });
  return outfile;
}

/**
 * Runs `node [nodeFlags] <script> <args>` (`env` added to the environment) and resolves with the parsed last
 * stdout line.
 */
export function runNodeChild<T>(
  script: string,
  args: string[],
  nodeFlags: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0) return reject(new Error(`${script} exited with ${code}: ${stderr.trim().slice(-2000)}`));
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${script} printed no JSON result: ${stdout.slice(-500)} ${stderr.slice(-500)}`));
      }
    });
  });
}

/**
 * The Node flags bin/tally.js gives the CLI in its shebang (`#!/usr/bin/env -S node <flags>`), so a bench child
 * that stands for `tally` runs the way the shipped command does.
 */
export async function cliNodeFlags(): Promise<string[]> {
  const bin = new URL('../../bin/tally.js', import.meta.url);
  const first = (await readFile(bin, 'utf8')).split('\n')[0] ?? '';
  const match = /^#!\S*env\s+(?:-S\s+)?node\b(.*)$/.exec(first);
  return (match?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
}
