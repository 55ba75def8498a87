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

/**
 * The layers of electron/core, lowest first (docs/architecture.md draws them). A folder imports only from
 * layers below its own: not from above, not from a sibling in its layer. Tests are exempt (an integration
 * spec may reach across); test helpers are not. Exported for the spec that proves the rule bites.
 */
export const CORE_LAYERS = [
  ['net', 'download'], // generic engines: URLs and origins, resumable verified downloads
  ['recordings', 'tunnels', 'sandbox'], // domain pieces: the journal, public URLs, the service emulator
  ['webhook'], // the receiver, which journals into recordings
  ['uploads'], // routes mounted on the receiver
  ['pipeline'], // wires receiver, journal, download queue, tunnel and registration together
  ['studio'], // studio mode: shares the pipeline's saved recordings over NATS JetStream, mirrors them on members
  ['receive'], // the one receive service of every face: port policy, health, `tally status`
  ['app'], // the headless core behind the tray app and `tally serve`
];

const electronFree = {
  paths: [{ name: 'electron', message: 'electron/core and renderer/ stay Electron-free: go through the contract.' }],
  patterns: [{ group: ['electron/*'], message: 'electron/core and renderer/ stay Electron-free.' }],
};

/** `^(../)+(a|b)(/|$)`: a relative import that lands in one of `folders` of electron/core. */
const into = (prefix, folders) => `^${prefix}(${folders.join('|')})(/|$)`;

function coreLayerRules() {
  const all = CORE_LAYERS.flat();
  // Root files of electron/core are the shared basics (errors, model, settings, credentials...): no folder.
  const configs = [
    {
      files: ['electron/core/*.ts'],
      ignores: ['**/*.spec.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            ...electronFree,
            patterns: [
              ...electronFree.patterns,
              { regex: into('\\./', all), message: 'Files at the root of electron/core import no folder of it.' },
              {
                regex: '^\\.\\./(?!contract\\.js$)',
                message: 'electron/core imports nothing outside it but the contract.',
              },
            ],
          },
        ],
      },
    },
  ];
  CORE_LAYERS.forEach((layer, index) => {
    for (const folder of layer) {
      const above = CORE_LAYERS.slice(index)
        .flat()
        .filter((other) => other !== folder);
      configs.push({
        files: [`electron/core/${folder}/**/*.ts`],
        ignores: ['**/*.spec.ts'],
        rules: {
          'no-restricted-imports': [
            'error',
            {
              ...electronFree,
              patterns: [
                ...electronFree.patterns,
                {
                  regex: into('(\\.\\./)+', above),
                  message: `electron/core/${folder} may import only from the layers below it (docs/architecture.md).`,
                },
                {
                  regex: '^(\\.\\./){2,}(cli|main|preload|renderer)(/|\\.|$)',
                  message: 'electron/core never imports the shells that sit on top of it.',
                },
              ],
            },
          ],
        },
      });
    }
  });
  return configs;
}

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
  ...coreLayerRules(),
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
