import '@testing-library/jest-dom/vitest';
// Registers @testing-library/svelte's cleanup after each test (vitest globals are off in this project).
import '@testing-library/svelte/vitest';
import { afterEach } from 'vitest';
import { setLocale } from './src/lib/i18n.js';

afterEach(() => {
  // The active language is module state: start every spec in English.
  setLocale('en');
  history.replaceState(null, '', '/');
});
