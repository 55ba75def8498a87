/**
 * The service API client of the `tally` commands that talk to the service (`live`, `search`, `end`, `login`):
 * a ChannelApi bound to the command's abort signal and tuned by the environment, and the context such a command
 * loads (settings, hosts, credentials, client) once its own usage errors are out of the way.
 */
import type { ParseArgsConfig } from 'node:util';
import { ChannelApi } from '../core/api-client.js';
import type { Endpoints } from '../core/endpoints.js';
import type { Credentials } from '../core/model.js';
import type { Settings, SettingsStore } from '../core/settings.js';
import { CONNECTION_OPTIONS, connectionFlags, parseCommandArgs, type ConnectionFlags } from './arguments.js';
import type { Command, CommandIo } from './command.js';
import { resolveCredentials } from './keychain.js';
import { endpointsFor, loadSettings } from './settings.js';

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
