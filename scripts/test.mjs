#!/usr/bin/env node
// `npm test`: every check and every test, in the order that fails fastest. Used by the README and by CI.
//   1. build (the CLI bin, the preload and the renderer are tested as built)
//   2. lint and typecheck
//   3. vitest: core, CLI, main-process services and Svelte components; run inside a private D-Bus session
//      with an unlocked gnome-keyring so the keychain tests talk to a real Secret Service
//   4. end-to-end tests in Chromium and the packaging check
//   5. benchmarks in their short mode (they print ratios and never fail on timing)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureProjectNode } from './project-node.mjs';

// The suite runs under the Node that Electron bundles (.nvmrc), installed by the project when missing.
ensureProjectNode();
process.stdout.write(`node ${process.version} (${process.execPath})\n`);

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick'); // skip lint/typecheck/bench: for a fast local loop

function run(title, cmd, cmdArgs, env = {}) {
  const started = Date.now();
  process.stdout.write(`\n▶ ${title}\n`);
  const r = spawnSync(cmd, cmdArgs, { stdio: 'inherit', env: { ...process.env, ...env } });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (r.status !== 0) {
    process.stdout.write(`✖ ${title} failed (${secs} s)\n`);
    process.exit(r.status ?? 1);
  }
  process.stdout.write(`✔ ${title} (${secs} s)\n`);
}

const which = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;

run('build', 'npm', ['run', '--silent', 'build']);
if (!quick) {
  run('lint', 'npm', ['run', '--silent', 'lint']);
  run('typecheck', 'npm', ['run', '--silent', 'typecheck']);
}

const vitest = ['node_modules/.bin/vitest', 'run'];
if (which('dbus-run-session') && which('gnome-keyring-daemon')) {
  // A throwaway keyring in a temp folder inside a private session bus: the developer's own keyring is never
  // opened, and the password only unlocks this one.
  const keyrings = mkdtempSync(join(tmpdir(), 'tally-keyring-'));
  process.on('exit', () => rmSync(keyrings, { recursive: true, force: true }));
  const inner =
    `echo -n tally-test | XDG_DATA_HOME="${keyrings}" gnome-keyring-daemon --unlock --components=secrets >/dev/null` +
    ` && node scripts/wait-keyring.mjs && exec ${vitest.join(' ')}`;
  run('unit, integration and component tests (with a real Secret Service)', 'dbus-run-session', [
    '--',
    'sh',
    '-c',
    inner,
  ]);
} else if (process.env.CI) {
  console.error('CI needs dbus-run-session and gnome-keyring-daemon for the keychain tests (see .ci/run).');
  process.exit(1);
} else {
  console.warn(
    'dbus-run-session or gnome-keyring is missing: keychain tests are skipped (apt-get install dbus gnome-keyring).',
  );
  run('unit, integration and component tests', vitest[0], vitest.slice(1), { TALLY_SKIP_KEYCHAIN_TESTS: '1' });
}

if (existsSync('vitest.e2e.config.ts'))
  run('end-to-end tests (Chromium)', vitest[0], ['run', '-c', 'vitest.e2e.config.ts']);
if (!quick && existsSync('bench/run.ts'))
  run('benchmarks (short mode)', 'npm', ['run', '--silent', 'bench', '--', '--quick']);
process.stdout.write('\nAll checks passed.\n');
