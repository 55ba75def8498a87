// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import boundaries from './eslint/boundaries.js';
import wallClock from './eslint/wall-clock.js';

/** The project's own rules: layer and process boundaries, and no wall clock in timing code. */
const tally = { rules: { ...boundaries.rules, 'wall-clock': wallClock } };

/**
 * The layers of electron/core, lowest first (docs/architecture.md draws them). A folder imports only from
 * layers below its own: not from above, not from a sibling in its layer. Specs are exempt (an integration
 * spec may reach across). Exported for the spec that proves the rule bites.
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

/**
 * Files of electron/ that may read a clock directly (tally/wall-clock), each for a reason: exported for the spec
 * that proves the rule bites (tests/architecture/wall-clock.spec.ts). Everything else takes a Clock of time.ts.
 */
export const WALL_CLOCK_ALLOWED = [
  // The time module itself: the one place that reads both clocks.
  'electron/core/time.ts',
  // The emulator plays the service, whose clock is the wall clock it reports (it dates its answers by it); its
  // durations run on its own VirtualClock (sandbox/clock.ts), which a test speeds up.
  'electron/core/sandbox/**',
];

const IPC_ONLY_IN_TRANSPORT = {
  selector: 'MemberExpression[object.name=/^ipc(Main|Renderer)$/]',
  message: 'Only electron/main/ipc.ts and the preload use ipcMain/ipcRenderer: add a contract request instead.',
};

/**
 * A name that holds a wait: `delayMs`, `this.#listenWait`, `RETRY_MAX`, `backoff`. The doubling rules below judge
 * only these, so `2 * i + 1` in a heap or `2 * size` stays free.
 */
const WAIT_NAME =
  '/(?:[dD]elay|DELAY|[wW]ait|WAIT|[bB]ackoff|BACKOFF|[iI]nterval|INTERVAL|[tT]imeout|TIMEOUT|[sS]leep|[rR]etry|RETRY|[pP]ause|PAUSE)|(?:Ms|_MS)$|^ms$/';
const waitOperand = (side) => `[${side}.name=${WAIT_NAME}], [${side}.property.name=${WAIT_NAME}]`;
const BACKOFF_MESSAGE =
  'Retry waits come from electron/core/backoff.ts (backoffDelay, retrying) and retry-loop.ts (RetryLoop): no backoff formula of its own.';

/**
 * Every retry waits what electron/core/backoff.ts says: no backoff formula of its own. Caught: `2 ** n` with a
 * growing `n`, `Math.pow(2, n)`, `1 << n`, and a wait doubled by hand (`wait * 2`, `2 * delayMs`,
 * `this.#waitMs *= 2`, `wait << 1`), the walk-around pipeline.ts once used.
 */
const ONE_BACKOFF = [
  "BinaryExpression[operator='**'][left.value=2]:not([right.type='Literal'])",
  "CallExpression[callee.object.name='Math'][callee.property.name='pow'][arguments.0.value=2]:not([arguments.1.type='Literal'])",
  "BinaryExpression[operator='<<'][left.value=1]:not([right.type='Literal'])",
  `BinaryExpression[operator='*'][right.value=2]:matches(${waitOperand('left')})`,
  `BinaryExpression[operator='*'][left.value=2]:matches(${waitOperand('right')})`,
  `BinaryExpression[operator='<<']:matches(${waitOperand('left')})`,
  `AssignmentExpression[operator=/^(?:\\*=|<<=)$/]:matches(${waitOperand('left')})`,
].map((selector) => ({ selector, message: BACKOFF_MESSAGE }));

/**
 * A value import of node:http loads Node's bundled fetch client (about 10 MB) through the module's namespace:
 * the core takes node:http and node:https from electron/core/node-http.ts. Type imports compile to nothing.
 */
const HTTP_THROUGH_NODE_HTTP = ['node:http', 'http', 'node:https', 'https'].map((name) => ({
  name,
  allowTypeImports: true,
  message: 'Take node:http / node:https from electron/core/node-http.ts (an ESM import of node:http loads undici).',
}));

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
  // Process and layer boundaries, judged on resolved paths (eslint/boundaries.js, docs/architecture.md).
  {
    files: ['electron/**/*.ts', 'renderer/**/*.ts', 'renderer/**/*.svelte'],
    plugins: { tally },
    rules: {
      'tally/boundaries': [
        'error',
        { layers: CORE_LAYERS, domain: ['pipeline', 'studio', 'download', 'recordings', 'webhook', 'tunnels'] },
      ],
    },
  },
  // Only the IPC transport calls ipcMain / ipcRenderer (GitHub Desktop keeps that to two small wrappers).
  {
    files: ['electron/**/*.ts'],
    ignores: ['electron/main/ipc.ts', 'electron/preload/index.ts', '**/*.spec.ts'],
    rules: { 'no-restricted-syntax': ['error', IPC_ONLY_IN_TRANSPORT, ...ONE_BACKOFF] },
  },
  {
    files: ['electron/main/ipc.ts', 'electron/preload/index.ts'],
    rules: { 'no-restricted-syntax': ['error', ...ONE_BACKOFF] },
  },
  // The browser retries its WebSocket with the same policy (backoff.ts is browser-safe: the 'notes' zone).
  { files: ['renderer/**/*.ts', 'renderer/**/*.svelte'], rules: { 'no-restricted-syntax': ['error', ...ONE_BACKOFF] } },
  { files: ['electron/core/backoff.ts'], rules: { 'no-restricted-syntax': 'off' } },
  // Timing code measures on the monotonic clock of electron/core/time.ts (eslint/wall-clock.js, issue 30).
  {
    files: ['electron/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.e2e.ts', ...WALL_CLOCK_ALLOWED],
    plugins: { tally },
    rules: { 'tally/wall-clock': 'error' },
  },
  {
    files: ['electron/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: HTTP_THROUGH_NODE_HTTP }] },
  },
);
