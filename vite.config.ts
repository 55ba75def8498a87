import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

/**
 * The renderer (Svelte popover). Built to dist/renderer with relative asset paths so the same bundle
 * loads from file:// in Electron and from `tally serve` over HTTP.
 */
export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [svelte()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    target: 'chrome120',
    sourcemap: false,
    // One small bundle: no code is fetched from anywhere at run time.
    modulePreload: false,
  },
  server: { host: '127.0.0.1', strictPort: false },
});
