/**
 * The arguments of the `tally` commands: strict parsing (mistakes are usage errors, exit 2) and the connection
 * options every command that talks to the service accepts (flag > environment > settings > default).
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
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
