// Bundles the preload into one CommonJS file: a sandboxed preload cannot load relative modules or ESM,
// so the contract's bridge builder is inlined and only `electron` stays external.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

if (!existsSync('electron/preload/index.ts')) process.exit(0);
await build({
  entryPoints: ['electron/preload/index.ts'],
  outfile: 'dist/preload/index.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  external: ['electron'],
  minify: true,
  logLevel: 'warning',
});
