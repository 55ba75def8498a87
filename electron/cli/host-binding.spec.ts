/**
 * The secret's binding to its hosts, across both faces over one state folder and one keychain: after
 * `tally login`, hosts changed in the settings file (as a compromised renderer could) make `tally live`,
 * `tally search` and `tally listen` refuse to send the secret, exactly as the app does. The "other hosts"
 * are real HTTP servers on 127.0.0.1 that record everything that reaches them.
 */
import { createServer, type Server } from 'node:http';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { createAppCore } from '../core/app/app-core.js';
import { MemorySecretStore, type SecretStore } from '../core/credentials.js';
import type { Endpoints } from '../core/endpoints.js';
import { startSandbox, type Sandbox } from '../core/sandbox/index.js';
import { openSettingsStore } from '../core/settings.js';
import type { CommandIo } from './command.js';
import { openCredentialResolver } from './keychain.js';
import { note } from '../contract.js';
import { ConfigError } from '../core/errors.js';
import { captureIo, lineMatching } from '../../tests/support/cli/io.js';

/** The keychain the commands of a test use (CommandIo.secrets; undefined: the OS keychain). */
let keychain: SecretStore | undefined;
const setKeychain = (store: SecretStore): void => {
  keychain = store;
};

const SERVICE_ID = 'bound-cli-svc';
const SECRET = 'bound-cli-S3cret-9f1c';
const REFUSAL =
  'The service hosts changed since the secret was entered, so it is not sent to them: run "tally login" to enter it again for the new hosts.';

/** A host that answers everything and remembers every request, headers and body, that reached it. */
async function recordingHost(): Promise<{ url: string; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)} ${body}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, seen, server };
}

let real: Sandbox;
let others: Awaited<ReturnType<typeof recordingHost>>[];
let otherEndpoints: Endpoints;
let home: string;
let secrets: MemorySecretStore;
const env = (): NodeJS.ProcessEnv => ({ TALLY_HOME: home, TALLY_RETRIES: '0' });

async function run(argv: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdin = new PassThrough();
  if (input !== undefined) stdin.end(input);
  const made = captureIo(new AbortController().signal, env(), keychain);
  const io: CommandIo = { ...made.io, stdin };
  const code = await main(argv, io);
  return { code, stdout: made.out(), stderr: made.err() };
}

function setHosts(endpoints: Endpoints): void {
  openSettingsStore(home).update({ endpoints });
}

beforeEach(async () => {
  real = await startSandbox({ serviceId: SERVICE_ID, secret: SECRET, seed: 21, searchIndexDelayMs: 0 });
  others = await Promise.all([recordingHost(), recordingHost(), recordingHost()]);
  otherEndpoints = { baseUrl: others[0]!.url, consoleApiUrl: others[1]!.url, adminUrl: others[2]!.url };
  home = await mkdtemp(join(tmpdir(), 'tally-bound-'));
  secrets = new MemorySecretStore();
  setKeychain(secrets);
  setHosts(real.endpoints);
  const login = await run(['login', '--service-id', SERVICE_ID, '--secret-stdin'], `${SECRET}\n`);
  expect(login.code, login.stderr).toBe(0);
});

afterEach(async () => {
  keychain = undefined;
  await real.close();
  for (const other of others) await new Promise((resolve) => other.server.close(resolve));
  await rm(home, { recursive: true, force: true });
});

describe('the secret stays with the hosts it was entered for', () => {
  it('live, search and listen refuse to send it to hosts changed in settings, as the app does', async () => {
    real.control.startBroadcast({ id: 'bound-live' });
    expect((await run(['live'])).stdout).toMatch(/^bound-live\s/m);

    setHosts(otherEndpoints);
    for (const [name, argv] of [
      ['live', ['live']],
      ['search', ['search', '--since', '1h']],
    ] as const) {
      const refused = await run([...argv]);
      expect(refused).toEqual({ code: 1, stdout: '', stderr: `tally ${name}: ${REFUSAL}\n` });
    }

    // listen still receives recordings, but without the secret: no registration, no missed-recordings check.
    const folder = join(home, 'recordings');
    const controller = new AbortController();
    const listen = captureIo(controller.signal, env(), keychain);
    const ready = lineMatching(listen.stdout, (line) => line.includes('"type":"ready"'));
    const running = main(['listen', '--folder', folder, '--port', '0', '--tunnel', 'none', '--ndjson'], listen.io);
    expect(JSON.parse(await ready)).toMatchObject({
      type: 'ready',
      note: `${REFUSAL} Until then, registration and the missed-recordings report are off.`,
    });
    controller.abort();
    expect(await running).toBe(0);
    const registering = await run(['listen', '--folder', folder, '--port', '0', '--tunnel', 'none', '--register']);
    expect(registering).toMatchObject({ code: 1, stderr: `tally listen: ${REFUSAL}\n` });

    // The app over the same state folder and keychain says the same, and sends nothing either.
    const core = await createAppCore({ home, secrets, transport: 'ws', env: {}, version: '9.9.9' });
    try {
      expect(await core.handlers['credentials:status']()).toMatchObject({
        configured: false,
        serviceId: SERVICE_ID,
        source: 'keychain',
        keychainMessage: expect.stringMatching(/^The service hosts changed since the secret was entered/),
      });
      await expect(core.handlers['credentials:test']()).resolves.toMatchObject({ ok: false });
    } finally {
      await core.stop();
    }

    for (const other of others) expect(other.seen).toEqual([]);
  });

  it('refuses hosts given as flags or environment too, and uses the secret again once the hosts are back', async () => {
    const viaFlag = await run(['live', '--base-url', otherEndpoints.baseUrl]);
    expect(viaFlag).toEqual({ code: 1, stdout: '', stderr: `tally live: ${REFUSAL}\n` });

    setHosts(otherEndpoints);
    expect((await run(['live'])).code).toBe(1);
    setHosts(real.endpoints);
    expect(await run(['live'])).toMatchObject({ code: 0, stdout: 'No channels are live right now.\n' });
    for (const other of others) expect(other.seen.join('\n')).not.toContain(SECRET);
    for (const other of others) expect(other.seen).toEqual([]);
  });

  it('binds the secret afresh when it is entered again for the new hosts', async () => {
    setHosts(otherEndpoints);
    expect((await run(['live'])).code).toBe(1);
    // Entering it again for the new hosts is the user's decision to trust them with it.
    const again = await run(['login', '--service-id', SERVICE_ID, '--secret-stdin', '--no-verify'], `${SECRET}\n`);
    expect(again.code).toBe(0);
    await run(['live']);
    expect(others[0]!.seen).toHaveLength(1);
    // And the old hosts are the "other" hosts now.
    setHosts(real.endpoints);
    expect((await run(['live'])).stderr).toBe(`tally live: ${REFUSAL}\n`);
  });
});

describe('the ngrok authtoken comes from the keychain, for the CLI as for the app', () => {
  it('ignores NGROK_AUTHTOKEN and says every way to hand the token over', async () => {
    const made = captureIo(new AbortController().signal, { ...env(), NGROK_AUTHTOKEN: 'env-token-not-used' }, keychain);
    const code = await main(['listen', '--folder', join(home, 'rec'), '--port', '0', '--tunnel', 'ngrok'], made.io);
    expect(code).toBe(1);
    expect(made.err()).toBe(
      'tally listen: ngrok needs an authtoken: run "tally login --ngrok" (the OS keychain, or without one a file only you can read), or set TALLY_NGROK_AUTHTOKEN.\n',
    );
  });

  it('without a keychain, tally login --ngrok keeps the token in a file only its owner can read, and the resolver finds it', async () => {
    // A keychain that cannot be used, as on a server without a Secret Service.
    setKeychain({
      get: () => Promise.reject(new ConfigError(note('keychainNoService'))),
      set: () => Promise.reject(new ConfigError(note('keychainNoService'))),
      delete: () => Promise.reject(new ConfigError(note('keychainNoService'))),
    });
    const login = await run(['login', '--ngrok'], 'file-token-123\n');
    expect(login.code).toBe(0);
    const file = join(home, 'ngrok-authtoken');
    expect(login.stdout).toContain(`The ngrok authtoken is stored in ${file}, readable by you only.`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const resolver = openCredentialResolver({ env: env(), stderr: new PassThrough(), secrets: keychain });
    expect(await resolver.ngrokAuthtoken()).toBe('file-token-123');

    // A copy others can read is refused, with the command that fixes it.
    await chmod(file, 0o644);
    await expect(resolver.ngrokAuthtoken()).rejects.toThrow(`run \`chmod 600 ${file}\``);
    // The explicit environment variable is the other way in.
    const fromEnv = openCredentialResolver({
      env: { ...env(), TALLY_NGROK_AUTHTOKEN: 'env-token' },
      stderr: new PassThrough(),
      secrets: keychain,
    });
    expect(await fromEnv.ngrokAuthtoken()).toBe('env-token');
  });
});
