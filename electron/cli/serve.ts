/**
 * `tally serve`: the popover UI in a browser, over the same headless core the tray app runs. The page and
 * a WebSocket share one loopback origin; the WebSocket needs a session key the page gets for the one-time
 * code in its link (core/app/ui-server.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ParseArgsConfig } from 'node:util';
import { MemorySecretStore, PROJECT_ACCOUNT, type SecretStore } from '../core/credentials.js';
import { ConfigError } from '../core/errors.js';
import { appDataDir } from '../core/paths.js';
import { explainListenError, UsageError, type Command, type CommandIo } from './command.js';
import { openCommandLog } from './command-log.js';
import { desktopFileHooks } from './desktop-open.js';
import { openSecretStore } from './keychain.js';
import { explainTakenPort } from './taken-port.js';
import { parseCommandArgs } from './arguments.js';

const help = `Usage: tally serve [options]

Serves the popover UI (live channels, search, force-end, recordings, settings) to a browser, over the same
core the tray app runs, including the webhook receiver and downloads. Runs until Ctrl+C.

Options:
  --port N         Port of the UI. Default: any free port
  --host H         Address to listen on. Default: 127.0.0.1
  --allow-remote   Allow a --host that is not loopback. The link and the access key travel in clear over
                   plain HTTP: anyone who can see the traffic can then use Tally as you. Only on a
                   network you trust.
  --sandbox        Demo mode: run against the embedded sandbox (no account needed)
  --no-open        Do not open a browser
  --json           Print one JSON line {"type":"ready","url":...,"demo":...} once ready
  --log-level <l>  How much <data>/logs/serve.N.log holds: debug, info, warn or error (default: the
                   logLevel setting, info)
  --debug          The same as --log-level debug
  -h, --help       Show this help

The link opens Tally in one browser tab, once (a reload or a duplicated tab keeps working); for another
link, start "tally serve" again.

State and settings are shared with the tray app (TALLY_HOME overrides the folder). Credentials come from
the OS keychain or TALLY_SERVICE_ID / TALLY_SECRET.

Examples:
  tally serve --sandbox                  # the popover in your browser, no account needed
  tally serve --no-open                  # then open the printed link yourself
`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'allow-remote': { type: 'boolean' },
  sandbox: { type: 'boolean' },
  'no-open': { type: 'boolean' },
  json: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

export interface ServeArgs {
  port: number;
  host: string;
  sandbox: boolean;
  open: boolean;
  json: boolean;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** Whether `host` only ever reaches this computer. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK_NAMES.has(h) || (isIP(h) === 4 && h.startsWith('127.'));
}

/** Parses and checks the flags; a mistake is a UsageError (exit 2). */
export function parseServeArgs(argv: string[]): ServeArgs {
  const { values } = parseCommandArgs(argv, OPTIONS);
  let port = 0;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65_535)
      throw new UsageError('--port must be a port number from 0 to 65535.');
  }
  const host = values.host?.trim() || '127.0.0.1';
  if (!isLoopbackHost(host) && !values['allow-remote']) {
    throw new UsageError(
      `--host ${host} would let other computers reach Tally, and the access key travels in clear over HTTP. ` +
        'Add --allow-remote if that is really wanted (trusted network only).',
    );
  }
  return { port, host, sandbox: Boolean(values.sandbox), open: !values['no-open'], json: Boolean(values.json) };
}

/** The built renderer: beside the compiled CLI in dist/, or dist/renderer when run from source. */
export function uiDir(moduleUrl: string = import.meta.url): string {
  const here = dirname(fileURLToPath(moduleUrl));
  return moduleUrl.endsWith('.ts') ? join(here, '..', '..', 'dist', 'renderer') : join(here, '..', '..', 'renderer');
}

/** Whether a browser can be shown: a desktop session and not CI. */
export function canOpenBrowser(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): boolean {
  if (env.CI) return false;
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/**
 * Opens `url` with `$BROWSER` when set (the convention xdg-open, Python and npm follow), else the platform's
 * opener. Whatever runs it shows its arguments to every local user, so `url` must not carry the token.
 */
function openBrowser(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): void {
  const [cmd, args] = env.BROWSER
    ? [env.BROWSER, [url]]
    : platform === 'darwin'
      ? ['open', [url]]
      : platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args as string[], { detached: true, stdio: 'ignore' });
    // A missing opener is not worth a word: the link is printed anyway.
    child.on('error', () => {});
    child.unref();
  } catch {
    // Same: the printed link is the fallback.
  }
}

/** Addresses a wildcard bind answers on, so the Host check accepts them (with --allow-remote only). */
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((i): i is NonNullable<typeof i> => Boolean(i))
    .map((i) => i.address);
}

/**
 * The OS keychain, or, when it cannot be used, an in-memory stand-in and the reason: the core then takes
 * credentials from the environment only and says why in Settings.
 */
async function chooseSecrets(
  io: CommandIo,
): Promise<{ secrets: SecretStore; unavailable: ConfigError | string | null }> {
  const keychain = openSecretStore(io);
  try {
    await keychain.get(PROJECT_ACCOUNT);
    return { secrets: keychain, unavailable: null };
  } catch (error) {
    // The error itself goes to the core, so the page says it in the producer's language (its note).
    const unavailable = error instanceof ConfigError ? error : 'The OS keychain could not be used.';
    const reason = typeof unavailable === 'string' ? unavailable : unavailable.message;
    io.stderr.write(
      `tally serve: warning: ${reason}\n` +
        'tally serve: credentials are read from TALLY_SERVICE_ID and TALLY_SECRET only and cannot be saved from the browser.\n',
    );
    return { secrets: new MemorySecretStore(), unavailable };
  }
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

const command: Command = {
  help,
  async run(argv, io) {
    const args = parseServeArgs(argv);
    const staticDir = uiDir();
    if (!existsSync(join(staticDir, 'index.html'))) {
      throw new ConfigError('The browser UI is not built: run "npm run build:renderer" first.');
    }
    const [{ createAppCore }, { startUiServer }] = await Promise.all([
      import('../core/app/app-core.js'),
      import('../core/app/ui-server.js'),
    ]);
    const log = await openCommandLog(io, 'serve');
    const { secrets, unavailable } = await chooseSecrets(io);
    const core = await createAppCore({
      home: appDataDir(io.env),
      secrets,
      keychainUnavailable: unavailable,
      transport: 'ws',
      env: io.env,
      hooks: desktopFileHooks({ env: io.env, loopbackOnly: isLoopbackHost(args.host) }),
      ...(args.sandbox ? { demo: true } : {}),
      log,
      trail: log.trail,
    });
    // The logLevel setting, now and whenever it changes (the page's Settings → Advanced).
    log.followSetting((await core.handlers['settings:get']()).logLevel);
    core.on('settings:changed', (settings) => log.followSetting(settings.logLevel));
    let ui: Awaited<ReturnType<typeof startUiServer>> | null = null;
    try {
      try {
        await core.start();
      } catch (error) {
        // The page still opens and shows the problem (tunnel status, app:error) instead of no page at all.
        log(`recordings are not being received: ${error instanceof Error ? error.message : String(error)}`);
      }
      const wildcard = args.host === '0.0.0.0' || args.host === '::';
      const extraHosts = isLoopbackHost(args.host) ? [] : wildcard ? interfaceAddresses() : [args.host];
      ui = await startUiServer({ core, staticDir, host: args.host, port: args.port, extraHosts, log }).catch(
        async (error: unknown) => {
          const receiver = (await core.handlers['health:get']().catch(() => null))?.receiver.port ?? null;
          const what = { home: appDataDir(io.env), ownReceiverPort: receiver, what: 'the page' };
          throw explainListenError(await explainTakenPort(error, '--port', what), () => '--port');
        },
      );
      // Valid until used: the producer may open it minutes later. It is not the key (see ui-server.ts).
      const link = new URL(ui.oneTimeUrl(Number.POSITIVE_INFINITY));
      // A wildcard address is not something to browse to; loopback always reaches it.
      if (wildcard) link.hostname = '127.0.0.1';
      const url = link.href;
      const { demo } = await core.handlers['app:info']();
      if (args.json) {
        io.stdout.write(`${JSON.stringify({ type: 'ready', url, demo })}\n`);
      } else {
        io.stdout.write(`Tally is running at ${url}\n`);
        if (demo) io.stdout.write('Demo mode: the data comes from the embedded sandbox, not the service.\n');
        io.stdout.write('Press Ctrl+C to stop.\n');
      }
      if (args.open && canOpenBrowser(io.env)) {
        const once = new URL(ui.oneTimeUrl());
        if (wildcard) once.hostname = '127.0.0.1';
        openBrowser(once.href, io.env);
      }
      await waitForAbort(io.signal);
    } finally {
      await ui?.close();
      await core.stop();
    }
    return 0;
  },
};

export default command;
