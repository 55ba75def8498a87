/**
 * `tally doctor` in-process through the real CLI entry: one report with versions, the data folder, the health
 * of a `tally listen` running on it (asked over its control socket), the journal's counts, the settings and
 * the logs; and no secret in it, wherever the secret was planted (environment, keychain, a URL, a log line).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { CredentialStore, MemorySecretStore, type SecretStore } from '../core/credentials.js';
import { openSettingsStore } from '../core/settings.js';
import { captureIo } from '../../tests/support/cli/io.js';

/** The keychain the commands of a test use (CommandIo.secrets; undefined: the OS keychain). */
let keychain: SecretStore | undefined;
const setKeychain = (store: SecretStore): void => {
  keychain = store;
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ENV_SECRET = 'env-secret-value-d0c7';
const KEYCHAIN_SECRET = 'keychain-secret-value-77aa';
const NGROK_TOKEN = 'ngrok-token-value-3b3b';
const TEAM_PASSWORD = 'team-password-91xx';

async function plantedHome(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'tally-doctor-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  const secrets = new MemorySecretStore();
  const store = new CredentialStore(secrets);
  await store.save({ serviceId: 'svc-doctor', secret: KEYCHAIN_SECRET });
  await store.setToken('ngrok', NGROK_TOKEN);
  setKeychain(secrets);
  cleanups.push(async () => (keychain = undefined));
  openSettingsStore(home).update({ receiverPort: 0 });
  // A log line quoting every secret, as a library error echoing a request would.
  await mkdir(join(home, 'logs'));
  const line = {
    level: 40,
    time: '2026-11-26T01:00:00.000Z',
    msg: `request failed: ${KEYCHAIN_SECRET} ${ENV_SECRET} ${NGROK_TOKEN} nats://alice:${TEAM_PASSWORD}@10.0.0.2:4222`,
  };
  await writeFile(join(home, 'logs', 'listen.1.log'), `${JSON.stringify(line)}\n`);
  return home;
}

describe('tally doctor', () => {
  it('prints one report with versions, data folder, journal counts, settings and logs, and no secret', async () => {
    const home = await plantedHome();
    const job = (key: string, state: string) => ({
      v: 1,
      job: {
        key,
        channelId: key,
        url: `https://s3.amazonaws.com/svc/${key}.mp4`,
        receivedAt: '2026-11-26T00:00:00.000Z',
        deadline: '2026-11-26T06:00:00.000Z',
        announcedBytes: null,
        duration: null,
        thumbnail: null,
        shape: 'json',
        state,
        attempts: 0,
        path: null,
        bytes: null,
        totalBytes: null,
        error: null,
        updatedAt: '2026-11-26T00:00:00.000Z',
      },
    });
    const journal = [job('a', 'pending'), job('a', 'saved'), job('b', 'saved'), job('c', 'failed')];
    await writeFile(join(home, 'inbox.jsonl'), journal.map((l) => JSON.stringify(l)).join('\n') + '\n');

    const run = captureIo(new AbortController().signal, { TALLY_HOME: home, TALLY_SECRET: ENV_SECRET }, keychain);
    expect(await main(['doctor'], run.io)).toBe(0);
    const text = run.out();
    expect(text).toMatch(/^Tally diagnostics, \S+ \(tally doctor\)\n/);
    expect(text).toMatch(/\nTally \d+\.\d+\.\d+; Node \d+/);
    expect(text).toContain(`\nOS: ${process.platform} `);
    expect(text).toContain(`Data folder: ${home}`);
    expect(text).toContain('Nothing is receiving on this data folder right now.');
    expect(text).toContain('Recordings in the journal: 1 failed, 2 saved');
    expect(text).toContain('"receiverPort": 0');
    expect(text).toContain('Last lines of the listen log:');
    expect(text).toContain('warn request failed: [redacted] [redacted] [redacted] nats://[redacted]@10.0.0.2:4222');
    for (const secret of [ENV_SECRET, KEYCHAIN_SECRET, NGROK_TOKEN, TEAM_PASSWORD, 'alice']) {
      expect(text).not.toContain(secret);
    }
  });

  it('in demo mode, says what the demo’s own journal holds instead of "no journal yet"', async () => {
    const home = await plantedHome();
    const demoJob = (key: string, state: string) =>
      JSON.stringify({
        v: 1,
        job: {
          key,
          channelId: key,
          url: `http://127.0.0.1:9/sandbox-service/${key}.mp4`,
          receivedAt: '2026-11-26T00:00:00.000Z',
          deadline: '2026-11-26T00:36:00.000Z',
          announcedBytes: null,
          duration: null,
          thumbnail: null,
          shape: 'json',
          state,
          attempts: 1,
          path: null,
          bytes: null,
          totalBytes: null,
          error: null,
          updatedAt: '2026-11-26T00:00:00.000Z',
        },
      });
    await mkdir(join(home, 'demo'));
    await writeFile(join(home, 'demo', 'inbox.jsonl'), `${demoJob('d1', 'saved')}\n${demoJob('d2', 'saved')}\n`);

    const run = captureIo(new AbortController().signal, { TALLY_HOME: home }, keychain);
    expect(await main(['doctor'], run.io)).toBe(0);
    const text = run.out();
    expect(text).not.toContain('no journal yet');
    expect(text).toContain('Recordings in the journal: none yet for real recordings (only the demo’s, below)');
    expect(text).toContain('Recordings in the demo’s journal: 2 saved');
  });

  it('includes the health of a tally listen running on the same data folder', async () => {
    const home = await plantedHome();
    const controller = new AbortController();
    const listen = captureIo(controller.signal, { TALLY_HOME: home }, keychain);
    const exit = main(
      ['listen', '--port', '0', '--tunnel', 'none', '--ndjson', '--folder', join(home, 'rec')],
      listen.io,
    );
    cleanups.push(async () => {
      controller.abort();
      await exit;
    });
    // The control socket is up once listen says it is ready.
    await new Promise<void>((resolve) => {
      const onData = () => {
        if (listen.out().includes('"type":"ready"')) {
          listen.stdout.off('data', onData);
          resolve();
        }
      };
      listen.stdout.on('data', onData);
      onData();
    });

    const run = captureIo(new AbortController().signal, { TALLY_HOME: home }, keychain);
    expect(await main(['doctor'], run.io)).toBe(0);
    const text = run.out();
    expect(text).toMatch(
      /\n {2}tally listen \(process \d+\): (ok|warning|error), (no problems|1 problem|\d+ problems)\n/,
    );
    expect(text).toMatch(/\n {4}(ok|warning|error) +receiver /);
    // listen's own log is quoted too, with the line it wrote when it started.
    expect(text).toMatch(/info tally listen started/);
    for (const secret of [KEYCHAIN_SECRET, NGROK_TOKEN]) expect(text).not.toContain(secret);
    controller.abort();
    expect(await exit).toBe(0);
  }, 60_000);
});
