import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * End-to-end tests in Debian's Chromium (playwright-core), run by `npm test` after the build.
 *
 * `electron` resolves to the test stand-in (tests/e2e/support/electron-standin.ts) here and nowhere else, so
 * shell.e2e.ts can boot the real main process; electron-store is inlined so its own `import 'electron'` gets the
 * stand-in too.
 */
export default defineConfig({
  resolve: {
    alias: { electron: fileURLToPath(new URL('./tests/e2e/support/electron-standin.ts', import.meta.url)) },
  },
  test: {
    name: 'e2e',
    environment: 'node',
    include: ['tests/e2e/**/*.e2e.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One browser at a time: the machine has two cores and Chromium is heavy.
    fileParallelism: false,
    server: { deps: { inline: ['electron-store'] } },
  },
});
