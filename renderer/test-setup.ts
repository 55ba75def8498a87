import '@testing-library/jest-dom/vitest';
// Registers @testing-library/svelte's cleanup after each test (vitest globals are off in this project).
import '@testing-library/svelte/vitest';
import { afterEach } from 'vitest';
import { setLocale } from './src/lib/i18n.js';

// jsdom has no matchMedia; the popover's specs run at popover size, where no media query of ours matches.
if (typeof window.matchMedia !== 'function') {
  Object.defineProperty(window, 'matchMedia', {
    configurable: true,
    value: (query: string) => ({
      matches: false,
      media: query,
      onchange: null,
      addEventListener: () => {},
      removeEventListener: () => {},
      addListener: () => {},
      removeListener: () => {},
      dispatchEvent: () => false,
    }),
  });
}

afterEach(() => {
  // The active language is module state: start every spec in English.
  setLocale('en');
  history.replaceState(null, '', '/');
});
