/**
 * The one way to the project secret, for the app and every `tally` command alike.
 *
 * The secret is bound to the three service hosts it was entered for. Settings are writable from the
 * renderer (and the settings file by anything running as the user), so a changed host must never be
 * enough to make Tally send the secret somewhere else: until the secret is entered again for the new hosts
 * (`tally login`, or Settings in the app), it is withheld and the caller says so in one line.
 *
 * Where the binding lives follows where the secret lives:
 * - keychain secret: a `hosts` entry beside it in the keychain, written by whatever stores the secret. An
 *   entry stored before bindings existed is bound to the hosts of its first use.
 * - environment secret (TALLY_SERVICE_ID + TALLY_SECRET): bound for the life of this process to the hosts
 *   of its first use. The keychain is never opened for it, so scripts and CI need none.
 */
import { ngrokTokenFromEnv, readNgrokTokenFile } from './ngrok-token-file.js';
import { CredentialStore, type SecretStore } from './credentials.js';
import type { Endpoints } from './endpoints.js';
import { describeError, silentLogger, type Logger } from './logger.js';
import type { Credentials } from './model.js';

/** Keychain token holding the hosts the stored secret was entered for. */
export const HOSTS_TOKEN = 'hosts';

export type CredentialSource = 'env' | 'keychain';

export type CredentialLookup =
  /** Safe to send to these hosts. */
  | { kind: 'ready'; credentials: Credentials; source: CredentialSource }
  /** Configured, but entered for other hosts: not to be sent. */
  | { kind: 'hosts-changed'; serviceId: string; source: CredentialSource; message: string }
  /** Nothing usable: none configured, half configured, or the keychain failed. `message` says what to do. */
  | { kind: 'missing'; message: string; configured: boolean };

export interface CredentialResolverOptions {
  /** The keychain, or null when it cannot be used (credentials then come from the environment only). */
  secrets: SecretStore | null;
  env: NodeJS.ProcessEnv;
  /** What the user does to enter the secret again, ending the hosts-changed message ("run ..."). */
  reenter: string;
  /** What the user does when there are no credentials at all. */
  noCredentials: string;
  log?: Logger;
  /** The state folder, where the ngrok authtoken file lives when no keychain can hold it (ngrok-token-file.ts). */
  home?: string;
}

/** The binding key of a set of hosts: all three, in a fixed order. */
export function hostsKey(endpoints: Endpoints): string {
  return JSON.stringify([endpoints.baseUrl, endpoints.consoleApiUrl, endpoints.adminUrl]);
}

/** The one-line refusal, shared so the app and the CLI say the same thing. */
export function hostsChangedMessage(reenter: string): string {
  return `The service hosts changed since the secret was entered, so it is not sent to them: ${reenter}.`;
}

export class CredentialResolver {
  readonly #opts: CredentialResolverOptions;
  readonly #store: CredentialStore | null;
  readonly #log: Logger;
  /** Hosts the environment secret was first used with in this process. */
  #envHosts: string | null = null;
  /** Cached keychain binding: undefined until read, null when the keychain holds none. */
  #keychainHosts: string | null | undefined = undefined;

  constructor(opts: CredentialResolverOptions) {
    this.#opts = opts;
    this.#store = opts.secrets ? new CredentialStore(opts.secrets) : null;
    this.#log = opts.log ?? silentLogger;
  }

  /** The store under the resolver, for saving and clearing (null without a keychain). */
  get store(): CredentialStore | null {
    return this.#store;
  }

  /**
   * The credentials to use with `endpoints`. `serviceId` (a CLI flag) picks the project: with
   * TALLY_SECRET it pairs with that secret, otherwise the keychain must hold that same project.
   */
  async lookup(endpoints: Endpoints, serviceId?: string): Promise<CredentialLookup> {
    const env = this.#opts.env;
    const envSecret = env.TALLY_SECRET?.trim() || undefined;
    const wanted = serviceId?.trim() || env.TALLY_SERVICE_ID?.trim() || undefined;
    const hosts = hostsKey(endpoints);
    if (wanted && envSecret) {
      this.#envHosts ??= hosts;
      return this.#bound({ serviceId: wanted, secret: envSecret }, 'env', this.#envHosts === hosts);
    }
    if (envSecret) {
      // Never pair an environment secret with a stored service ID: they may belong to different projects.
      return missing('TALLY_SECRET is set but TALLY_SERVICE_ID is not: set both, or pass --service-id.', true);
    }
    if (!this.#store) return missing(this.#opts.noCredentials, false);
    let stored: Credentials | null;
    try {
      stored = await this.#store.stored();
    } catch (error) {
      return missing(describeError(error), true);
    }
    if (!stored) {
      if (wanted) {
        return missing(`No secret for service ID "${wanted}": set TALLY_SECRET or ${this.#opts.reenter}.`, false);
      }
      return missing(this.#opts.noCredentials, false);
    }
    if (wanted && wanted !== stored.serviceId) {
      return missing(
        `The keychain holds credentials for service ID "${stored.serviceId}", not "${wanted}": set TALLY_SECRET or ${this.#opts.reenter}.`,
        true,
      );
    }
    const bound = await this.#keychainBinding(hosts);
    return this.#bound(stored, 'keychain', bound === hosts);
  }

  /** Like lookup, but anything other than ready is thrown as the caller's error with its one-line message. */
  async require(endpoints: Endpoints, fail: (message: string) => Error, serviceId?: string): Promise<Credentials> {
    const found = await this.lookup(endpoints, serviceId);
    if (found.kind === 'ready') return found.credentials;
    throw fail(found.message);
  }

  /** Records that the secret was just entered for `endpoints` (after `tally login` or Settings stored it). */
  async bind(endpoints: Endpoints): Promise<void> {
    const hosts = hostsKey(endpoints);
    this.#envHosts = hosts;
    if (!this.#store) return;
    await this.#store.setToken(HOSTS_TOKEN, hosts);
    this.#keychainHosts = hosts;
  }

  /** Drops the binding with the secret (logout), so a later secret is bound afresh. */
  async forget(): Promise<void> {
    this.#envHosts = null;
    this.#keychainHosts = undefined;
    if (!this.#store) return;
    try {
      await this.#store.deleteToken(HOSTS_TOKEN);
    } catch (error) {
      // The secret itself is gone; a stale binding only makes the next entry of it be bound again.
      this.#log.warn(`credentials: the hosts binding could not be removed: ${describeError(error)}`);
    }
  }

  /**
   * The ngrok authtoken: from the keychain, else TALLY_NGROK_AUTHTOKEN, else the owner-only file in the state
   * folder (ngrok-token-file.ts). A stray NGROK_AUTHTOKEN never picks the account. Throws ConfigError when the
   * file is readable by others.
   */
  async ngrokAuthtoken(): Promise<string | null> {
    let unreadable = false;
    if (this.#store) {
      try {
        const stored = await this.#store.getToken('ngrok');
        if (stored) return stored;
      } catch {
        unreadable = true;
      }
    }
    const fromEnv = ngrokTokenFromEnv(this.#opts.env);
    if (fromEnv) return fromEnv;
    const fromFile = this.#opts.home ? await readNgrokTokenFile(this.#opts.home) : null;
    // Said only when no token came from elsewhere, and about the ngrok authtoken alone: the keychain's own
    // message suggests the service's variables, which have nothing to do with ngrok.
    if (!fromFile && unreadable) {
      this.#log.warn('credentials: the OS keychain cannot be read here, so no stored ngrok authtoken is used.');
    }
    return fromFile;
  }

  #bound(credentials: Credentials, source: CredentialSource, sameHosts: boolean): CredentialLookup {
    if (sameHosts) return { kind: 'ready', credentials, source };
    return {
      kind: 'hosts-changed',
      serviceId: credentials.serviceId,
      source,
      message: hostsChangedMessage(this.#opts.reenter),
    };
  }

  async #keychainBinding(hosts: string): Promise<string | null> {
    if (this.#keychainHosts !== undefined && this.#keychainHosts !== null) return this.#keychainHosts;
    const store = this.#store as CredentialStore;
    let bound: string | null;
    try {
      bound = await store.getToken(HOSTS_TOKEN);
    } catch (error) {
      // Without the binding the secret cannot be shown to belong to these hosts: withhold it.
      this.#log.warn(`credentials: the hosts binding could not be read: ${describeError(error)}`);
      return null;
    }
    if (bound === null) {
      // Stored before bindings existed: bound to the hosts of its first use.
      bound = hosts;
      try {
        await store.setToken(HOSTS_TOKEN, hosts);
      } catch (error) {
        this.#log.warn(`credentials: the hosts binding could not be stored: ${describeError(error)}`);
      }
    }
    this.#keychainHosts = bound;
    return bound;
  }
}

function missing(message: string, configured: boolean): CredentialLookup {
  return { kind: 'missing', message, configured };
}
