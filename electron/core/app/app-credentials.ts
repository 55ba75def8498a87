/**
 * The app core's credentials: whether the keychain can be used, the one CredentialResolver (with the
 * secret's binding to its hosts), the status the Settings view shows, and whether the service has refused
 * the credentials lately (for the tray).
 */
import {
  errorNote,
  nested,
  note,
  noteText,
  said,
  type CredentialsInput,
  type CredentialsStatus,
  type Note,
  type NoteParams,
} from '../../contract.js';
import { ChannelApi } from '../api-client.js';
import { CredentialResolver } from '../credential-resolver.js';
import { CredentialStore, PROJECT_ACCOUNT, type SecretStore } from '../credentials.js';
import type { Endpoints } from '../endpoints.js';
import { BadCredentialsError, ConfigError, TallyError } from '../errors.js';
import { describeError, lineLogger } from '../logger.js';
import { ngrokTokenPath, readNgrokTokenFile, writeNgrokTokenFile } from '../ngrok-token-file.js';
import type { Credentials } from '../model.js';
import { NO_CREDENTIALS, errorView } from './core-messages.js';
import { keychainSecrets } from './diagnostics.js';

export interface AppCredentialsOptions {
  secrets: SecretStore;
  env: NodeJS.ProcessEnv;
  /** The state folder: the ngrok authtoken's file lives there when no keychain can hold it. */
  home: string;
  /** Set when `secrets` is a stand-in because the OS keychain could not be used: the reason to show. */
  keychainUnavailable?: ConfigError | string | null;
  log: (line: string) => void;
  /** Called when the refused-credentials flag changes. */
  onBadChange: () => void;
}

export class AppCredentials {
  readonly #opts: AppCredentialsOptions;
  readonly #store: CredentialStore;
  #resolver: CredentialResolver;
  #keychain: { available: boolean; message: string | null; notes: Note[] | null } = {
    available: true,
    message: null,
    notes: null,
  };
  #bad = false;

  constructor(opts: AppCredentialsOptions) {
    this.#opts = opts;
    this.#store = new CredentialStore(opts.secrets);
    this.#resolver = this.#makeResolver(opts.secrets);
  }

  /** Every secret the keychain holds for Tally, for the diagnostics report's redaction. */
  keychainSecrets(): Promise<string[]> {
    return keychainSecrets(this.#store);
  }

  /** Probes the keychain once; without one, credentials come from the environment only. */
  async probe(): Promise<void> {
    if (this.#opts.keychainUnavailable) {
      const unavailable = this.#opts.keychainUnavailable;
      // A ConfigError carries its note: the Settings banner is then in the producer's language, not English.
      const { text, notes } = said(errorNote(typeof unavailable === 'string' ? { message: unavailable } : unavailable));
      this.#keychain = { available: false, message: text, notes };
    } else {
      try {
        await this.#opts.secrets.get(PROJECT_ACCOUNT);
      } catch (error) {
        const { text, notes } = said(error instanceof ConfigError ? errorNote(error) : note('keychainUnusable'));
        this.#keychain = { available: false, message: text, notes };
      }
    }
    if (!this.#keychain.available) this.#resolver = this.#makeResolver(null);
  }

  /** Credentials for `endpoints`, or null (none, or withheld: see CredentialResolver). */
  async load(endpoints: Endpoints): Promise<Credentials | null> {
    const found = await this.#resolver.lookup(endpoints);
    if (found.kind === 'ready') return found.credentials;
    if (found.kind === 'hosts-changed' || found.configured) this.#opts.log(`credentials: ${found.message}`);
    return null;
  }

  /** The Settings view of the credentials for `endpoints`; `sandboxServiceId` while the demo stands in. */
  async status(endpoints: Endpoints, sandboxServiceId: string | null): Promise<CredentialsStatus> {
    const status = await this.#projectStatus(endpoints, sandboxServiceId);
    if (!this.#keychain.available) {
      // The documented fallback: a file only this user can read (ngrok-token-file.ts), named so Settings says where.
      const stored = await readNgrokTokenFile(this.#opts.home).catch(() => null);
      const file = ngrokTokenPath(this.#opts.home);
      return { ...status, ngrokTokenFile: file, ...(stored === null ? {} : { ngrokTokenStored: true }) };
    }
    const ngrok = await this.#store.getToken('ngrok').catch(() => null);
    // Only present when true, so the status reads as before for everyone without an ngrok tunnel.
    return ngrok === null ? status : { ...status, ngrokTokenStored: true };
  }

  /** Whether the OS keychain can be used, and why not (for the health's keychain component). */
  get keychain(): { available: boolean; notes: Note[] } {
    return { available: this.#keychain.available, notes: this.#keychain.notes ?? [] };
  }

  /**
   * Stores (or, with null, deletes) the ngrok authtoken in the OS keychain, never in settings; without a keychain
   * in a file only this user can read, in the state folder (docs/tunnels.md).
   */
  async setNgrokToken(token: string | null): Promise<void> {
    if (!this.#keychain.available) {
      try {
        await writeNgrokTokenFile(this.#opts.home, token);
      } catch (error) {
        throw new ConfigError(note('ngrokTokenNotStorable', { detail: describeError(error) }));
      }
      return;
    }
    if (token === null) await this.#store.deleteToken('ngrok');
    else await this.#store.setToken('ngrok', token);
  }

  async #projectStatus(endpoints: Endpoints, sandboxServiceId: string | null): Promise<CredentialsStatus> {
    const keychain = {
      keychainAvailable: this.#keychain.available,
      keychainMessage: this.#keychain.message,
      keychainNotes: this.#keychain.notes,
    };
    if (sandboxServiceId !== null)
      return { configured: true, serviceId: sandboxServiceId, source: 'sandbox', ...keychain };
    const found = await this.#resolver.lookup(endpoints);
    if (found.kind === 'ready') {
      return { configured: true, serviceId: found.credentials.serviceId, source: found.source, ...keychain };
    }
    if (found.kind === 'hosts-changed') {
      return {
        configured: false,
        serviceId: found.serviceId,
        source: found.source,
        ...keychain,
        keychainMessage: found.message,
        keychainNotes: [note('hostsChanged', { reenter: noteText(note('reenterInSettings')) })],
      };
    }
    return { configured: false, serviceId: null, source: null, ...keychain };
  }

  /** Why the keychain cannot be used, as the `detail` of a message (its first note nested for the popover). */
  #keychainDetail(): NoteParams {
    const { message, notes } = this.#keychain;
    if (message === null) return nested('detail', note('keychainNone'));
    const first = notes?.length === 1 ? notes[0] : undefined;
    // An error's note carries the note its message was written as, if any (TallyError.params).
    const inner = first?.code === 'error' ? first.params?.note : first?.code;
    if (typeof inner !== 'string') return { detail: message };
    const { note: _note, message: _message, errorCode: _code, ...params } = first?.params ?? {};
    return { ...params, detail: message, detailNote: inner };
  }

  /**
   * Why nothing can be stored (no keychain to store into), in the words the service secret is refused with; null
   * when credentials can be stored. Known once the keychain is probed; the app core pushes it to the studio host.
   */
  storableRefusal(): ConfigError | null {
    return this.#keychain.available ? null : new ConfigError(note('credentialsNotStorable', this.#keychainDetail()));
  }

  /** Refuses early when there is no keychain to store into. */
  assertStorable(): void {
    const refusal = this.storableRefusal();
    if (refusal) throw refusal;
  }

  /** Stores credentials the service accepted, bound to the hosts they were entered for. */
  async store(input: CredentialsInput, endpoints: Endpoints): Promise<void> {
    await this.#store.save(input);
    await this.#resolver.bind(endpoints);
    this.setBad(false);
  }

  /** Removes the stored credentials and their binding. */
  async clear(): Promise<void> {
    if (this.#keychain.available) await this.#store.clear();
    await this.#resolver.forget();
    this.setBad(false);
  }

  ngrokAuthtoken(): Promise<string | null> {
    return this.#resolver.ngrokAuthtoken();
  }

  /** A client for checking typed-in credentials against `endpoints` before anything is stored. */
  testClient(input: CredentialsInput, endpoints: Endpoints, version: string): ChannelApi {
    return new ChannelApi({
      endpoints,
      credentials: { serviceId: input.serviceId.trim(), secret: input.secret.trim() },
      retries: 1,
      userAgent: `Tally/${version}`,
    });
  }

  /**
   * Tries a connection with `api` (typed-in credentials, or the ones in use when `inUse`): the answer for
   * Settings. Only the credentials in use change the refused flag the tray shows.
   */
  async test(api: () => ChannelApi, inUse: boolean): Promise<{ ok: boolean; message: string; notes: Note[] }> {
    try {
      const { liveCount } = await api().testConnection();
      if (inUse) this.setBad(false);
      const { text, notes } = said(note('connected', { count: liveCount }));
      return { ok: true, message: text, notes };
    } catch (error) {
      if (inUse && error instanceof BadCredentialsError) this.setBad(true);
      const { text, notes } = said(errorNote(error instanceof TallyError ? error : errorView(error)));
      return { ok: false, message: text, notes };
    }
  }

  /** Whether the service refused the credentials in use (cleared by the next success). */
  get bad(): boolean {
    return this.#bad;
  }

  /** `notify` false when the caller updates the views itself right after. */
  setBad(bad: boolean, notify = true): void {
    if (bad === this.#bad) return;
    this.#bad = bad;
    if (notify) this.#opts.onBadChange();
  }

  /** Notes refused credentials on the way through, for the tray. */
  async track<T>(promise: Promise<T>): Promise<T> {
    try {
      return await promise;
    } catch (error) {
      if (error instanceof BadCredentialsError) this.setBad(true);
      throw error;
    }
  }

  #makeResolver(secrets: SecretStore | null): CredentialResolver {
    return new CredentialResolver({
      secrets,
      env: this.#opts.env,
      reenter: noteText(note('reenterInSettings')),
      noCredentials: noteText(NO_CREDENTIALS),
      log: lineLogger(this.#opts.log),
      home: this.#opts.home,
    });
  }
}
