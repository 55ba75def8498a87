import { defineConfig } from 'vitest/config';

/** End-to-end tests in Debian's Chromium (playwright-core), run by `npm test` after the build. */
export default defineConfig({
  test: {
    name: 'e2e',
    environment: 'node',
    include: ['tests/e2e/**/*.e2e.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One browser at a time: the machine has two cores and Chromium is heavy.
    fileParallelism: false,
  },
});
