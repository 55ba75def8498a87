/**
 * `tally serve --sandbox` in-process through the real CLI entry: the built page over HTTP with its guards
 * (Host, path traversal), and the contract over a real WebSocket with its guards (one-time code and session key
 * in the handshake's subprotocols, Origin) and its validation, against the embedded demo sandbox.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { main } from '../cli.js';
import { ONE_TIME_CODE_TTL_MS, UI_CSP } from '../core/app/ui-server.js';
import { uiProtocols } from '../contract.js';
import { MemorySecretStore, type SecretStore } from '../core/credentials.js';
import { openSettingsStore } from '../core/settings.js';
import { captureIo, firstLine } from '../../tests/support/cli/io.js';
import { startQuietUiServer } from '../../tests/support/ui-server.js';
import { isLoopbackHost, parseServeArgs, uiDir } from './serve.js';

/** The keychain the commands of a test use (CommandIo.secrets; undefined: the OS keychain). */
let keychain: SecretStore | undefined;
const setKeychain = (store: SecretStore): void => {
  keychain = store;
};

const ROOT = join(import.meta.dirname, '..', '..');

/** A raw GET: fetch would normalise the path and refuses to set Host. */
function rawGet(
  origin: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

type Credential = { code: string } | { key: string };

/** Opens a WebSocket; resolves with it once open, or rejects with the HTTP status of a refusal. */
function connect(url: string, origin: string, credential: Credential): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, uiProtocols(credential), { origin });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    ws.once('close', (code) => reject(new Error(`close ${code}`)));
    ws.once('error', reject);
  });
}

/**
 * How a handshake ends: `status N` (refused at the handshake), `close N` (let in only to be told why), or
 * `let in` (it answers a request).
 */
function refusal(url: string, origin: string, credential: Credential): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, uiProtocols(credential), { origin });
    ws.once('unexpected-response', (_req, res) => resolve(`status ${res.statusCode}`));
    ws.once('close', (code) => resolve(`close ${code}`));
    ws.once('message', () => {
      resolve('let in');
      ws.close();
    });
    ws.once('open', () => ws.send(JSON.stringify({ id: 1, type: 'invoke', name: 'app:info', args: [] })));
    ws.once('error', () => undefined);
  });
}

/** Presents a link's one-time code at a handshake, as the page does; resolves with the session key sent back. */
function trade(link: URL): Promise<{ ws: WebSocket; key: string }> {
  return new Promise((resolve, reject) => {
    const code = link.searchParams.get('code') ?? '';
    const ws = new WebSocket(`ws://${link.host}/ws`, uiProtocols({ code }), { origin: link.origin });
    // The key is the first frame, which can arrive with the handshake's answer: listen before 'open'.
    ws.once('message', (data) => {
      const first = JSON.parse(String(data)) as { type: string; key: string };
      if (first.type === 'session') resolve({ ws, key: first.key });
      else reject(new Error(`first message ${first.type}`));
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    ws.once('close', (code) => reject(new Error(`close ${code}`)));
    ws.once('error', reject);
  });
}

interface Client {
  ws: WebSocket;
  invoke(
    name: string,
    args: unknown,
  ): Promise<{ ok: boolean; result?: unknown; error?: { code: string; message: string } }>;
  nextEvent(event: string): Promise<unknown>;
}

function client(ws: WebSocket): Client {
  let id = 0;
  const pending = new Map<number, (msg: never) => void>();
  const waiters: { event: string; resolve: (payload: unknown) => void }[] = [];
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data)) as { type: string; id?: number; event?: string; payload?: unknown };
    if (msg.type === 'result' && msg.id !== undefined) pending.get(msg.id)?.(msg as never);
    if (msg.type === 'event') {
      const index = waiters.findIndex((w) => w.event === msg.event);
      if (index >= 0) waiters.splice(index, 1)[0]?.resolve(msg.payload);
    }
  });
  return {
    ws,
    invoke(name, args) {
      const n = ++id;
      return new Promise((resolve) => {
        pending.set(n, resolve as never);
        ws.send(JSON.stringify({ id: n, type: 'invoke', name, args }));
      });
    },
    nextEvent(event) {
      return new Promise((resolve) => waiters.push({ event, resolve }));
    },
  };
}

describe('tally serve', () => {
  let home: string;
  let controller: AbortController;
  let exit: Promise<number>;
  let ready: { type: string; url: string; demo: boolean };
  let origin: string;
  let token: string;
  let stderr: () => string;

  beforeAll(async () => {
    // The page is the real built renderer; build it once when this checkout has not yet.
    if (!existsSync(join(uiDir(), 'index.html'))) {
      await promisify(execFile)('npx', ['vite', 'build'], { cwd: ROOT });
    }
    setKeychain(new MemorySecretStore());
    home = await mkdtemp(join(tmpdir(), 'tally-serve-'));
    openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: join(home, 'recordings') });
    controller = new AbortController();
    const made = captureIo(controller.signal, { TALLY_HOME: home }, keychain);
    stderr = made.err;
    const line = firstLine(made.stdout);
    exit = main(['serve', '--sandbox', '--port', '0', '--json', '--no-open'], made.io);
    ready = JSON.parse(await Promise.race([line, exit.then((code) => `exit ${code}: ${made.err()}`)])) as typeof ready;
    const url = new URL(ready.url);
    origin = url.origin;
    const traded = await trade(url);
    traded.ws.close();
    token = traded.key;
  }, 120_000);

  afterAll(async () => {
    controller?.abort();
    if (exit) expect(await exit).toBe(0);
    keychain = undefined;
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('prints one ready line with a loopback one-time link, never the key, in demo mode', () => {
    expect(ready).toEqual({
      type: 'ready',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/\?code=[\w-]{20,}$/),
      demo: true,
    });
    expect(token.length).toBeGreaterThanOrEqual(20);
    expect(ready.url).not.toContain(token);
    expect(stderr()).not.toContain(token);
  });

  it('lets the printed link in once: a second handshake with its code is refused, the page says why', async () => {
    const url = new URL(ready.url);
    expect(await refusal(`ws://${url.host}/ws`, origin, { code: url.searchParams.get('code') ?? '' })).toBe(
      'close 4401',
    );
    const page = await rawGet(origin, `/?${url.searchParams}`, { host: url.host });
    expect(page.status).toBe(401);
    expect(page.body).toContain('already used');
    expect(page.headers['set-cookie']).toBeUndefined();
  });

  it('serves the page with its security headers and refuses other Host names', async () => {
    const page = await fetch(`${origin}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(UI_CSP);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<div id="app">');
    const rebound = await rawGet(origin, '/', { host: `evil.example:${new URL(origin).port}` });
    expect(rebound.status).toBe(421);
  });

  it.each([
    '/../package.json',
    '/%2e%2e/package.json',
    '/%2e%2e%2fpackage.json',
    '/..%5cpackage.json',
    '/assets/../../package.json',
  ])('answers 404 to the traversal %s', async (path) => {
    const res = await rawGet(origin, path, { host: new URL(origin).host });
    expect(res.status).toBe(404);
    expect(res.body).not.toContain('"name"');
  });

  it('refuses a WebSocket with a wrong key (4401), a key in the URL (4401) or from another origin (403)', async () => {
    const wsBase = `ws://${new URL(origin).host}/ws`;
    // The page's own origin with a wrong credential is told so (4401, which the page shows), never served.
    expect(await refusal(wsBase, origin, { key: `wrong-${token}` })).toBe('close 4401');
    expect(await refusal(wsBase, origin, { key: '' })).toBe('close 4401');
    expect(await refusal(`${wsBase}?token=${token}`, origin, { code: 'none' })).toBe('close 4401');
    expect(await refusal(wsBase, origin, { key: token })).toBe('let in');
    // A stolen key is no use from a page of another origin, another loopback port included.
    expect(await refusal(wsBase, 'http://evil.example', { key: token })).toBe('status 403');
    const otherPort = `http://127.0.0.1:${Number(new URL(origin).port) === 1 ? 2 : Number(new URL(origin).port) - 1}`;
    expect(await refusal(wsBase, otherPort, { key: token })).toBe('status 403');
  });

  it('answers contract requests, validates them, and pushes live lists once visible', async () => {
    const ws = await connect(`ws://${new URL(origin).host}/ws`, origin, { key: token });
    const c = client(ws);
    try {
      const live = await c.invoke('channels:live', []);
      expect(live.ok).toBe(true);
      expect(Array.isArray(live.result)).toBe(true);
      expect((live.result as unknown[]).length).toBeGreaterThan(0);
      expect((live.result as Record<string, unknown>[])[0]).toMatchObject({ id: expect.any(String), state: 'live' });

      expect(await c.invoke('channels:end', [42])).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      expect(await c.invoke('channels:search', [{ since: 'yesterday', until: 'now' }])).toMatchObject({
        ok: false,
        error: { code: 'invalid_input' },
      });
      expect(await c.invoke('app:shutdown', [])).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      expect(await c.invoke('app:info', [])).toMatchObject({
        ok: true,
        result: { transport: 'ws', demo: true, native: false, fileActions: false },
      });

      const pushed = c.nextEvent('channels:live');
      ws.send(JSON.stringify({ type: 'subscribe', event: 'channels:live' }));
      ws.send(JSON.stringify({ type: 'visibility', visible: true }));
      expect(Array.isArray(await pushed)).toBe(true);
    } finally {
      ws.close();
    }
  });

  it('writes an error the page did not catch, sent over the WebSocket, to the serve log (a bounded report only)', async () => {
    const ws = await connect(`ws://${new URL(origin).host}/ws`, origin, { key: token });
    const c = client(ws);
    try {
      const report = { kind: 'error', message: 'TypeError: x is undefined', stack: null, source: 'index.js:3:9' };
      expect(await c.invoke('app:rendererError', [report])).toEqual(
        expect.objectContaining({ ok: true, result: { logged: true } }),
      );
      expect(await c.invoke('app:rendererError', [{ ...report, message: 'x'.repeat(2001) }])).toMatchObject({
        ok: false,
        error: { code: 'invalid_input' },
      });
      const log = await readFile(join(home, 'logs', 'serve.1.log'), 'utf8');
      const line = log.split('\n').find((l) => l.includes('x is undefined')) ?? '';
      expect(JSON.parse(line)).toMatchObject({
        level: 50,
        scope: 'renderer',
        msg: 'uncaught error in the page at index.js:3:9: TypeError: x is undefined',
      });
      // The terminal is not where the page's errors go.
      expect(stderr()).not.toContain('x is undefined');
    } finally {
      ws.close();
    }
  });
});

describe('tally serve opening a browser', () => {
  let home: string;
  let controller: AbortController;
  let exit: Promise<number>;
  let printed: URL;
  let opened: URL;

  beforeAll(async () => {
    setKeychain(new MemorySecretStore());
    home = await mkdtemp(join(tmpdir(), 'tally-serve-open-'));
    openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: join(home, 'recordings') });
    // $BROWSER stands in for the desktop's opener: it records the command line every local user could read.
    const argvFile = join(home, 'opener-argv.txt');
    const opener = join(home, 'opener.sh');
    await writeFile(opener, `#!/bin/sh\nprintf '%s' "$*" > "${argvFile}.tmp" && mv "${argvFile}.tmp" "${argvFile}"\n`);
    await chmod(opener, 0o755);
    controller = new AbortController();
    const made = captureIo(controller.signal, { TALLY_HOME: home, DISPLAY: ':99', BROWSER: opener }, keychain);
    const line = firstLine(made.stdout);
    exit = main(['serve', '--sandbox', '--port', '0', '--json'], made.io);
    const ready = JSON.parse(await Promise.race([line, exit.then((c) => `exit ${c}: ${made.err()}`)])) as {
      url: string;
    };
    printed = new URL(ready.url);
    await vi.waitFor(() => expect(existsSync(argvFile)).toBe(true), { timeout: 10_000, interval: 20 });
    opened = new URL(await readFile(argvFile, 'utf8'));
  }, 120_000);

  afterAll(async () => {
    controller?.abort();
    if (exit) expect(await exit).toBe(0);
    keychain = undefined;
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('hands the opener its own one-time code, never the key', () => {
    expect(opened.origin).toBe(printed.origin);
    expect(opened.searchParams.get('code')).toMatch(/^[\w-]{20,}$/);
    expect(opened.searchParams.get('code')).not.toBe(printed.searchParams.get('code'));
    expect([...opened.searchParams.keys()]).toEqual(['code']);
  });

  it('trades the code once, at the handshake, for the key the page keeps; a second use is refused', async () => {
    const host = opened.host;
    // Loading the page does not spend the code (the page presents it) and sets no cookie.
    const page = await rawGet(opened.origin, `/?${opened.searchParams}`, { host });
    expect(page.status).toBe(200);
    expect(page.headers['set-cookie']).toBeUndefined();
    const { ws, key } = await trade(opened);
    expect(opened.href).not.toContain(key);
    expect(printed.href).not.toContain(key);
    const answer = await client(ws).invoke('app:info', []);
    expect(answer).toMatchObject({ ok: true, result: { demo: true } });
    ws.close();

    const wsUrl = `ws://${host}/ws`;
    await expect(trade(opened)).rejects.toThrow('close 4401');
    const again = await rawGet(opened.origin, `/?${opened.searchParams}`, { host });
    expect(again.status).toBe(401);
    expect(again.body).toContain('already used or has expired');
    // The key it was sent opens later handshakes (a reload, a reconnect).
    const reload = await connect(wsUrl, opened.origin, { key });
    expect(await client(reload).invoke('app:info', [])).toMatchObject({ ok: true });
    reload.close();
  });
});

describe('one-time codes', () => {
  it('expire a minute after they are made, by the clock the server is given', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-serve-codes-'));
    let clock = 1_000_000;
    const { ui, close } = await startQuietUiServer(home, () => clock);
    try {
      const late = new URL(ui.oneTimeUrl());
      const inTime = new URL(ui.oneTimeUrl());
      const forever = new URL(ui.oneTimeUrl(Number.POSITIVE_INFINITY));
      clock += ONE_TIME_CODE_TTL_MS;
      const first = await trade(inTime);
      first.ws.close();
      clock += 1;
      await expect(trade(late)).rejects.toThrow('close 4401');
      const expired = await rawGet(ui.origin, `/?${late.searchParams}`, { host: late.host });
      expect(expired.status).toBe(401);
      expect(expired.body).toContain('already used or has expired');
      expect(expired.headers['set-cookie']).toBeUndefined();
      // The printed link waits for its producer, however long.
      clock += 365 * 24 * 3600_000;
      const printed = await trade(forever);
      expect(printed.key).toBe(first.key);
      printed.ws.close();
    } finally {
      await close();
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('tally serve arguments', () => {
  it('refuses a non-loopback host unless --allow-remote, and explains why', async () => {
    expect(() => parseServeArgs(['--host', '0.0.0.0'])).toThrow(/key travels in clear/);
    expect(parseServeArgs(['--host', '0.0.0.0', '--allow-remote']).host).toBe('0.0.0.0');
    expect(parseServeArgs([])).toEqual({ port: 0, host: '127.0.0.1', sandbox: false, open: true, json: false });
    expect(() => parseServeArgs(['--port', '70000'])).toThrow(/--port/);
    expect(isLoopbackHost('127.0.0.2')).toBe(true);
    expect(isLoopbackHost('::1')).toBe(true);
    expect(isLoopbackHost('192.168.1.4')).toBe(false);
    const errors = captureIo(new AbortController().signal, {}, keychain);
    expect(await main(['serve', '--host', '10.0.0.1'], errors.io)).toBe(2);
    expect(errors.err()).toMatch(/--allow-remote/);
  });
});
