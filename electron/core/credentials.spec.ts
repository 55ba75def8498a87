import { describe, expect, it } from 'vitest';
import {
  KeyringSecretStore,
  sessionBusReachable,
  CredentialStore,
  MemorySecretStore,
  NO_SECRET_SERVICE_MESSAGE,
  PROJECT_ACCOUNT,
  credentialsFromEnv,
  keyringError,
} from './credentials.js';
import type { SecretStore } from './credentials.js';
import { ConfigError } from './errors.js';

/** Records every call, to prove the keychain is not touched when the environment has credentials. */
class CountingStore implements SecretStore {
  calls = 0;
  readonly inner = new MemorySecretStore();
  async get(account: string) {
    this.calls += 1;
    return this.inner.get(account);
  }
  async set(account: string, value: string) {
    this.calls += 1;
    return this.inner.set(account, value);
  }
  async delete(account: string) {
    this.calls += 1;
    return this.inner.delete(account);
  }
}

describe('MemorySecretStore', () => {
  it('round-trips, overwrites and deletes', async () => {
    const store = new MemorySecretStore();
    expect(await store.get('a')).toBeNull();
    await store.set('a', 'one');
    await store.set('a', 'two');
    expect(await store.get('a')).toBe('two');
    expect(await store.delete('a')).toBe(true);
    expect(await store.delete('a')).toBe(false);
    expect(await store.get('a')).toBeNull();
  });
});

describe('CredentialStore', () => {
  it('saves, loads and clears project credentials', async () => {
    const store = new CredentialStore(new MemorySecretStore());
    expect(await store.load({})).toBeNull();
    expect(await store.hasCredentials({})).toBe(false);
    await store.save({ serviceId: ' svc ', secret: ' s3cr3t\n' });
    expect(await store.load({})).toEqual({ serviceId: 'svc', secret: 's3cr3t' });
    expect(await store.serviceId({})).toBe('svc');
    expect(await store.clear()).toBe(true);
    expect(await store.clear()).toBe(false);
    expect(await store.load({})).toBeNull();
  });

  it('prefers the environment and then never opens the keychain', async () => {
    const secrets = new CountingStore();
    const store = new CredentialStore(secrets);
    const env = { TALLY_SERVICE_ID: 'env-svc', TALLY_SECRET: 'env-secret' };
    expect(await store.load(env)).toEqual({ serviceId: 'env-svc', secret: 'env-secret' });
    expect(secrets.calls).toBe(0);
  });

  it('refuses half an environment instead of mixing sources', async () => {
    const store = new CredentialStore(new MemorySecretStore());
    await store.save({ serviceId: 'svc', secret: 'stored' });
    await expect(store.load({ TALLY_SECRET: 'x' })).rejects.toThrow(/TALLY_SERVICE_ID is not set/);
    await expect(store.load({ TALLY_SERVICE_ID: 'x' })).rejects.toThrow(/TALLY_SECRET is not set/);
    expect(credentialsFromEnv({ TALLY_SERVICE_ID: '  ', TALLY_SECRET: '' })).toBeNull();
  });

  it('reports a damaged keychain entry without quoting it', async () => {
    const secrets = new MemorySecretStore();
    await secrets.set(PROJECT_ACCOUNT, 'not-json-s3cr3t');
    const store = new CredentialStore(secrets);
    const error = await store.load({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).not.toContain('s3cr3t');
    expect((error as Error).message).toMatch(/tally login/);
  });

  it('keeps named tokens apart from the project credentials', async () => {
    const store = new CredentialStore(new MemorySecretStore());
    await store.save({ serviceId: 'svc', secret: 'sec' });
    expect(await store.getToken('ngrok')).toBeNull();
    await store.setToken('ngrok', ' tok_123 ');
    expect(await store.getToken('ngrok')).toBe('tok_123');
    expect(await store.deleteToken('ngrok')).toBe(true);
    expect(await store.getToken('ngrok')).toBeNull();
    expect(await store.load({})).toEqual({ serviceId: 'svc', secret: 'sec' });
    await expect(store.setToken('ngrok', '  ')).rejects.toBeInstanceOf(ConfigError);
    await expect(store.save({ serviceId: 'svc', secret: ' ' })).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('keyringError', () => {
  it.runIf(process.platform === 'linux')('explains a missing Secret Service plainly', () => {
    const native = new Error('Platform failure: DBus error: Failed to connect to socket /nope: No such file', {
      cause: new Error('Failed to connect to socket /nope'),
    });
    const error = keyringError(native);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(NO_SECRET_SERVICE_MESSAGE);
    expect(error.cause).toBeUndefined();
  });

  it('tells a locked keychain apart', () => {
    const error = keyringError(
      new Error("Couldn't access platform storage: Secret Service: unlock prompt was dismissed"),
    );
    expect(error.message).toMatch(/locked/);
  });

  it('keeps only the first line of anything else', () => {
    const error = keyringError(new Error('Something odd\n    at stack line'));
    expect(error.message).toMatch(/Something odd/);
    expect(error.message).not.toMatch(/stack line/);
  });
});

describe('the Secret Service out of reach', () => {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;

  it('is known without the native library when no session bus can be reached (a headless tally listen)', () => {
    const none = () => false;
    expect(sessionBusReachable({}, none)).toBe(false);
    expect(sessionBusReachable({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/tmp/bus' }, none)).toBe(true);
    expect(sessionBusReachable({ DISPLAY: ':0' }, none)).toBe(true);
    expect(sessionBusReachable({ XDG_RUNTIME_DIR: '/run/x' }, (path) => path === '/run/x/bus')).toBe(true);
    expect(sessionBusReachable({}, (path) => path === `/run/user/${uid}/bus`)).toBe(true);
  });

  it.runIf(process.platform === 'linux')('answers with the keychain note, as the library would', async () => {
    const env = { XDG_RUNTIME_DIR: '/nonexistent-runtime-dir' };
    // A machine with a session bus at /run/user/<uid>/bus reaches the library: nothing to check there.
    if (sessionBusReachable(env)) return;
    const store = new KeyringSecretStore({ env });
    await expect(store.get('anything')).rejects.toThrow(NO_SECRET_SERVICE_MESSAGE);
  });
});
