/**
 * `tally login --team` / `tally logout --team`: the team server's password or token from stdin into the
 * keychain (its in-memory twin here), bound to that server, never echoed; and the studio flags' usage errors.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { CredentialStore, MemorySecretStore, type SecretStore } from '../core/credentials.js';
import { ConfigError } from '../core/errors.js';
import { note } from '../core/notes.js';
import { resolveTeamCredentials } from '../core/studio/team-credentials.js';

let secrets: MemorySecretStore;
/** The keychain every command of a test uses (handed in on CommandIo.secrets). */
let keychain: SecretStore;
let home: string;

async function run(argv: string[], stdin = '', env: NodeJS.ProcessEnv = {}) {
  const input = new PassThrough();
  input.end(stdin);
  let out = '';
  let err = '';
  const stdout = new PassThrough().on('data', (c: Buffer) => (out += c.toString()));
  const stderr = new PassThrough().on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(argv, {
    stdout,
    stderr,
    stdin: input,
    env: { TALLY_HOME: home, ...env },
    secrets: keychain,
    signal: new AbortController().signal,
  });
  return { code, out, err };
}

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'tally-login-team-'));
  secrets = new MemorySecretStore();
  keychain = secrets;
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('tally login --team', () => {
  it('stores a user and password for that server only, and never prints the password', async () => {
    const result = await run(['login', '--team', 'tls://nats.example.com:4222', '--user', 'edit-bay'], 'pw-secret-1\n');
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toBe('The team credentials for nats.example.com:4222 are stored in the OS keychain.\n');
    const store = new CredentialStore(secrets);
    expect(await resolveTeamCredentials(new URL('nats://nats.example.com:4222'), {}, store)).toEqual({
      user: 'edit-bay',
      password: 'pw-secret-1',
    });
    // Another server never gets them.
    expect(await resolveTeamCredentials(new URL('nats://other.example.com:4222'), {}, store)).toBeNull();
    // The environment wins over the keychain.
    expect(
      await resolveTeamCredentials(new URL('nats://nats.example.com:4222'), { TALLY_TEAM_TOKEN: 't' }, store),
    ).toEqual({ token: 't' });

    expect(await run(['logout', '--team'])).toMatchObject({
      code: 0,
      out: 'Removed the team credentials from the OS keychain.\n',
    });
    expect(await resolveTeamCredentials(new URL('nats://nats.example.com:4222'), {}, store)).toBeNull();
  });

  it('refuses credentials inside the URL, and studio flags without --team, with a usage error', async () => {
    const inUrl = await run(['login', '--team', 'nats://u:p@nats.example.com:4222'], 'x');
    expect(inUrl.code).toBe(2);
    expect(inUrl.err).toMatch(/^tally login: --team must not carry credentials/);
    const store = await run(['listen', '--store', 's3://bucket/prefix']);
    expect(store.code).toBe(2);
    expect(store.err).toMatch(/^tally listen: --store needs --team\./);
    const badStore = await run(['listen', '--team', 'nats://127.0.0.1:4222', '--store', 'ftp://x']);
    expect(badStore.err).toMatch(/^tally listen: --store must be "nats" or s3:\/\/BUCKET\/PREFIX/);
    const retention = await run(['listen', '--team', 'nats://127.0.0.1:4222', '--retention', '5m']);
    expect(retention.err).toMatch(/^tally listen: --retention must be between 1h and 365d/);
    const half = await run(['follow', '--team', 'nats://127.0.0.1:4222', '--folder', home], '', {
      TALLY_TEAM_USER: 'u',
    });
    expect(half.code).toBe(1);
    expect(half.err).toMatch(/TALLY_TEAM_PASSWORD is not set/);
  });
});

/**
 * A stand-in for the OS keychain on a machine without a Secret Service: every call is refused with the error the
 * real KeyringSecretStore throws there (tests/keychain.spec.ts proves that one against a missing bus).
 */
class NoSecretService implements SecretStore {
  get(): Promise<string | null> {
    return Promise.reject(new ConfigError(note('keychainNoService')));
  }
  set(): Promise<void> {
    return Promise.reject(new ConfigError(note('keychainNoService')));
  }
  delete(): Promise<boolean> {
    return Promise.reject(new ConfigError(note('keychainNoService')));
  }
}

describe('tally login --team without a Secret Service', () => {
  it('is refused with one line, the same words as the service secret, and says nothing is stored', async () => {
    keychain = new NoSecretService();
    const team = await run(['login', '--team', 'nats://127.0.0.1:4222', '--user', 'edit-bay'], 'pw\n');
    const service = await run(['login', '--service-id', 'svc', '--no-verify'], 'secret\n');
    expect(team.code).toBe(1);
    expect(team.out).toBe('');
    expect(team.err).toBe(service.err);
    expect(team.err).toMatch(/^tally login: No Secret Service is running: [^\n]*\n$/);
    expect(team.err + service.out).not.toMatch(/stored/i);
  });
});
