/**
 * Wiring shared by the `tally` commands: strict argument parsing, where the hosts, credentials and
 * settings come from (flag > environment > settings > default), and small terminal prompts.
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { ChannelApi } from '../core/api-client.js';
import { CredentialResolver } from '../core/credential-resolver.js';
import { CredentialStore, KeyringSecretStore } from '../core/credentials.js';
import type { SecretStore } from '../core/credentials.js';
import { resolveEndpoints } from '../core/endpoints.js';
import type { Endpoints } from '../core/endpoints.js';
import { ConfigError } from '../core/errors.js';
import { lineLogger } from '../core/logger.js';
import type { Credentials } from '../core/model.js';
import { appDataDir } from '../core/paths.js';
import { openSettingsStore } from '../core/settings.js';
import type { Settings, SettingsStore } from '../core/settings.js';
import type { Command, CommandIo } from './command.js';
import { UsageError } from './command.js';

/** Options every command that talks to the service accepts. Spread into a command's parseArgs options. */
export const CONNECTION_OPTIONS = {
  'base-url': { type: 'string' },
  'console-api-url': { type: 'string' },
  'admin-url': { type: 'string' },
  'service-id': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** Help lines for CONNECTION_OPTIONS, shared by every command's help text. */
export const CONNECTION_HELP = `Connection options (default: environment, then settings, then the documented hosts):
  --base-url <url>         Signalling host for the live list and force-end (TALLY_BASE_URL)
  --console-api-url <url>  Console API host for search (TALLY_CONSOLE_API_URL)
  --admin-url <url>        Admin API host (TALLY_ADMIN_URL)
  --service-id <id>        Service ID to use (TALLY_SERVICE_ID); its secret comes from TALLY_SECRET
                           or from the keychain entry stored by "tally login"
Tuning: TALLY_TIMEOUT_MS (per request, default 10000), TALLY_RETRIES (retries of reads, default 3).
`;

export interface ConnectionFlags {
  baseUrl?: string;
  consoleApiUrl?: string;
  adminUrl?: string;
  serviceId?: string;
}

/** Reads the connection flags out of parsed parseArgs values. */
export function connectionFlags(values: Record<string, unknown>): ConnectionFlags {
  const pick = (key: string): string | undefined => {
    const value = values[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !value.trim()) throw new UsageError(`--${key} needs a value.`);
    return value.trim();
  };
  const flags: ConnectionFlags = {};
  const base = pick('base-url');
  const consoleApi = pick('console-api-url');
  const admin = pick('admin-url');
  const serviceId = pick('service-id');
  for (const [key, url] of [
    ['base-url', base],
    ['console-api-url', consoleApi],
    ['admin-url', admin],
  ] as const) {
    if (url !== undefined && !isHttpUrl(url)) throw new UsageError(`--${key} must be an http(s) URL.`);
  }
  if (base !== undefined) flags.baseUrl = base;
  if (consoleApi !== undefined) flags.consoleApiUrl = consoleApi;
  if (admin !== undefined) flags.adminUrl = admin;
  if (serviceId !== undefined) flags.serviceId = serviceId;
  return flags;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Strict parseArgs whose mistakes become UsageError (exit 2). Returns typed values and positionals.
 */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: T,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: boolean; strict: true }>> {
  try {
    return parseArgs({ args: negativeValuesJoined(argv, options), options, allowPositionals, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : 'invalid arguments';
    // Node's "argument is ambiguous … use '--limit=-XYZ'" for an option followed by another option.
    const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec(message);
    if (ambiguous)
      throw new UsageError(
        `${ambiguous[1]} needs a value (one that starts with "-" is written ${ambiguous[1]}=VALUE).`,
      );
    throw new UsageError(message.split(/\.\s+To specify|\n/)[0] ?? 'invalid arguments');
  }
}

/**
 * `--limit -5` as `--limit=-5`: a number after an option that takes a value is that value (no option of tally's is
 * a digit), so the command's own check says what is wrong with it instead of Node's "argument is ambiguous".
 */
function negativeValuesJoined(argv: string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : null;
    if (name !== null && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

let secretStoreOverride: SecretStore | null = null;

/**
 * Replaces the OS keychain for in-process tests (pass null to restore). The CLI itself never calls
 * this: there is no way to make it keep secrets anywhere but the keychain.
 */
export function setSecretStoreForTesting(store: SecretStore | null): void {
  secretStoreOverride = store;
}

/** The credential store over the OS keychain (or the test override). */
export function openCredentialStore(): CredentialStore {
  return new CredentialStore(openSecretStore());
}

/** The OS keychain as a raw SecretStore (or the test override), for commands that build an app core. */
export function openSecretStore(): SecretStore {
  return secretStoreOverride ?? new KeyringSecretStore();
}

/** Settings from the state folder TALLY_HOME names (or the app data folder). */
export function loadSettings(io: Pick<CommandIo, 'env'>): { settings: Settings; store: SettingsStore } {
  const store = openSettingsStore(appDataDir(io.env));
  return { settings: store.get(), store };
}

/** Hosts from flags, environment and settings, in that order. */
export function endpointsFor(io: Pick<CommandIo, 'env'>, flags: ConnectionFlags, settings: Settings): Endpoints {
  return resolveEndpoints({ flags, env: io.env, settings: settings.endpoints });
}

const NO_CREDENTIALS =
  'No credentials: run "tally login" to store the service ID and secret in the OS keychain, or set ' +
  'TALLY_SERVICE_ID and TALLY_SECRET. To try Tally without an account, run "tally sandbox" and export the ' +
  'variables it prints.';

/**
 * The core's credential resolver over the OS keychain (or the test override), worded for the terminal.
 * Every command goes through it, so the secret's binding to its hosts holds here exactly as in the app.
 */
export function openCredentialResolver(io: Pick<CommandIo, 'env' | 'stderr'>): CredentialResolver {
  return new CredentialResolver({
    secrets: openSecretStore(),
    env: io.env,
    reenter: 'run "tally login" to enter it again for the new hosts',
    noCredentials: NO_CREDENTIALS,
    log: lineLogger((line) => io.stderr.write(`${line}\n`)),
    home: appDataDir(io.env),
  });
}

/**
 * Credentials for this run, to be sent to `endpoints` only. `--service-id` (or TALLY_SERVICE_ID) picks
 * the project; the secret comes from TALLY_SECRET or, when the keychain holds that same project and was
 * entered for these hosts, from the keychain. The keychain is not opened when the environment has both.
 */
export async function resolveCredentials(
  io: Pick<CommandIo, 'env' | 'stderr'>,
  flags: ConnectionFlags,
  endpoints: Endpoints,
  resolver: CredentialResolver = openCredentialResolver(io),
): Promise<Credentials> {
  return resolver.require(endpoints, (message) => new ConfigError(message), flags.serviceId);
}

export interface CliContext {
  settings: Settings;
  settingsStore: SettingsStore;
  endpoints: Endpoints;
  credentials: Credentials;
  api: ChannelApi;
}

/** Everything a command that talks to the service needs, or a ConfigError saying what is missing. */
export async function loadContext(io: CommandIo, flags: ConnectionFlags): Promise<CliContext> {
  const { settings, store } = loadSettings(io);
  const endpoints = endpointsFor(io, flags, settings);
  const credentials = await resolveCredentials(io, flags, endpoints);
  return { settings, settingsStore: store, endpoints, credentials, api: createApi(io, endpoints, credentials) };
}

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;
/** The parsed values of a service command: its own options and the connection options. */
export type ServiceValues<T extends OptionsConfig> = ReturnType<
  typeof parseCommandArgs<typeof CONNECTION_OPTIONS & T>
>['values'];

/**
 * A command that talks to the service (`live`, `search`, `end`): its own options beside the connection
 * options, the connection flags read out, and the context loaded only when `run` asks for it, so that its own
 * usage errors come before any credential error.
 */
export function serviceCommand<T extends OptionsConfig>(
  help: string,
  options: T,
  run: (values: ServiceValues<T>, io: CommandIo, context: () => Promise<CliContext>) => Promise<number>,
): Command {
  return {
    help,
    run(argv, io) {
      const { values } = parseCommandArgs(argv, { ...CONNECTION_OPTIONS, ...options });
      const flags = connectionFlags(values);
      return run(values, io, () => loadContext(io, flags));
    },
  };
}

/**
 * A ChannelApi bound to the command's abort signal. TALLY_TIMEOUT_MS (per attempt) and TALLY_RETRIES
 * (extra attempts for reads; 0 fails fast in scripts) tune it.
 */
export function createApi(io: CommandIo, endpoints: Endpoints, credentials: Credentials): ChannelApi {
  const timeout = envNumber(io.env.TALLY_TIMEOUT_MS, 1, 600_000);
  const retries = envNumber(io.env.TALLY_RETRIES, 0, 10);
  return new ChannelApi({
    endpoints,
    credentials,
    signal: io.signal,
    userAgent: 'Tally CLI',
    ...(timeout === undefined ? {} : { timeoutMs: timeout }),
    ...(retries === undefined ? {} : { retries: Math.floor(retries) }),
  });
}

function envNumber(text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text);
  return Number.isFinite(value) && value >= min && value <= max ? value : undefined;
}

/** Whether a stream is an interactive terminal. */
export function isTty(stream: unknown): boolean {
  return Boolean((stream as { isTTY?: boolean } | null)?.isTTY);
}

function abortError(): Error {
  const error = new Error('Cancelled.');
  error.name = 'AbortError';
  return error;
}

/** Reads one line (without its line break) from stdin; null at end of input. */
export function readLine(io: Pick<CommandIo, 'stdin' | 'signal'>): Promise<string | null> {
  const { stdin, signal } = io;
  return new Promise((resolve, reject) => {
    let buffer = '';
    const finish = (value: string | null, error?: Error) => {
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      stdin.removeListener('error', onError);
      signal.removeEventListener('abort', onAbort);
      stdin.pause();
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      buffer += chunk.toString();
      const newline = buffer.search(/\r?\n/);
      if (newline >= 0) finish(buffer.slice(0, newline));
    };
    const onEnd = () => finish(buffer.length > 0 ? buffer : null);
    const onError = (error: Error) => finish(null, error);
    const onAbort = () => finish(null, abortError());
    if (signal.aborted) return onAbort();
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
    stdin.resume();
  });
}

/** Reads all of stdin as text (for `--secret-stdin` and pipes). */
export function readAll(io: Pick<CommandIo, 'stdin' | 'signal'>, maxBytes = 64 * 1024): Promise<string> {
  const { stdin, signal } = io;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: Error) => {
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      stdin.removeListener('error', onError);
      signal.removeEventListener('abort', onAbort);
      if (error) {
        stdin.pause();
        reject(error);
      } else resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onData = (chunk: Buffer | string) => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buf.length;
      if (size > maxBytes) return finish(new UsageError('stdin is too large for a secret.'));
      chunks.push(buf);
    };
    const onEnd = () => finish();
    const onError = (error: Error) => finish(error);
    const onAbort = () => finish(abortError());
    if (signal.aborted) return onAbort();
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
    stdin.resume();
  });
}

interface RawModeStream {
  setRawMode?: (mode: boolean) => unknown;
}

/**
 * Reads a line from a terminal without echoing it: raw mode, our own handling of Enter, Backspace,
 * Ctrl+C and Ctrl+D. Nothing typed is ever written anywhere.
 */
export function readHidden(io: Pick<CommandIo, 'stdin' | 'stderr' | 'signal'>, prompt: string): Promise<string> {
  const { stdin, stderr, signal } = io;
  const raw = stdin as unknown as RawModeStream;
  if (typeof raw.setRawMode !== 'function') {
    return Promise.reject(new UsageError('This terminal cannot hide input: pass the secret with --secret-stdin.'));
  }
  const setRawMode = raw.setRawMode.bind(stdin);
  return new Promise((resolve, reject) => {
    const chars: string[] = [];
    let escape = false;
    const finish = (error?: Error) => {
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      if (error) reject(error);
      else resolve(chars.join(''));
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (escape) {
          // Skip the rest of an arrow-key or similar escape sequence.
          if (/[A-Za-z~]/.test(ch)) escape = false;
          continue;
        }
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003') return finish(abortError());
        if (ch === '\u0004') {
          if (chars.length === 0) return finish();
          continue;
        }
        if (ch === '\u007f' || ch === '\b') {
          chars.pop();
          continue;
        }
        if (ch === '\u0015') {
          chars.length = 0;
          continue;
        }
        if (ch === '\u001b') {
          escape = true;
          continue;
        }
        if (ch < ' ') continue;
        chars.push(ch);
      }
    };
    const onEnd = () => finish();
    const onAbort = () => finish(abortError());
    if (signal.aborted) return reject(abortError());
    stderr.write(prompt);
    setRawMode(true);
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
    stdin.resume();
  });
}
