/**
 * Secrets never leak: a full run with a distinctive project secret and a distinctive ngrok authtoken, then a
 * search for both (raw, base64 at every alignment, URL-encoded, hex, JSON-escaped) through everything a
 * person, a log collector or the renderer could see:
 * - `tally login` (secret and ngrok token from stdin), `live`, `search`, `end`, `listen` (with a recording
 *   saved and the gap report using the credentials), plus error cases (wrong secret, unknown channel, bad
 *   arguments): every stdout and stderr;
 * - the app core (what the tray app and `tally serve` run): credentials test/set with a wrong and a right
 *   secret, the ngrok tunnel through the fake SDK with a wrong token (whose error quotes it, like the real
 *   service) and the right one, webhook registration through the admin API, a recording saved: every
 *   handler result, every pushed event, every log line;
 * - every file under the state folders and the recordings folders.
 * The keychain is the real Secret Service when a session bus is present (as in `npm test`), under a
 * private service name; otherwise its in-memory twin, said so on the console.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../electron/cli.js';
import type { CommandIo } from '../../electron/cli/command.js';
import { EVENT_NAMES } from '../../electron/contract.js';
import { createAppCore, type AppCore } from '../../electron/core/app/app-core.js';
import { dispatchRequest } from '../../electron/core/app/dispatch.js';
import {
  CredentialStore,
  KeyringSecretStore,
  MemorySecretStore,
  PROJECT_ACCOUNT,
  type SecretStore,
} from '../../electron/core/credentials.js';
import { startSandbox, type Sandbox } from '../../electron/core/sandbox/index.js';
import { openSettingsStore } from '../../electron/core/settings.js';
import { fakeNgrokSdk, type FakeNgrokSdk } from '../support/tunnels/fake-ngrok-sdk.js';
import { guardNetwork, type NetworkGuard } from './support/network-guard.js';

const tag = randomBytes(6).toString('hex');
// Characters that URL-encoding, base64 and JSON escaping all change, so every form is distinct.
const SECRET = `S3cr+t/canary=${tag}`;
const WRONG_SECRET = `${SECRET}-wrong`;
const NGROK = `NGROK+tok/canary=${tag}`;
const WRONG_NGROK = `${NGROK}-wrong`;
const NGROK_DOMAIN = `secrets-${tag}.ngrok-free.app`;

/** Every spelling of `value` a leak could take. Base64 at the three byte alignments catches it inside a blob. */
export function leakForms(value: string): string[] {
  const forms = new Set([
    value,
    encodeURIComponent(value),
    encodeURIComponent(value).toLowerCase(),
    new URLSearchParams({ v: value }).toString().slice(2),
    Buffer.from(value).toString('hex'),
    JSON.stringify(value).slice(1, -1),
    value.replace(/\//g, '\\/'),
  ]);
  for (let pad = 0; pad < 3; pad++) {
    for (const alphabet of ['base64', 'base64url'] as const) {
      const encoded = Buffer.from('\0'.repeat(pad) + value).toString(alphabet);
      // Drop the characters that mix padding bytes or the end: the middle is what appears inside any blob.
      forms.add(encoded.slice(pad === 0 ? 0 : 4, -4));
    }
  }
  return [...forms];
}

const NEEDLES = [
  ...leakForms(SECRET).map((form) => ({ what: 'project secret', form })),
  ...leakForms(NGROK).map((form) => ({ what: 'ngrok authtoken', form })),
];

function findLeaks(where: string, content: string | Buffer): string[] {
  const buffer = typeof content === 'string' ? Buffer.from(content) : content;
  return NEEDLES.filter((n) => buffer.includes(n.form)).map((n) => `${n.what} (${JSON.stringify(n.form)}) in ${where}`);
}

class Collector {
  readonly stream = new PassThrough();
  text = '';
  constructor() {
    this.stream.on('data', (c: Buffer) => (this.text += c.toString()));
  }
  /** Resolves when a line satisfying `test` has been written (already or later). */
  waitForLine(test: (line: string) => boolean): Promise<string> {
    const seen = this.text.split('\n').find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const onData = () => {
        const line = this.text.split('\n').find(test);
        if (line === undefined) return;
        this.stream.off('data', onData);
        resolve(line);
      };
      this.stream.on('data', onData);
    });
  }
}

async function walkFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walkFiles(path)));
    else out.push(path);
  }
  return out;
}

describe('secrets stay secret', () => {
  const hasBus = Boolean(process.env.DBUS_SESSION_BUS_ADDRESS);
  const store: SecretStore = hasBus
    ? new KeyringSecretStore({ service: `Tally-secrets-test-${tag}` })
    : new MemorySecretStore();
  const captured: { where: string; text: string }[] = [];
  const dirs: string[] = [];
  let sb: Sandbox;
  let guard: NetworkGuard;
  let sdk: FakeNgrokSdk;
  let cliHome: string;
  let cliFolder: string;
  let coreHome: string;
  let coreFolder: string;

  const record = (where: string, value: unknown) =>
    captured.push({ where, text: typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)) });

  beforeAll(async () => {
    console.log(
      hasBus
        ? `secrets: using the real Secret Service (service name Tally-secrets-test-${tag})`
        : 'secrets: DBUS_SESSION_BUS_ADDRESS is unset, so the keychain is its in-memory twin (run under npm test for the real one)',
    );
    guard = guardNetwork();
    sb = await startSandbox({ seed: 3, searchIndexDelayMs: 0, secret: SECRET, serviceId: `svc-${tag}` });
    sdk = fakeNgrokSdk({ acceptedAuthtoken: NGROK });
    for (const name of ['cli-home', 'cli-out', 'core-home', 'core-out'])
      dirs.push(await mkdtemp(join(tmpdir(), `tally-secrets-${name}-`)));
    [cliHome, cliFolder, coreHome, coreFolder] = dirs as [string, string, string, string];
  });

  afterAll(async () => {
    for (const account of [PROJECT_ACCOUNT, 'token:ngrok']) await store.delete(account).catch(() => false);
    await sdk?.close();
    await sb?.close();
    guard?.restore();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  const endpointsEnv = () => ({
    TALLY_BASE_URL: sb.endpoints.baseUrl,
    TALLY_CONSOLE_API_URL: sb.endpoints.consoleApiUrl,
    TALLY_ADMIN_URL: sb.endpoints.adminUrl,
    TALLY_DOWNLOAD_ORIGINS: sb.downloadOrigin,
    TALLY_RETRIES: '0',
  });

  async function cli(
    argv: string[],
    opts: { input?: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal; out?: Collector } = {},
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const out = opts.out ?? new Collector();
    const err = new Collector();
    const stdin = new PassThrough();
    if (opts.input !== undefined) stdin.end(opts.input);
    const io: CommandIo = {
      stdout: out.stream,
      stderr: err.stream,
      stdin,
      env: { TALLY_HOME: cliHome, ...endpointsEnv(), ...opts.env },
      secrets: store,
      signal: opts.signal ?? new AbortController().signal,
    };
    const code = await main(argv, io);
    record(`tally ${argv.join(' ')} (stdout)`, out.text);
    record(`tally ${argv.join(' ')} (stderr)`, err.text);
    return { code, stdout: out.text, stderr: err.text };
  }

  it('the CLI: login, live, search, end, listen and their errors print neither secret', async () => {
    const serviceId = sb.credentials.serviceId;
    expect(
      (await cli(['login', '--service-id', serviceId, '--secret-stdin'], { input: `${WRONG_SECRET}\n` })).code,
    ).toBe(1);
    expect((await cli(['login', '--service-id', serviceId, '--secret-stdin'], { input: `${SECRET}\n` })).code).toBe(0);
    // The positive control: the secret really went into the keychain (and only there).
    expect(await store.get(PROJECT_ACCOUNT)).toContain(SECRET);
    expect((await cli(['login', '--ngrok'], { input: `${NGROK}\n` })).code).toBe(0);
    expect(await new CredentialStore(store).getToken('ngrok')).toBe(NGROK);

    sb.control.startBroadcast({ id: `live-${tag}`, watchers: 3 });
    expect((await cli(['live'])).code).toBe(0);
    expect((await cli(['live', '--json'])).code).toBe(0);
    expect((await cli(['search', '--since', '2020-01-01', '--json'])).code).toBe(0);
    expect((await cli(['search', '--since', 'not-a-date'])).code).toBe(2);
    expect((await cli(['end', 'no-such-channel', '--yes'])).code).toBe(1);
    expect((await cli(['end', `live-${tag}`, '--yes'])).code).toBe(0);
    // Wrong credentials from the environment: the service refuses, the message must not quote them.
    const refused = await cli(['live'], { env: { TALLY_SERVICE_ID: serviceId, TALLY_SECRET: WRONG_SECRET } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/secret|credentials/i);

    // listen: a recording arrives and is saved; the gap report runs with the stored credentials.
    const stop = new AbortController();
    const out = new Collector();
    const listening = cli(['listen', '--folder', cliFolder, '--port', '0', '--tunnel', 'none', '--ndjson'], {
      signal: stop.signal,
      out,
    });
    const ready = JSON.parse(await out.waitForLine((l) => l.includes('"ready"'))) as { localUrl: string };
    sb.control.setWebhookUrl(ready.localUrl);
    sb.control.startBroadcast({ id: `rec-${tag}`, record: true, recordingBytes: 120_000 });
    await sb.control.endBroadcast(`rec-${tag}`);
    await out.waitForLine((l) => l.includes('"saved"'));
    stop.abort();
    expect((await listening).code).toBe(0);
    expect((await cli(['logout'])).code).toBe(0);
  });

  it('the app core: handler results, pushed events and logs carry neither secret', async () => {
    openSettingsStore(coreHome).update({ receiverPort: 0, recordingsFolder: coreFolder });
    const credentials = new CredentialStore(store);
    await credentials.setToken('ngrok', WRONG_NGROK);
    const logs: string[] = [];
    const core: AppCore = await createAppCore({
      home: coreHome,
      secrets: store,
      transport: 'ws',
      env: endpointsEnv(),
      version: '0.0.0-secrets',
      pollIntervalMs: 50,
      pipelineOverrides: { ngrokSdk: sdk, retryBaseMs: 20 },
      log: (line) => logs.push(line),
    });
    for (const event of [...EVENT_NAMES, 'tray:snapshot', 'notify'] as const)
      core.on(event, (payload) => record(`event ${event}`, payload));
    const call = async (name: string, ...args: unknown[]) => {
      const envelope = await dispatchRequest(core.handlers, name, args, (l) => logs.push(l));
      record(`${name} → result`, envelope);
      return envelope;
    };
    try {
      await core.start();
      const creds = { serviceId: sb.credentials.serviceId, secret: SECRET };
      expect(await call('credentials:test', { ...creds, secret: WRONG_SECRET })).toMatchObject({
        ok: true,
        result: { ok: false },
      });
      expect(await call('credentials:set', { ...creds, secret: WRONG_SECRET })).toMatchObject({ ok: false });
      expect(await call('credentials:set', creds)).toMatchObject({
        ok: true,
        result: { configured: true, source: 'keychain' },
      });
      expect(await call('credentials:test')).toMatchObject({ ok: true, result: { ok: true } });

      // ngrok with a wrong token: the fake SDK quotes it in its error, as the real service does.
      const wrongTunnel = new Promise<void>((resolve) => {
        const off = core.on(
          'tunnel:status',
          (s) => s.provider === 'ngrok' && s.state === 'error' && (off(), resolve()),
        );
      });
      await call('settings:update', { tunnel: { provider: 'ngrok', ngrokDomain: NGROK_DOMAIN } });
      await wrongTunnel;
      expect(sdk.forwardCalls.some((c) => c.authtoken === WRONG_NGROK)).toBe(true);

      // The right token: the tunnel opens (its self-check cannot leave this machine, so it reports unreachable).
      await credentials.setToken('ngrok', NGROK);
      const opened = new Promise<void>((resolve) => {
        const off = core.on(
          'tunnel:status',
          (s) => s.provider === 'ngrok' && s.publicUrl !== null && (off(), resolve()),
        );
      });
      await call('settings:update', { tunnel: { provider: 'ngrok', ngrokDomain: `x${NGROK_DOMAIN}` } });
      await opened;
      expect(sdk.forwardCalls.some((c) => c.authtoken === NGROK)).toBe(true);
      expect(await call('webhook:register')).toMatchObject({ ok: true });
      expect(sb.control.webhookUrl).toContain(`x${NGROK_DOMAIN}`);

      // A recording through the core's receiver, at the local URL the tunnel view gives.
      const { localUrl } = await core.handlers['tunnel:status']();
      expect(localUrl).not.toBeNull();
      sb.control.setWebhookUrl(localUrl);
      const saved = new Promise<void>((resolve) => {
        const off = core.on('notify', (n) => n.kind === 'saved' && (off(), resolve()));
      });
      sb.control.startBroadcast({ id: `core-${tag}`, record: true, recordingBytes: 80_000 });
      await sb.control.endBroadcast(`core-${tag}`);
      await saved;

      for (const name of [
        'app:info',
        'channels:live',
        'recordings:list',
        'recordings:gaps',
        'settings:get',
        'credentials:status',
        'tunnel:status',
      ]) {
        expect(await call(name), name).toMatchObject({ ok: true });
      }
      await call('channels:search', { since: '2020-01-01T00:00:00Z', until: new Date().toISOString() });
      expect(await call('channels:end', 'no-such-channel')).toMatchObject({ ok: false });
      await call('credentials:set', { serviceId: 'x', secret: `${'y'.repeat(5000)}${SECRET}` });
      // Cleared: without credentials the core falls back to its demo sandbox, never to the old keychain entry.
      const cleared = (await call('credentials:clear')) as { ok: true; result: { source: string | null } };
      expect(cleared.ok).toBe(true);
      expect(cleared.result.source).not.toBe('keychain');
      expect(await store.get(PROJECT_ACCOUNT)).toBeNull();
    } finally {
      await core.stop();
      record('core log', logs.join('\n'));
    }
    expect(logs.length).toBeGreaterThan(0);
  });

  it('finds neither secret in anything captured or on disk (and would find them if they were there)', async () => {
    // The detector itself: each form is found inside a larger text.
    for (const form of [SECRET, Buffer.from(`{"secret":"${SECRET}"}`).toString('base64'), encodeURIComponent(NGROK)]) {
      expect(findLeaks('control', `prefix ${form} suffix`).length, form).toBeGreaterThan(0);
    }
    const leaks: string[] = [];
    expect(captured.length).toBeGreaterThan(30);
    for (const { where, text } of captured) leaks.push(...findLeaks(where, text));
    const files = (await Promise.all(dirs.map(walkFiles))).flat();
    expect(files.some((f) => f.endsWith('settings.json'))).toBe(true);
    expect(files.some((f) => f.endsWith('.mp4'))).toBe(true);
    for (const file of files) leaks.push(...findLeaks(file, await readFile(file)));
    expect(leaks).toEqual([]);
    // Nothing left this machine: the only refused attempt is the tunnel self-check's lookup of the fake domain.
    expect(guard.attempts.filter((a) => !a.includes(NGROK_DOMAIN))).toEqual([]);
  });
});
