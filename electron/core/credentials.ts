/**
 * Where the project credentials and other tokens live: the OS keychain (Keychain on macOS, Credential
 * Manager on Windows, the Secret Service on Linux), never a file. The keychain sits behind the small
 * `SecretStore` interface so tests and the app can use the in-memory twin where no keychain exists.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type * as Keyring from '@napi-rs/keyring';
import type { AsyncEntry as AsyncEntryType } from '@napi-rs/keyring';
import { note, noteText } from './notes.js';
import { ConfigError } from './errors.js';
import { registerSecret } from './redact.js';
import type { Credentials } from './model.js';

/** A tiny async key-value store for secrets, keyed by account name. */
export interface SecretStore {
  get(account: string): Promise<string | null>;
  set(account: string, value: string): Promise<void>;
  /** Resolves true when something was deleted, false when there was nothing to delete. */
  delete(account: string): Promise<boolean>;
}

/** Service name under which every Tally entry is filed in the keychain. */
export const KEYCHAIN_SERVICE = 'Tally';

/** Without its full stop, so callers can go on after it. */
export const NO_SECRET_SERVICE_MESSAGE = noteText(note('keychainNoService')).replace(/\.$/, '');

type KeyringModule = typeof Keyring;

/**
 * Whether a D-Bus session bus can be reached on Linux, where the Secret Service lives: an address in the
 * environment, the usual socket (`$XDG_RUNTIME_DIR/bus`, `/run/user/<uid>/bus`), or a display D-Bus may
 * autolaunch one for. Without any of them (a headless `tally listen`) the keychain is known to be out of reach
 * before the native keyring library is loaded: about 2 MB of memory for nothing (issue 22).
 */
export function sessionBusReachable(env: NodeJS.ProcessEnv, exists: (path: string) => boolean = existsSync): boolean {
  if (env.DBUS_SESSION_BUS_ADDRESS || env.DISPLAY || env.WAYLAND_DISPLAY) return true;
  const sockets = [env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, 'bus') : null];
  if (typeof process.getuid === 'function') sockets.push(`/run/user/${process.getuid()}/bus`);
  return sockets.some((socket) => socket !== null && exists(socket));
}

/**
 * The OS keychain through @napi-rs/keyring. On Linux the entry is pinned to the Secret Service: the
 * library would otherwise fall back to the kernel keyring, which forgets everything at logout, so a
 * missing Secret Service is reported as a ConfigError instead of quietly storing somewhere else.
 */
export class KeyringSecretStore implements SecretStore {
  readonly #service: string;
  readonly #env: NodeJS.ProcessEnv;
  #module: Promise<KeyringModule> | null = null;

  constructor(options: { service?: string; env?: NodeJS.ProcessEnv } = {}) {
    this.#service = options.service ?? KEYCHAIN_SERVICE;
    this.#env = options.env ?? process.env;
  }

  async get(account: string): Promise<string | null> {
    return this.#call(account, (entry) => entry.getPassword());
  }

  async set(account: string, value: string): Promise<void> {
    await this.#call(account, (entry) => entry.setPassword(value));
  }

  async delete(account: string): Promise<boolean> {
    return this.#call(account, (entry) => entry.deleteCredential());
  }

  async #call<T>(account: string, action: (entry: AsyncEntryType) => Promise<T>): Promise<T> {
    if (process.platform === 'linux' && this.#module === null && !sessionBusReachable(this.#env)) {
      throw new ConfigError(note('keychainNoService'));
    }
    try {
      this.#module ??= import('@napi-rs/keyring');
      const { AsyncEntry } = await this.#module;
      // The constructor itself connects to D-Bus on Linux and throws when no bus is reachable.
      const entry = new AsyncEntry(this.#service, account, { linux: { store: 'secret-service' } });
      return await action(entry);
    } catch (error) {
      // The native error is never attached: keep only our message, whatever the library put in its own.
      throw keyringError(error);
    }
  }
}

/** Maps a native keyring failure to a ConfigError that tells the user what to do. */
export function keyringError(error: unknown): ConfigError {
  const text = describeNative(error);
  if (/unlock prompt|locked|dismissed|NoSuchObject.*collection|IsLocked/i.test(text)) {
    return new ConfigError(note('keychainLocked'));
  }
  if (
    process.platform === 'linux' &&
    /dbus|d-bus|secret service|org\.freedesktop\.secrets|ServiceUnknown|socket|autolaunch|platform failure|no storage access/i.test(
      text,
    )
  ) {
    return new ConfigError(note('keychainNoService'));
  }
  const firstLine = text.split('\n')[0]?.slice(0, 200) ?? 'unknown failure';
  return new ConfigError(note('keychainFailed', { detail: firstLine }));
}

function describeNative(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    parts.push(current.message);
    current = current.cause;
  }
  return parts.join(' | ') || String(error);
}

/** The in-memory twin of the keychain for tests and for the demo mode: nothing ever touches disk. */
export class MemorySecretStore implements SecretStore {
  readonly #values = new Map<string, string>();

  async get(account: string): Promise<string | null> {
    return this.#values.get(account) ?? null;
  }

  async set(account: string, value: string): Promise<void> {
    this.#values.set(account, value);
  }

  async delete(account: string): Promise<boolean> {
    return this.#values.delete(account);
  }
}

/** Keychain account holding the project credentials as one JSON value (one prompt, one atomic write). */
export const PROJECT_ACCOUNT = 'project';
const TOKEN_PREFIX = 'token:';

/** Names of the other secrets Tally keeps; `ngrok` is the tunnel authtoken. */
export type TokenName = 'ngrok' | (string & {});

/**
 * Project credentials and named tokens on top of a SecretStore. Environment variables win over the
 * keychain so scripts and CI never need one.
 */
export class CredentialStore {
  readonly #secrets: SecretStore;

  constructor(secrets: SecretStore) {
    this.#secrets = secrets;
  }

  /**
   * TALLY_SERVICE_ID + TALLY_SECRET when both are set (the keychain is then not touched at all),
   * otherwise the keychain; null when neither has credentials. Only one of the two variables set is a
   * ConfigError, because silently mixing sources would send one project's secret with another's ID.
   */
  async load(env: NodeJS.ProcessEnv = process.env): Promise<Credentials | null> {
    const fromEnv = credentialsFromEnv(env);
    if (fromEnv) return fromEnv;
    return this.#readStored();
  }

  /** Stores both values in the keychain, replacing what was there. */
  async save(credentials: Credentials): Promise<void> {
    const serviceId = credentials.serviceId.trim();
    const secret = credentials.secret.trim();
    if (!serviceId || !secret) throw new ConfigError(note('credentialsBoth'));
    registerSecret(secret);
    await this.#secrets.set(PROJECT_ACCOUNT, JSON.stringify({ serviceId, secret }));
  }

  /** Removes the stored project credentials; resolves false when there were none. */
  async clear(): Promise<boolean> {
    return this.#secrets.delete(PROJECT_ACCOUNT);
  }

  /** Whether credentials are available from the environment or the keychain. */
  async hasCredentials(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
    return (await this.load(env)) !== null;
  }

  /** The service ID in use (safe to show), or null. */
  async serviceId(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
    return (await this.load(env))?.serviceId ?? null;
  }

  /** Only what the keychain holds, ignoring the environment. */
  async stored(): Promise<Credentials | null> {
    return this.#readStored();
  }

  async getToken(name: TokenName): Promise<string | null> {
    const value = await this.#secrets.get(TOKEN_PREFIX + name);
    registerStoredToken(value);
    return value;
  }

  async setToken(name: TokenName, value: string): Promise<void> {
    const trimmed = value.trim();
    if (!trimmed) throw new ConfigError(`The ${name} token is empty.`);
    registerStoredToken(trimmed);
    await this.#secrets.set(TOKEN_PREFIX + name, trimmed);
  }

  async deleteToken(name: TokenName): Promise<boolean> {
    return this.#secrets.delete(TOKEN_PREFIX + name);
  }

  async #readStored(): Promise<Credentials | null> {
    const raw = await this.#secrets.get(PROJECT_ACCOUNT);
    if (raw === null) return null;
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (
        typeof parsed === 'object' &&
        parsed !== null &&
        typeof (parsed as Credentials).serviceId === 'string' &&
        typeof (parsed as Credentials).secret === 'string' &&
        (parsed as Credentials).serviceId &&
        (parsed as Credentials).secret
      ) {
        registerSecret((parsed as Credentials).secret);
        return { serviceId: (parsed as Credentials).serviceId, secret: (parsed as Credentials).secret };
      }
    } catch {
      // Falls through: the message below must not quote the stored value.
    }
    throw new ConfigError(note('keychainDamaged'));
  }
}

/**
 * Registers a keychain token with the redactor: the value itself, and, for an entry that is a JSON object (the
 * team's `{server, user, password, token}`), each of its fields but the server it is bound to.
 */
function registerStoredToken(value: string | null): void {
  if (value === null) return;
  registerSecret(value);
  try {
    const parsed = JSON.parse(value) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return;
    for (const [field, v] of Object.entries(parsed)) if (field !== 'server' && typeof v === 'string') registerSecret(v);
  } catch {
    // A plain token: registered as it is.
  }
}

/** Credentials from TALLY_SERVICE_ID and TALLY_SECRET, null when neither is set. */
export function credentialsFromEnv(env: NodeJS.ProcessEnv): Credentials | null {
  const serviceId = env.TALLY_SERVICE_ID?.trim() ?? '';
  const secret = env.TALLY_SECRET?.trim() ?? '';
  registerSecret(secret);
  if (serviceId && secret) return { serviceId, secret };
  if (serviceId || secret) {
    const missing = serviceId ? 'TALLY_SECRET' : 'TALLY_SERVICE_ID';
    throw new ConfigError(`${missing} is not set: set both TALLY_SERVICE_ID and TALLY_SECRET, or neither.`);
  }
  return null;
}
