import { lineLogger } from './logger.js';
import { describe, expect, it } from 'vitest';
import { CredentialResolver, HOSTS_TOKEN, hostsKey, type CredentialResolverOptions } from './credential-resolver.js';
import { CredentialStore, MemorySecretStore, PROJECT_ACCOUNT, type SecretStore } from './credentials.js';
import type { Endpoints } from './endpoints.js';

const A: Endpoints = {
  baseUrl: 'https://a.test',
  consoleApiUrl: 'https://a-console.test',
  adminUrl: 'https://a.test:3002',
};
const B: Endpoints = { ...A, adminUrl: 'https://b.test:3002' };
const CREDS = { serviceId: 'svc', secret: 'sec' };

function resolver(
  secrets: SecretStore | null,
  env: NodeJS.ProcessEnv = {},
  extra: Partial<CredentialResolverOptions> = {},
) {
  return new CredentialResolver({ secrets, env, reenter: 'log in again', noCredentials: 'No credentials.', ...extra });
}

/** A keychain that fails every call, as a locked or missing Secret Service does. */
class BrokenStore implements SecretStore {
  calls = 0;
  async get(): Promise<string | null> {
    this.calls += 1;
    throw new Error('locked');
  }
  async set(): Promise<void> {
    this.calls += 1;
    throw new Error('locked');
  }
  async delete(): Promise<boolean> {
    this.calls += 1;
    throw new Error('locked');
  }
}

describe('CredentialResolver', () => {
  it('binds a keychain secret to the hosts it was entered for, whatever changed them afterwards', async () => {
    const secrets = new MemorySecretStore();
    const first = resolver(secrets);
    await first.store?.save(CREDS);
    await first.bind(A);
    expect(await first.lookup(A)).toEqual({ kind: 'ready', credentials: CREDS, source: 'keychain' });
    // A fresh resolver (another process, the other face) reads the same binding from the keychain.
    expect(await resolver(secrets).lookup(B)).toEqual({
      kind: 'hosts-changed',
      serviceId: 'svc',
      source: 'keychain',
      message: 'The service hosts changed since the secret was entered, so it is not sent to them: log in again.',
    });
    await first.bind(B);
    expect((await resolver(secrets).lookup(B)).kind).toBe('ready');
    expect((await resolver(secrets).lookup(A)).kind).toBe('hosts-changed');
  });

  it('binds a secret stored before bindings existed to the hosts of its first use', async () => {
    const secrets = new MemorySecretStore();
    await new CredentialStore(secrets).save(CREDS);
    expect((await resolver(secrets).lookup(A)).kind).toBe('ready');
    expect(await secrets.get(`token:${HOSTS_TOKEN}`)).toBe(hostsKey(A));
    expect((await resolver(secrets).lookup(B)).kind).toBe('hosts-changed');
  });

  it('never opens the keychain for an environment secret, and binds it to its first hosts in this process', async () => {
    const broken = new BrokenStore();
    const env = { TALLY_SERVICE_ID: 'env-svc', TALLY_SECRET: 'env-sec' };
    const r = resolver(broken, env);
    expect(await r.lookup(A)).toEqual({
      kind: 'ready',
      credentials: { serviceId: 'env-svc', secret: 'env-sec' },
      source: 'env',
    });
    expect((await r.lookup(B)).kind).toBe('hosts-changed');
    expect((await r.lookup(A, 'flag-svc')).kind).toBe('ready');
    expect(broken.calls).toBe(0);
  });

  it('withholds the secret and logs when the binding cannot be read', async () => {
    const secrets = new MemorySecretStore();
    await new CredentialStore(secrets).save(CREDS);
    const lines: string[] = [];
    // The project entry reads fine; only the binding fails, as a keychain that locks mid-way would.
    const flaky: SecretStore = {
      get: async (account) => {
        if (account === PROJECT_ACCOUNT) return secrets.get(account);
        throw new Error('locked');
      },
      set: (a, v) => secrets.set(a, v),
      delete: (a) => secrets.delete(a),
    };
    const found = await resolver(flaky, {}, { log: lineLogger((line) => lines.push(line)) }).lookup(A);
    expect(found.kind).toBe('hosts-changed');
    expect(lines).toEqual(['credentials: the hosts binding could not be read: locked']);
  });

  it('says what is missing, without ever pairing an environment secret with a stored project', async () => {
    const secrets = new MemorySecretStore();
    expect(await resolver(secrets).lookup(A)).toEqual({
      kind: 'missing',
      message: 'No credentials.',
      configured: false,
    });
    expect(await resolver(null).lookup(A)).toMatchObject({ kind: 'missing', configured: false });
    await new CredentialStore(secrets).save(CREDS);
    expect(await resolver(secrets, { TALLY_SECRET: 'x' }).lookup(A)).toMatchObject({
      kind: 'missing',
      message: expect.stringMatching(/TALLY_SECRET is set but TALLY_SERVICE_ID is not/),
    });
    expect(await resolver(secrets).lookup(A, 'other')).toMatchObject({
      kind: 'missing',
      message: expect.stringMatching(/holds credentials for service ID "svc", not "other"/),
    });
    await secrets.set(PROJECT_ACCOUNT, 'not json');
    expect(await resolver(secrets).lookup(A)).toMatchObject({ kind: 'missing', configured: true });
  });

  it('forgets the binding with the secret, and reads the ngrok authtoken from the keychain only', async () => {
    const secrets = new MemorySecretStore();
    const r = resolver(secrets, { NGROK_AUTHTOKEN: 'from-env' });
    await r.bind(A);
    await r.forget();
    expect(await secrets.get(`token:${HOSTS_TOKEN}`)).toBeNull();
    expect(await r.ngrokAuthtoken()).toBeNull();
    await r.store?.setToken('ngrok', 'from-keychain');
    expect(await r.ngrokAuthtoken()).toBe('from-keychain');
    expect(await resolver(null).ngrokAuthtoken()).toBeNull();
  });
});
