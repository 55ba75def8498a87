// Bundles the preload into one CommonJS file: a sandboxed preload cannot load relative modules or ESM,
// so the contract's bridge builder is inlined and only `electron` stays external.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

if (!existsSync('electron/preload/index.ts')) process.exit(0);
await build({
  entryPoints: ['electron/preload/index.ts'],
  outfile: 'dist/preload/index.cjs',
  bundle: true,
  // A sandboxed preload is a browser context with `require('electron')` only; since Electron 45 it has no
  // Buffer, setImmediate or `events`/`timers`/`url` either. Building for the browser makes a Node built-in
  // pulled in by a dependency fail here, at build time, instead of in the user's popover.
  platform: 'browser',
  format: 'cjs',
  target: 'chrome140',
  external: ['electron'],
  minify: true,
  logLevel: 'warning',
});
