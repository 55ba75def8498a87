import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

/**
 * Two projects: node (core, CLI, main-process services, integration over real HTTP) and dom
 * (Svelte component specs in jsdom). Chromium end-to-end tests live in tests/e2e and run separately.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['electron/**/*.spec.ts', 'tests/**/*.spec.ts', 'scripts/**/*.spec.ts', 'bench/**/*.spec.ts'],
          exclude: ['tests/e2e/**', 'node_modules/**'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        plugins: [svelte()],
        resolve: { conditions: ['browser'] },
        test: {
          name: 'dom',
          environment: 'jsdom',
          include: ['renderer/**/*.spec.ts'],
          setupFiles: ['renderer/test-setup.ts'],
          testTimeout: 15_000,
        },
      },
    ],
  },
});
