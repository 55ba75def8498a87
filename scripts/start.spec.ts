/**
 * `npm start` on a desktop whose Electron runtime cannot be fetched: one line says why, and the popover is
 * served in the browser instead (no stack trace from the runtime's downloader). The download is pointed at a
 * closed port on loopback (ELECTRON_MIRROR), so it fails at once and nothing leaves the machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The environment without any npm or .npmrc setting that would pick another Electron mirror or cache. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(npm_config_electron|npm_package_config_electron|electron_)/i.test(name)) delete env[name];
  }
  delete env.TALLY_NO_ELECTRON;
  delete env.TALLY_REBUILD;
  return env;
}

let child: ChildProcess | null = null;
let home: string | null = null;

afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  child = null;
  if (home) await rm(home, { recursive: true, force: true });
  home = null;
});

describe('npm start without the Electron runtime', () => {
  // The check needs the runtime missing: on a desktop where it was fetched, npm start launches it instead, so a
  // developer's checkout skips this. CI never fetches it (package.json denies electron's install script), and
  // must not skip.
  const runtimeFetched = existsSync(join(ROOT, 'node_modules', 'electron', 'path.txt'));
  if (runtimeFetched && process.env.CI) throw new Error('node_modules/electron has its runtime in CI');
  it.skipIf(runtimeFetched)(
    'says why in one line, without a stack trace, then serves the popover in the browser',
    async () => {
      home = await mkdtemp(join(tmpdir(), 'tally-start-'));
      const port = await closedPort();
      const env = {
        ...cleanEnv(),
        // A display, so start.mjs tries the tray app first.
        DISPLAY: ':tally-start-spec',
        ELECTRON_MIRROR: `http://127.0.0.1:${port}/`,
        // An empty download cache, so a runtime cached by another project is not found either.
        electron_config_cache: join(home, 'electron-cache'),
        force_no_cache: 'true',
        TALLY_HOME: join(home, 'state'),
      };
      child = spawn(process.execPath, ['scripts/start.mjs', '--no-open', '--port', '0'], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const running = new Promise<string>((resolve, reject) => {
        child?.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          const url = /Tally is running at (http:\/\/127\.0\.0\.1:\d+\/\S*)/.exec(stdout);
          if (url) resolve(url[1]!);
        });
        child?.on('exit', (code) =>
          reject(new Error(`npm start exited (${code}) before serving:\n${stdout}\n${stderr}`)),
        );
      });
      const url = await running;

      const lines = stdout.split('\n').filter((l) => l.trim() !== '');
      const reason = lines.filter((l) => l.startsWith('The Electron runtime could not be fetched'));
      expect(reason, stdout).toHaveLength(1);
      // Why, in words: the refused connection to the mirror, not a file name and line number.
      expect(reason[0]).toMatch(/^The Electron runtime could not be fetched \(.*(fetch failed|ECONNREFUSED).*\)\.$/);
      const served = lines.findIndex((l) => l.startsWith('Tally is running at'));
      expect(lines.indexOf(reason[0]!)).toBeLessThan(served);
      expect(lines.slice(0, served)).toContain(
        'The Electron runtime is not available here: serving the Tally popover in your browser instead.',
      );
      for (const output of [stdout, stderr]) {
        expect(output).not.toMatch(/^\s+at .+[:(]\d+/m);
        expect(output).not.toContain('node_modules/electron');
      }

      // Served indeed: the page answers on loopback.
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="app">');
    },
    120_000,
  );
});
