/**
 * `tally listen` in-process through the real CLI entry: with --sandbox it needs no account and no hand
 * wiring (the sandbox's webhooks point at the receiver it just opened), and a recording ends up on disk.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { MemorySecretStore, type SecretStore } from '../core/credentials.js';
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

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Resolves with the first NDJSON event of `type` printed on the captured stdout. */
function nextEvent(stdout: NodeJS.ReadableStream, type: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const event = JSON.parse(line) as Record<string, unknown>;
        if (event.type === type) {
          stdout.off('data', onData);
          resolve(event);
        }
      }
    };
    stdout.on('data', onData);
  });
}

describe('tally listen', () => {
  it('--sandbox saves a recording from the built-in sandbox with no other wiring', async () => {
    setKeychain(new MemorySecretStore());
    cleanups.push(async () => (keychain = undefined));
    const home = await tempDir('tally-listen-home-');
    const folder = await tempDir('tally-listen-rec-');
    const controller = new AbortController();
    const run = captureIo(controller.signal, { TALLY_HOME: home }, keychain);
    const ready = nextEvent(run.stdout, 'ready');
    const saved = nextEvent(run.stdout, 'saved');
    // 600x: the demo's first broadcast ends within a second or so of real time.
    const exit = main(['listen', '--sandbox', '--time-factor', '600', '--folder', folder, '--ndjson'], run.io);
    cleanups.push(async () => {
      controller.abort();
      await exit;
    });

    expect(await ready).toMatchObject({ note: expect.stringContaining('Sandbox: broadcasts start and end') });
    const event = await saved;
    expect(String(event.path).startsWith(folder)).toBe(true);
    expect((await readFile(String(event.path))).length).toBe(event.bytes);
    controller.abort();
    expect(await exit).toBe(0);
    // Headless too, there is a log to send: <data>/logs/listen.1.log, one JSON line per entry.
    const log = (await readFile(join(home, 'logs', 'listen.1.log'), 'utf8')).trim().split('\n');
    expect(JSON.parse(log[0] ?? '{}')).toMatchObject({
      level: 30,
      msg: expect.stringMatching(/^tally listen started/),
    });
  }, 60_000);

  it('says why --register does nothing without a public URL', async () => {
    const home = await tempDir('tally-listen-home-');
    const controller = new AbortController();
    const run = captureIo(
      controller.signal,
      {
        TALLY_HOME: home,
        TALLY_SERVICE_ID: 'svc',
        TALLY_SECRET: 'secret',
        // Loopback with nothing listening: the missed-recordings check fails fast and never leaves the machine.
        TALLY_BASE_URL: 'http://127.0.0.1:1',
        TALLY_CONSOLE_API_URL: 'http://127.0.0.1:1/console',
        TALLY_ADMIN_URL: 'http://127.0.0.1:1/admin',
      },
      keychain,
    );
    const ready = nextEvent(run.stdout, 'ready');
    const exit = main(['listen', '--register', '--port', '0', '--tunnel', 'none', '--ndjson'], run.io);
    cleanups.push(async () => {
      controller.abort();
      await exit;
    });
    expect((await ready).note).toMatch(/^Nothing to register: there is no public URL.*--tunnel ngrok/);
    controller.abort();
    expect(await exit).toBe(0);
  });
});
