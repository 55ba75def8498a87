// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';

const noElectron = {
  'no-restricted-imports': [
    'error',
    {
      paths: [
        { name: 'electron', message: 'electron/core and renderer/ stay Electron-free: go through the contract.' },
      ],
      patterns: [{ group: ['electron/*'], message: 'electron/core and renderer/ stay Electron-free.' }],
    },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'release/**', 'coverage/**', 'node_modules/**', '.tsbuild/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['renderer/**/*.svelte', 'renderer/**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] } },
  },
  {
    files: ['renderer/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  { files: ['electron/core/**', 'renderer/**'], rules: noElectron },
  // Only the IPC transport calls ipcMain / ipcRenderer (GitHub Desktop keeps that to two small wrappers).
  {
    files: ['electron/**/*.ts'],
    ignores: ['electron/main/ipc.ts', 'electron/preload/index.ts', '**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'MemberExpression[object.name=/^ipc(Main|Renderer)$/]',
          message: 'Only electron/main/ipc.ts and the preload use ipcMain/ipcRenderer: add a contract request instead.',
        },
      ],
    },
  },
);
