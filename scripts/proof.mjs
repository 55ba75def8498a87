#!/usr/bin/env node
// The long modes of the reliability and security suites, one command each (docs/proof.md says what each
// proves). The short modes run in `npm test`; these are for a sceptical engineer with time to spare.
//
//   node scripts/proof.mjs soak     TALLY_SOAK=long: 600 broadcasts, big recordings, ~90 fault injections
//   node scripts/proof.mjs crash    TALLY_CRASH_ROUNDS=50 kill -9 rounds
//   node scripts/proof.mjs fuzz     TALLY_FUZZ_COUNT=100000 hostile webhooks, issue 10's limits, the contract fuzz,
//                                   issue 20's bad days (DNS answers, lying origins, state damage, full disks)
//   node scripts/proof.mjs short    every suite in its CI mode
//   node scripts/proof.mjs all      every long mode, then the rest of the security suites
//
// A seed can be pinned for any of them: TALLY_SOAK_SEED, TALLY_CRASH_SEED, TALLY_FUZZ_SEED (each suite
// prints the one it used). Values already in the environment win over the defaults below.
import { spawnSync } from 'node:child_process';

const MODES = {
  soak: { files: ['tests/reliability/soak.spec.ts'], env: { TALLY_SOAK: 'long' } },
  crash: { files: ['tests/reliability/crash.spec.ts'], env: { TALLY_CRASH_ROUNDS: '50' } },
  fuzz: {
    files: [
      'tests/security/webhook-fuzz.spec.ts',
      'tests/security/limits-fuzz.spec.ts',
      'tests/security/contract-fuzz.spec.ts',
      'tests/security/bad-days-fuzz.spec.ts',
    ],
    env: { TALLY_FUZZ_COUNT: '100000' },
  },
  short: { files: ['tests/reliability', 'tests/security'], env: {} },
};

const mode = process.argv[2] ?? '';
const runs =
  mode === 'all'
    ? [MODES.soak, MODES.crash, MODES.fuzz, { files: ['tests/security'], env: {} }]
    : MODES[mode]
      ? [MODES[mode]]
      : null;
if (!runs) {
  console.error('Usage: node scripts/proof.mjs soak|crash|fuzz|short|all');
  process.exit(2);
}

const which = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
// The secrets suite uses the real Secret Service when there is a session bus: give it one if we can.
const privateBus = !process.env.DBUS_SESSION_BUS_ADDRESS && which('dbus-run-session') && which('gnome-keyring-daemon');

for (const run of runs) {
  const vitest = ['node_modules/.bin/vitest', 'run', ...run.files, '--project', 'node'];
  const env = { ...run.env, ...process.env };
  const started = Date.now();
  process.stdout.write(
    `\n▶ ${Object.entries(run.env)
      .map(([k, v]) => `${k}=${v} `)
      .join('')}vitest ${run.files.join(' ')}\n`,
  );
  const result = privateBus
    ? spawnSync(
        'dbus-run-session',
        [
          '--',
          'sh',
          '-c',
          `echo -n tally-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec ${vitest.join(' ')}`,
        ],
        { stdio: 'inherit', env },
      )
    : spawnSync(vitest[0], vitest.slice(1), { stdio: 'inherit', env });
  const secs = ((Date.now() - started) / 1000).toFixed(0);
  if (result.status !== 0) {
    process.stdout.write(`✖ failed after ${secs} s\n`);
    process.exit(result.status ?? 1);
  }
  process.stdout.write(`✔ passed in ${secs} s\n`);
}
