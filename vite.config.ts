import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

/**
 * The renderer (Svelte popover). Built to dist/renderer with relative asset paths so the same bundle
 * loads from file:// in Electron and from `tally serve` over HTTP.
 */
/**
 * The dev server injects <style> tags for hot reload, which the page's strict CSP <meta> would block.
 * In `vite` (serve) mode only, drop that meta; the built bundle keeps it and is what ships and is tested.
 */
const devWithoutCspMeta: Plugin = {
  name: 'tally-dev-without-csp-meta',
  apply: 'serve',
  transformIndexHtml: (html) => html.replace(/<meta\s+http-equiv="Content-Security-Policy"[^>]*>/i, ''),
};

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [svelte(), devWithoutCspMeta],
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
