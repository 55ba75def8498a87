/**
 * The keychain for real: a Secret Service (gnome-keyring) on a private D-Bus session. Run it as
 *
 *   dbus-run-session -- sh -c 'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; npx vitest run tests/keychain.spec.ts'
 *
 * Without a session bus the file fails on purpose (a silently skipped keychain test proves nothing),
 * unless TALLY_SKIP_KEYCHAIN_TESTS=1 says the skip is intended.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../electron/cli.js';
import {
  CredentialStore,
  KEYCHAIN_SERVICE,
  KeyringSecretStore,
  NO_SECRET_SERVICE_MESSAGE,
  PROJECT_ACCOUNT,
} from '../electron/core/credentials.js';
import { HOSTS_TOKEN } from '../electron/core/credential-resolver.js';
import { startSandbox } from '../electron/core/sandbox/index.js';
import { runToEnd, type ChildOutput } from './support/child-output.js';
import { captureIo } from './support/cli/io.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const linux = process.platform === 'linux';
const hasBus = Boolean(process.env.DBUS_SESSION_BUS_ADDRESS);
const skipRequested = process.env.TALLY_SKIP_KEYCHAIN_TESTS === '1';

describe.runIf(linux && !hasBus && !skipRequested)('keychain test setup', () => {
  it('needs a D-Bus session with a Secret Service', () => {
    throw new Error(
      'DBUS_SESSION_BUS_ADDRESS is not set, so the real keychain cannot be tested. Run: ' +
        "dbus-run-session -- sh -c 'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; " +
        "npx vitest run tests/keychain.spec.ts' (or set TALLY_SKIP_KEYCHAIN_TESTS=1 to skip on purpose).",
    );
  });
});

describe.runIf(linux && hasBus)('KeyringSecretStore on the Secret Service', () => {
  // A service name of its own, so these entries never touch a real Tally login.
  const store = new KeyringSecretStore({ service: `Tally-test-${randomBytes(4).toString('hex')}` });
  const accounts = ['plain', 'unicode', 'overwrite'];
  afterAll(async () => {
    for (const account of accounts) await store.delete(account);
  });

  it('round-trips a value and deletes it', async () => {
    expect(await store.get('plain')).toBeNull();
    await store.set('plain', 'value-1');
    expect(await store.get('plain')).toBe('value-1');
    expect(await store.delete('plain')).toBe(true);
    expect(await store.get('plain')).toBeNull();
    expect(await store.delete('plain')).toBe(false);
  });

  it('overwrites an existing value', async () => {
    await store.set('overwrite', 'first');
    await store.set('overwrite', 'second');
    expect(await store.get('overwrite')).toBe('second');
  });

  it('keeps unicode and long values intact', async () => {
    const value = `비밀-🔑-ключ-${'x'.repeat(2000)}`;
    await store.set('unicode', value);
    expect(await store.get('unicode')).toBe(value);
  });

  it('carries credentials and tokens through CredentialStore', async () => {
    const creds = new CredentialStore(store);
    accounts.push(PROJECT_ACCOUNT, 'token:ngrok');
    await creds.save({ serviceId: 'svc-ü', secret: 's3crét' });
    await creds.setToken('ngrok', 'tok');
    expect(await creds.load({})).toEqual({ serviceId: 'svc-ü', secret: 's3crét' });
    expect(await creds.getToken('ngrok')).toBe('tok');
    expect(await creds.clear()).toBe(true);
    expect(await creds.load({})).toBeNull();
  });
});

describe.runIf(linux && hasBus)('tally login and tally live with the real keychain', () => {
  const real = new KeyringSecretStore({ service: KEYCHAIN_SERVICE });
  // The secret and the hosts it is bound to (written by login, removed by logout).
  const ENTRIES = [PROJECT_ACCOUNT, `token:${HOSTS_TOKEN}`];
  const previous = new Map<string, string | null>();
  let sb: Awaited<ReturnType<typeof startSandbox>>;
  let home: string;

  beforeAll(async () => {
    // The CLI files its entries under the real service name; keep whatever a developer had there.
    for (const account of ENTRIES) {
      previous.set(account, await real.get(account));
      await real.delete(account);
    }
    sb = await startSandbox({ searchIndexDelayMs: 0, seed: 1, secret: `kc-${randomBytes(6).toString('hex')}` });
    home = await mkdtemp(join(tmpdir(), 'tally-keychain-'));
  });
  afterAll(async () => {
    for (const account of ENTRIES) {
      const value = previous.get(account) ?? null;
      if (value === null) await real.delete(account);
      else await real.set(account, value);
    }
    await sb?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  async function run(argv: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    // No TALLY_SERVICE_ID / TALLY_SECRET: the credentials can only come from the keychain (the real one here).
    const env = {
      TALLY_BASE_URL: sb.endpoints.baseUrl,
      TALLY_CONSOLE_API_URL: sb.endpoints.consoleApiUrl,
      TALLY_ADMIN_URL: sb.endpoints.adminUrl,
      TALLY_HOME: home,
      TALLY_RETRIES: '0',
    };
    const made = captureIo(new AbortController().signal, env, undefined, input);
    const code = await main(argv, made.io);
    return { code, stdout: made.out(), stderr: made.err() };
  }

  it('stores what login reads from stdin, and live uses it', async () => {
    const { serviceId, secret } = sb.credentials;
    const before = await run(['live']);
    expect(before.code).toBe(1);
    expect(before.stderr).toMatch(/No credentials: run "tally login"/);

    const login = await run(['login', '--service-id', serviceId, '--secret-stdin'], `${secret}\n`);
    expect(login.code).toBe(0);
    expect(login.stdout).toMatch(new RegExp(`^Logged in as ${serviceId}: 0 channels live now\\.`));
    expect(login.stdout + login.stderr).not.toContain(secret);
    expect(JSON.parse((await real.get(PROJECT_ACCOUNT)) ?? '{}')).toEqual({ serviceId, secret });
    expect(JSON.parse((await real.get(`token:${HOSTS_TOKEN}`)) ?? '[]')).toEqual([
      sb.endpoints.baseUrl,
      sb.endpoints.consoleApiUrl,
      sb.endpoints.adminUrl,
    ]);

    sb.control.startBroadcast({ id: 'kc-live', watchers: 5 });
    const live = await run(['live']);
    expect(live.code).toBe(0);
    expect(live.stdout).toMatch(/^kc-live\s+5\s/m);

    const logout = await run(['logout']);
    expect(logout.code).toBe(0);
    expect(await real.get(PROJECT_ACCOUNT)).toBeNull();
    expect(await real.get(`token:${HOSTS_TOKEN}`)).toBeNull();
    expect((await run(['live'])).code).toBe(1);
  });

  it('stores the ngrok authtoken with login --ngrok, never echoing it', async () => {
    const account = 'token:ngrok';
    const saved = await real.get(account);
    try {
      const token = `ngrok_${randomBytes(8).toString('hex')}`;
      const result = await run(['login', '--ngrok'], `${token}\n`);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/ngrok authtoken is stored in the OS keychain/);
      expect(result.stdout + result.stderr).not.toContain(token);
      expect(await new CredentialStore(real).getToken('ngrok')).toBe(token);
      expect((await run(['login', '--ngrok'], 'two words\n')).code).toBe(2);
    } finally {
      if (saved === null) await real.delete(account);
      else await real.set(account, saved);
    }
  });
});

/** Runs KeyringSecretStore in a child process whose D-Bus address leads nowhere. */
function runWithoutSecretService(): Promise<ChildOutput> {
  const script = `
    const { createServer } = await import('vite');
    const server = await createServer({
      configFile: false, logLevel: 'silent', appType: 'custom',
      server: { middlewareMode: true, hmr: false, watch: null },
      optimizeDeps: { noDiscovery: true, include: [] },
    });
    const results = [];
    try {
      const { KeyringSecretStore } = await server.ssrLoadModule(${JSON.stringify(join(ROOT, 'electron/core/credentials.ts'))});
      const attempt = async (label, action) => {
        try {
          await action(new KeyringSecretStore({ service: 'Tally-test-nobus' }));
          results.push({ label, ok: true });
        } catch (e) {
          results.push({ label, name: e.name, code: e.code, message: e.message, cause: e.cause === undefined ? null : 'present' });
        }
      };
      await attempt('get (no socket)', (s) => s.get('x'));
      await attempt('set (no socket)', (s) => s.set('x', 'must-not-be-stored-anywhere'));
      delete process.env.DBUS_SESSION_BUS_ADDRESS;
      await attempt('delete (no bus address)', (s) => s.delete('x'));
    } finally {
      await server.close();
    }
    process.stdout.write(JSON.stringify(results));
  `;
  return runToEnd(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(tmpdir(), 'no-such-bus', 'socket')}` },
  });
}

describe.runIf(linux && (hasBus || !skipRequested))('without a Secret Service', () => {
  it('throws a ConfigError that says what to do, and never stores anywhere else', async () => {
    const { code, stdout, stderr } = await runWithoutSecretService();
    expect(code, stderr).toBe(0);
    const results = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(results).toHaveLength(3);
    for (const result of results) {
      expect(result, String(result.label)).toMatchObject({
        name: 'ConfigError',
        code: 'config',
        message: `${NO_SECRET_SERVICE_MESSAGE}.`,
        cause: null,
      });
    }
  });
});
