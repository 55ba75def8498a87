#!/usr/bin/env node
// `npm start`: builds if needed and starts Tally against the embedded sandbox (demo mode when no
// credentials are stored). On a desktop it launches the Electron tray app; where Electron cannot run
// (no display, or its runtime cannot be downloaded) it serves the same popover UI in a browser through
// `tally serve --sandbox`, so the same sandbox-backed core is always reachable.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';

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

/** Path of the Electron binary, downloading it on first start (the install step skips the download). */
function electronBinary() {
  const read = () => {
    try {
      const p = require('electron');
      return typeof p === 'string' && existsSync(p) && statSync(p).size > 0 ? p : null;
    } catch {
      return null;
    }
  };
  let bin = read();
  if (!bin) {
    console.log('Fetching the Electron runtime for this platform (first start only)…');
    const r = spawnSync(process.execPath, [require.resolve('electron/install.js')], { stdio: 'inherit' });
    if (r.status === 0) bin = read();
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
