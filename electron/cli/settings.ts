/**
 * The settings a `tally` command reads (the state folder TALLY_HOME names, or the app data folder) and the
 * service hosts they give with the flags and the environment.
 */
import { resolveEndpoints } from '../core/endpoints.js';
import type { Endpoints } from '../core/endpoints.js';
import { appDataDir } from '../core/paths.js';
import { openSettingsStore } from '../core/settings.js';
import type { Settings, SettingsStore } from '../core/settings.js';
import type { ConnectionFlags } from './arguments.js';
import type { CommandIo } from './command.js';

/** Settings from the state folder TALLY_HOME names (or the app data folder). */
export function loadSettings(io: Pick<CommandIo, 'env'>): { settings: Settings; store: SettingsStore } {
  const store = openSettingsStore(appDataDir(io.env));
  return { settings: store.get(), store };
}

/** Hosts from flags, environment and settings, in that order. */
export function endpointsFor(io: Pick<CommandIo, 'env'>, flags: ConnectionFlags, settings: Settings): Endpoints {
  return resolveEndpoints({ flags, env: io.env, settings: settings.endpoints });
}
