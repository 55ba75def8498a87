/**
 * Where the `tally` commands keep and find credentials: the OS keychain (or the SecretStore a spec hands in on
 * `CommandIo.secrets`; bin/cli leaves it unset), and the core's credential resolver over it, worded for the
 * terminal.
 */
import { CredentialResolver } from '../core/credential-resolver.js';
import { CredentialStore, KeyringSecretStore } from '../core/credentials.js';
import type { SecretStore } from '../core/credentials.js';
import type { Endpoints } from '../core/endpoints.js';
import { ConfigError } from '../core/errors.js';
import { lineLogger } from '../core/logger.js';
import type { Credentials } from '../core/model.js';
import { appDataDir } from '../core/paths.js';
import type { ConnectionFlags } from './arguments.js';
import type { CommandIo } from './command.js';

/** The OS keychain as a raw SecretStore (or the one the caller hands in), for commands that build an app core. */
export function openSecretStore(io: Pick<CommandIo, 'secrets'>): SecretStore {
  return io.secrets ?? new KeyringSecretStore();
}

/** The credential store over the OS keychain (or the one the caller hands in). */
export function openCredentialStore(io: Pick<CommandIo, 'secrets'>): CredentialStore {
  return new CredentialStore(openSecretStore(io));
}

const NO_CREDENTIALS =
  'No credentials: run "tally login" to store the service ID and secret in the OS keychain, or set ' +
  'TALLY_SERVICE_ID and TALLY_SECRET. To try Tally without an account, run "tally sandbox" and export the ' +
  'variables it prints.';

/**
 * The core's credential resolver over the OS keychain (or the one the caller hands in), worded for the terminal.
 * Every command goes through it, so the secret's binding to its hosts holds here exactly as in the app.
 */
export function openCredentialResolver(io: Pick<CommandIo, 'env' | 'stderr' | 'secrets'>): CredentialResolver {
  return new CredentialResolver({
    secrets: openSecretStore(io),
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
  io: Pick<CommandIo, 'env' | 'stderr' | 'secrets'>,
  flags: ConnectionFlags,
  endpoints: Endpoints,
  resolver: CredentialResolver = openCredentialResolver(io),
): Promise<Credentials> {
  return resolver.require(endpoints, (message) => new ConfigError(message), flags.serviceId);
}
