#!/usr/bin/env node
// `npm start`: builds if needed and starts Tally against the embedded sandbox (demo mode when no
// credentials are stored). On a desktop it launches the Electron tray app; where Electron cannot run
// (no display, or its runtime cannot be downloaded) it serves the same popover UI in a browser through
// `tally serve --sandbox`, so the same sandbox-backed core is always reachable.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ensureProjectNode } from './project-node.mjs';

ensureProjectNode();
const require = createRequire(import.meta.url);
const extra = process.argv.slice(2);

function built() {
  return ['dist/electron/cli.js', 'dist/renderer/index.html'].every((f) => existsSync(f));
}
if (!built() || process.env.TALLY_REBUILD) {
  const r = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const hasDisplay =
  process.platform === 'darwin' ||
  process.platform === 'win32' ||
  !!process.env.DISPLAY ||
  !!process.env.WAYLAND_DISPLAY;

/** The runtime binary if it is already on disk; never triggers a download (requiring `electron` would). */
function installedElectron() {
  const dir = dirname(require.resolve('electron/package.json'));
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return null;
  const bin = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(bin) && statSync(bin).size > 0 ? bin : null;
}

/**
 * Path of the Electron binary, fetched on first start: since Electron 42 the package downloads its runtime on
 * first `require('electron')` instead of at install. The download's own output is kept for one line on failure.
 */
function electronBinary() {
  const present = installedElectron();
  if (present) return present;
  console.log('Fetching the Electron runtime for this platform (first start only)…');
  const r = spawnSync(process.execPath, ['-e', "require('electron')"], { encoding: 'utf8', stdio: 'pipe' });
  const bin = installedElectron();
  if (!bin) {
    const lines = `${r.stderr ?? ''}`.split('\n').map((l) => l.trim());
    // The first error line is the download's own (e.g. "TypeError: fetch failed"), before electron's advice.
    const reason = lines.find((l) => /^\w*Error\b|ENOTFOUND|ECONNREFUSED|EAI_AGAIN/.test(l));
    console.log(`The Electron runtime could not be fetched${reason ? ` (${reason.slice(0, 160)})` : ''}.`);
  }
  return bin;
}

const electron = hasDisplay && !process.env.TALLY_NO_ELECTRON ? electronBinary() : null;
let child;
if (electron && existsSync('dist/electron/main/index.js')) {
  child = spawn(electron, ['.', ...extra], { stdio: 'inherit', env: { ...process.env, TALLY_DEMO: '1' } });
} else {
  console.log(
    hasDisplay
      ? 'The Electron runtime is not available here: serving the Tally popover in your browser instead.'
      : 'No desktop session: serving the Tally popover in your browser instead of the tray app.',
  );
  child = spawn(process.execPath, ['bin/tally.js', 'serve', '--sandbox', ...extra], { stdio: 'inherit' });
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
