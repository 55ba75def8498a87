/**
 * Every kind of secret Tally holds, in one table (issue 32, item 4), and where each could leak: the log file,
 * `tally doctor`, Copy diagnostics (the app core's `app:diagnostics`) and the NDJSON stdout/stderr of a real
 * `tally listen` process. None appears in any of them; log files are 0600 in a 0700 folder.
 *
 * The secrets are held where Tally really keeps them: the keychain (its in-memory twin in-process), the
 * environment, the ngrok token file, the path-token files, the serve key of a UI server. Values that look like
 * nothing (no "token=" around them) can only be caught because their reader registered them, so each channel
 * loads the modules it goes through afresh, as a new process would: the registry starts empty and only that
 * channel's own reads may fill it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CredentialStore, MemorySecretStore } from '../../electron/core/credentials.js';
import { writeNgrokTokenFile } from '../../electron/core/ngrok-token-file.js';
import { openSettingsStore } from '../../electron/core/settings.js';
import { saveTeamCredentials } from '../../electron/core/studio/team-credentials.js';
import { TokenStore } from '../../electron/core/webhook/token.js';
import { captureIo } from '../support/cli/io.js';
import { ensureBuiltCli, ROOT, TALLY_BIN } from '../support/built-cli.js';
import { startListen } from '../support/listen-process.js';

const tag = randomBytes(4).toString('hex');
const base32 = (n: number) => Array.from(randomBytes(n), (b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[b % 32]).join('');
const TEAM_URL = new URL('nats://127.0.0.1:4222');

/** How a secret is held, and how a log line (a library error, a request echo) could quote it. */
interface Row {
  kind: string;
  value: string;
  /** The text around it in a leaked line: by default nothing that says "secret". */
  quoted?: (v: string) => string;
  /**
   * Channels that do not hold it: the serve key lives only in its `tally serve` process; the child process
   * has the OS keychain (not this test's twin) and reads the ngrok file only for an ngrok tunnel.
   */
  notIn?: readonly ('doctor' | 'process')[];
  /** Caught by its shape, not its value: a child process is sent it only in such a context. */
  byPattern?: boolean;
}

const plain = (v: string) => `request to the service failed near ${v} while retrying`;

const ROWS: Row[] = [
  { kind: 'project secret (keychain)', value: `kcsec${tag}Q1`, notIn: ['process'] },
  { kind: 'project secret (TALLY_SECRET)', value: `envsec${tag}Z2` },
  { kind: 'ngrok token (keychain)', value: `ngkc${tag}W3x`, notIn: ['process'] },
  { kind: 'ngrok token (TALLY_NGROK_AUTHTOKEN)', value: `ngenv${tag}E4` },
  { kind: 'ngrok token (file in the state folder)', value: `ngfile${tag}R5`, notIn: ['process'] },
  { kind: 'team user (keychain)', value: `member${tag}`, notIn: ['process'] },
  {
    kind: 'team password under 6 characters (keychain)',
    value: `k7Q`,
    quoted: (v) => `nats said: login ${v} refused`,
    notIn: ['process'],
  },
  { kind: 'team token (TALLY_TEAM_TOKEN)', value: `teamtok${tag}T6` },
  { kind: 'S3 access key ID (AWS_ACCESS_KEY_ID)', value: `AKIA${base32(16)}` },
  { kind: 'S3 secret key (AWS_SECRET_ACCESS_KEY)', value: `awssec${tag}/Y7+u` },
  { kind: 'S3 session token (AWS_SESSION_TOKEN)', value: `awssess${tag}U8` },
  { kind: 'serve key (UI server)', value: '', notIn: ['doctor', 'process'] },
  { kind: 'webhook path token', value: '' },
  { kind: 'upload path token', value: '' },
  { kind: 'nkey seed', value: `SUA${base32(55)}`, quoted: (v) => `seed file says ${v}`, byPattern: true },
  {
    kind: 'Authorization: Basic credentials',
    value: Buffer.from(`someone:basic${tag}`).toString('base64'),
    quoted: (v) => `headers: {Authorization: Basic ${v}}`,
    byPattern: true,
  },
  {
    kind: 'URL userinfo',
    value: `urlpw${tag}I9`,
    quoted: (v) => `connect nats://someone:${v}@10.0.0.2:4222 failed`,
    byPattern: true,
  },
  {
    kind: 'X-Amz-Signature',
    value: randomBytes(32).toString('hex'),
    quoted: (v) => `GET https://bucket.example/x.mp4?X-Amz-Date=1&X-Amz-Signature=${v} 403`,
    byPattern: true,
  },
  { kind: 'pass= parameter', value: `passq${tag}O0`, quoted: (v) => `form user=a&pass=${v}&x=1`, byPattern: true },
  {
    kind: 'JSON field named like a secret',
    value: `jsonsk${tag}P1`,
    quoted: (v) => `body {"accessKeyId":"a","secretAccessKey":"${v}"}`,
    byPattern: true,
  },
];
const row = (kind: string) => ROWS.find((r) => r.kind.startsWith(kind)) as Row;

/** Every spelling a leak could take. */
function forms(value: string): string[] {
  return [...new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)])];
}

function leaks(text: string, channel: 'log' | 'doctor' | 'diagnostics' | 'process'): string[] {
  return ROWS.filter((r) => !r.notIn?.includes(channel as never)).flatMap((r) =>
    forms(r.value)
      .filter((f) => text.includes(f))
      .map((f) => `${r.kind} (${f})`),
  );
}

/** One log line per row, as a library error would quote each secret. */
const leakyLines = () => ROWS.map((r) => (r.quoted ?? plain)(r.value));

/**
 * The modules a channel goes through, loaded afresh (a module graph of its own, as a new process has): the
 * secret registry of core/redact.ts is empty, whatever earlier channels read.
 */
async function freshProcess() {
  vi.resetModules();
  const fresh = {
    ...(await import('../../electron/core/redact.js')),
    ...(await import('../../electron/cli.js')),
    ...(await import('../../electron/core/app/app-core.js')),
    ...(await import('../../electron/core/app/ui-server.js')),
    ...(await import('../../electron/core/credentials.js')),
    ...(await import('../../electron/core/log-file.js')),
    ...(await import('../../electron/core/ngrok-token-file.js')),
    ...(await import('../../electron/core/studio/store.js')),
    ...(await import('../../electron/core/studio/team-credentials.js')),
    ...(await import('../../electron/core/studio/team.js')),
    ...(await import('../../electron/core/webhook/token.js')),
  };
  // Nothing read before (every secret: by beforeAll and earlier channels) is known to the fresh registry: a value
  // no pattern catches stays as it is.
  const patternsOnly = new fresh.Redactor();
  const byValue = ROWS.map((r) => plain(r.value)).filter((line) => patternsOnly.redact(line) === line);
  expect(byValue.length).toBeGreaterThan(5);
  for (const line of byValue) expect(fresh.redactSecrets(line)).toBe(line);
  return fresh;
}

let home: string;
let keychain: MemorySecretStore;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'tally-redaction-'));
  openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: join(home, 'recordings') });
  keychain = new MemorySecretStore();
  const store = new CredentialStore(keychain);
  await store.save({ serviceId: 'svc-redaction', secret: row('project secret (keychain)').value });
  await store.setToken('ngrok', row('ngrok token (keychain)').value);
  await saveTeamCredentials(store, TEAM_URL, {
    user: row('team user').value,
    password: row('team password').value,
  });
  await writeNgrokTokenFile(home, row('ngrok token (file').value);
  const tokens = await TokenStore.open(home);
  row('webhook path token').value = await tokens.get('hooks');
  row('upload path token').value = await tokens.get('uploads');
  row('webhook path token').quoted = (v) => `POST /hooks/${v} answered 503`;
  row('upload path token').quoted = (v) => `POST /uploads/${v} refused`;
  env = {
    TALLY_SERVICE_ID: 'svc-redaction',
    TALLY_SECRET: row('project secret (TALLY_SECRET)').value,
    TALLY_NGROK_AUTHTOKEN: row('ngrok token (TALLY_NGROK').value,
    TALLY_TEAM_TOKEN: row('team token').value,
    AWS_ACCESS_KEY_ID: row('S3 access key ID').value,
    AWS_SECRET_ACCESS_KEY: row('S3 secret key').value,
    AWS_SESSION_TOKEN: row('S3 session token').value,
    TALLY_HOME: home,
  };
});

afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

describe('every secret Tally holds', () => {
  it('is in none of the log file lines once read, and the log is 0600 in a 0700 folder', async () => {
    const { CredentialStore, resolveTeamCredentials, teamCredentialsFromEnv, ngrokTokenFromEnv, ...fresh } =
      await freshProcess();
    const { readNgrokTokenFile, s3FromEnv, TokenStore, createAppCore, startUiServer, openLogFile } = fresh;
    // The reads the faces make: each reader registers what it read.
    const store = new CredentialStore(keychain);
    await store.load(env);
    await store.stored();
    await store.getToken('ngrok');
    await resolveTeamCredentials(TEAM_URL, {}, store);
    teamCredentialsFromEnv(env);
    ngrokTokenFromEnv(env);
    await readNgrokTokenFile(home);
    s3FromEnv(env);
    const tokens = await TokenStore.open(home);
    await tokens.get('hooks');
    await tokens.get('uploads');
    const core = await createAppCore({ home, secrets: keychain, transport: 'ws', env, version: '9' });
    const ui = await startUiServer({ core, staticDir: home });
    try {
      row('serve key').value = await serveKey(ui.oneTimeUrl(), ui.origin);
      row('serve key').quoted = (v) => `upgrade refused: Sec-WebSocket-Protocol tally.v1, tally.key.${v}`;

      const log = await openLogFile({ home, name: 'serve' });
      for (const line of leakyLines()) log.warn(line);
      await log.close();
      const folder = join(home, 'logs');
      const files = (await readdir(folder)).filter((f) => f.startsWith('serve.'));
      expect(files.length).toBeGreaterThan(0);
      const text = (await Promise.all(files.map((f) => readFile(join(folder, f), 'utf8')))).join('');
      expect(text).toContain('[redacted]');
      expect(leaks(text, 'log')).toEqual([]);
      expect((await stat(folder)).mode & 0o777).toBe(0o700);
      for (const f of files) expect((await stat(join(folder, f))).mode & 0o777, f).toBe(0o600);
    } finally {
      await ui.close();
      await core.stop();
    }
  });

  it('is in none of Copy diagnostics, team credentials from the keychain included', async () => {
    const { createAppCore, startUiServer } = await freshProcess();
    // What a log could hold from before (an older version, another tool): written raw, past the redactor.
    await writeRawLog('serve.7.log');
    const core = await createAppCore({ home, secrets: keychain, transport: 'ws', env, version: '9' });
    const ui = await startUiServer({ core, staticDir: home, token: row('serve key').value });
    try {
      const { text } = await core.handlers['app:diagnostics']();
      expect(text).toContain('Last lines of the serve log');
      expect(text).toContain('[redacted]');
      expect(leaks(text, 'diagnostics')).toEqual([]);
    } finally {
      await ui.close();
      await core.stop();
    }
  });

  it('is in none of `tally doctor`, team credentials from the keychain included', async () => {
    const { main } = await freshProcess();
    await writeRawLog('listen.7.log');
    const made = captureIo(new AbortController().signal, env, keychain);
    expect(await main(['doctor'], made.io)).toBe(0);
    expect(made.out()).toContain('Last lines of the listen log');
    expect(leaks(made.out() + made.err(), 'doctor')).toEqual([]);
  });

  it('is in none of the NDJSON stdout and stderr of a real `tally listen`, nor its log', async () => {
    await ensureBuiltCli();
    // Fresh log files: this process writes its own.
    await rm(join(home, 'logs'), { recursive: true, force: true });
    const listen = startListen(['--folder', join(home, 'recordings'), '--port', '0'], {
      ...env,
      // Nothing leaves loopback: the service's hosts are a closed port.
      TALLY_BASE_URL: 'http://127.0.0.1:9',
      TALLY_CONSOLE_API_URL: 'http://127.0.0.1:9',
      TALLY_ADMIN_URL: 'http://127.0.0.1:9',
      TALLY_DOWNLOAD_ORIGINS: 'http://127.0.0.1:9',
    });
    try {
      const ready = await listen.waitFor((e) => e.type === 'ready', 'ready');
      const hook = String(ready.localUrl);
      // Webhooks whose fields quote every secret this process holds (a channel ID is any text), and the
      // shapes in a recording URL (a signature, pass=): each is received and said, and its download fails.
      const signature = row('X-Amz-Signature').value;
      const pass = row('pass=').value;
      for (const [i, r] of ROWS.entries()) {
        const url = `http://127.0.0.1:9/x${i}.mp4?X-Amz-Signature=${signature}&pass=${pass}`;
        const id = r.byPattern || r.notIn?.includes('process') ? `ch-${i}-` : `ch-${i}-${r.value}`;
        await post(hook, JSON.stringify({ id, url }));
      }
      await listen.waitFor(
        (e) => e.type === 'received' && String(e.channelId).startsWith(`ch-${ROWS.length - 1}-`),
        'the last webhook said',
      );
    } finally {
      listen.child.kill('SIGINT');
      await listen.exited;
    }
    const stdout = listen.events
      .filter((e) => e.type !== 'ready')
      .map((e) => JSON.stringify(e))
      .join('\n');
    expect(stdout).toContain('[redacted]');
    expect(leaks(stdout, 'process')).toEqual([]);
    expect(leaks(listen.stderr(), 'process')).toEqual([]);
    const folder = join(home, 'logs');
    const files = (await readdir(folder)).filter((f) => f.startsWith('listen.'));
    for (const f of files) {
      expect(leaks(await readFile(join(folder, f), 'utf8'), 'process')).toEqual([]);
      expect((await stat(join(folder, f))).mode & 0o777, f).toBe(0o600);
    }
  }, 120_000);
});

describe('the serve key', () => {
  it('is in none of the stdout, stderr and log of a real `tally serve` (its link is a one-time code)', async () => {
    await ensureBuiltCli();
    const serveHome = await mkdtemp(join(tmpdir(), 'tally-redaction-serve-'));
    openSettingsStore(serveHome).update({ receiverPort: 0, recordingsFolder: join(serveHome, 'recordings') });
    const child = spawn(process.execPath, [TALLY_BIN, 'serve', '--sandbox', '--json', '--no-open', '--port', '0'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: serveHome, TALLY_HOME: serveHome },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise((resolve) => child.once('close', resolve));
    try {
      const ready = await new Promise<{ url: string }>((resolve, reject) => {
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString();
          const line = stdout.split('\n').find((l) => l.includes('"ready"'));
          if (line) resolve(JSON.parse(line) as { url: string });
        });
        child.once('close', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
      });
      const link = new URL(ready.url);
      const key = await serveKey(link.href, link.origin);
      expect(key).toMatch(/^[\w-]{20,}$/);
      // The link again: refused (spent), and whatever is said of it holds no key.
      await serveKey(link.href, link.origin).catch(() => undefined);
      child.kill('SIGINT');
      await exited;
      const logs = join(serveHome, 'logs');
      const files = await readdir(logs);
      const logText = (await Promise.all(files.map((f) => readFile(join(logs, f), 'utf8')))).join('');
      for (const text of [stdout, stderr, logText]) for (const f of forms(key)) expect(text).not.toContain(f);
    } finally {
      child.kill('SIGKILL');
      await rm(serveHome, { recursive: true, force: true });
    }
  }, 120_000);
});

/** A log file written without the redactor, quoting every secret. */
async function writeRawLog(name: string): Promise<void> {
  await mkdir(join(home, 'logs'), { recursive: true });
  const lines = leakyLines().map((msg) => JSON.stringify({ level: 40, time: '2026-11-28T05:00:00.000Z', msg }));
  await writeFile(join(home, 'logs', name), `${lines.join('\n')}\n`);
}

/** The serve key, learnt as a page learns it: by spending a one-time code at the handshake. */
async function serveKey(link: string, origin: string): Promise<string> {
  const { default: WebSocket } = await import('ws');
  const { uiProtocols } = await import('../../electron/contract.js');
  const url = new URL(link);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${url.host}/ws`, uiProtocols({ code: url.searchParams.get('code') ?? '' }), {
      origin,
    });
    ws.once('message', (data) => {
      resolve((JSON.parse(String(data)) as { key: string }).key);
      ws.close();
    });
    ws.once('close', (code) => reject(new Error(`close ${code}`)));
    ws.once('error', reject);
  });
}

function post(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}
