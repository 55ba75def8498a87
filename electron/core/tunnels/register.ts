/**
 * Registers the public webhook URL with the service (admin API `recordhook`), so the producer does not
 * have to paste a changing tunnel URL into the console. The last registered URL is remembered on disk so a
 * restart that gets the same URL back (ngrok static domain, own URL) does not call the service again. Whether
 * the channel lifecycle hook was set with it is remembered too: a record from before the hook existed, or one
 * whose hook call failed, gets the hook (and only the hook) set again, failures retried with backoff.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { note } from '../notes.js';
import { RetryLoop } from '../retry-loop.js';
import { systemClock } from '../time.js';
import { BadCredentialsError, ConfigError, ValidationError } from '../errors.js';
import type { TunnelStatus } from './types.js';
import type { UrlChange } from './supervisor.js';

/** The admin API call this needs; `ChannelApi` in api-client.ts provides it. */
export interface RecordHookApi {
  setRecordHook(url: string): Promise<void>;
  /** The channel lifecycle hook (admin API `webhook`); set to the same URL when the client offers it. */
  setChannelHook?(url: string): Promise<void>;
}

export interface Registration {
  url: string;
  /** Who the URL was registered for (e.g. service ID and admin host); null when the caller gave none. */
  scope: string | null;
  registeredAt: string;
  /** Whether the channel lifecycle hook points at `url` too; false in records written before the hook existed. */
  channelHookSet: boolean;
  /** Why the channel lifecycle hook could not be set with it (the recording webhook was), else null. */
  channelHookError: string | null;
}

/** File in the state directory holding the last registration. */
export const REGISTRATION_FILE = 'webhook-registration.json';

const RegistrationV1Schema = z.object({
  version: z.literal(1),
  url: z.string().min(1).max(4096),
  scope: z.string().max(1024).nullable(),
  registeredAt: z.string(),
});
/** Version 2 adds the channel lifecycle hook's outcome; version 1 records read as "hook not set". */
const RegistrationSchema = z.discriminatedUnion('version', [
  RegistrationV1Schema,
  RegistrationV1Schema.extend({
    version: z.literal(2),
    channelHookSet: z.boolean(),
    channelHookError: z.string().max(4096).nullable(),
  }),
]);
const REGISTRATION_VERSION = 2;

/**
 * Checks that a webhook URL is something the service can call: absolute http(s), no credentials.
 * @throws ValidationError
 */
export function assertWebhookUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError(['url'], 'The webhook URL to register is not a URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ValidationError(['url'], 'The webhook URL to register must be an http(s) URL.');
  }
  if (url.username !== '' || url.password !== '') {
    throw new ValidationError(['url'], 'The webhook URL to register must not contain a user name or password.');
  }
  // The text itself, not url.href: it is compared with the supervisor's URL to skip repeat registrations.
  return value;
}

/**
 * Sets the service's recording-complete webhook to `publicWebhookUrl`, then its channel lifecycle hook to the
 * same URL (the receiver tells the two apart). Errors of the recording webhook call (BadCredentialsError,
 * ServiceError, NetworkError...) pass through unchanged; a failed lifecycle hook only costs instant live updates
 * (polling goes on), so it is reported in `channelHookError` instead.
 */
export async function registerWebhook(options: {
  api: RecordHookApi;
  publicWebhookUrl: string;
  now?: () => Date;
}): Promise<{ url: string; registeredAt: string; channelHookError: string | null }> {
  const url = assertWebhookUrl(options.publicWebhookUrl);
  await options.api.setRecordHook(url);
  let channelHookError: string | null = null;
  if (options.api.setChannelHook) {
    try {
      await options.api.setChannelHook(url);
    } catch (error) {
      channelHookError = error instanceof Error ? error.message : String(error);
    }
  }
  return { url, registeredAt: (options.now ?? (() => new Date()))().toISOString(), channelHookError };
}

/** Reads the last registration, or null when there is none or the file is unreadable. */
export async function readRegistration(stateDir: string): Promise<Registration | null> {
  let text: string;
  try {
    text = await readFile(join(stateDir, REGISTRATION_FILE), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = RegistrationSchema.safeParse(JSON.parse(text));
    if (!parsed.success) return null;
    const { url, scope, registeredAt } = parsed.data;
    return parsed.data.version === 1
      ? { url, scope, registeredAt, channelHookSet: false, channelHookError: null }
      : {
          url,
          scope,
          registeredAt,
          channelHookSet: parsed.data.channelHookSet,
          channelHookError: parsed.data.channelHookError,
        };
  } catch {
    return null;
  }
}

/** Writes the registration atomically (temp file + rename) so a crash never leaves half a file. */
export async function writeRegistration(stateDir: string, registration: Registration): Promise<void> {
  await mkdir(stateDir, { recursive: true });
  const target = join(stateDir, REGISTRATION_FILE);
  const temp = join(stateDir, `.${REGISTRATION_FILE}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, `${JSON.stringify({ version: REGISTRATION_VERSION, ...registration }, null, 2)}\n`, {
      mode: 0o600,
    });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    throw error;
  }
}

/** What the registrar listens to; `TunnelSupervisor` fits. */
export interface RegistrationSource {
  on(event: 'url-changed', listener: (change: UrlChange) => void): unknown;
  on(event: 'status', listener: (status: TunnelStatus) => void): unknown;
  off(event: 'url-changed', listener: (change: UrlChange) => void): unknown;
  off(event: 'status', listener: (status: TunnelStatus) => void): unknown;
  setRegisteredUrl?(url: string | null): void;
  readonly status?: TunnelStatus;
}

export interface AutoRegistrarOptions {
  api: RecordHookApi;
  /** Directory for the state file (created when needed). */
  stateDir: string;
  enabled: boolean;
  /** Identifies the project the URL is registered for; a different scope registers again. */
  scope?: string | null;
  now?: () => Date;
  /** Backoff of a failed channel lifecycle hook call: first wait, doubled per failure up to the cap. */
  channelHookRetry?: { baseMs: number; maxMs: number };
}

/** The service being briefly unavailable should not cost long; a lasting refusal should not spam it. */
const CHANNEL_HOOK_RETRY = { baseMs: 30_000, maxMs: 30 * 60_000 };

/** One attempt to set the channel lifecycle hook: `error` null when it is set, `retryInMs` null when none follows. */
export interface ChannelHookAttempt {
  url: string;
  error: string | null;
  retryInMs: number | null;
}

export interface AutoRegistrarEvents {
  registered: [registration: Registration];
  failed: [info: { url: string; error: Error }];
  'channel-hook': [attempt: ChannelHookAttempt];
}

/**
 * Registers every new public webhook URL (on `url-changed` and on the first `reachable`), once per URL.
 * Failures are emitted as `failed` with the API client's typed error; transient ones are retried on the
 * next successful self-check, credential and configuration errors only on the next URL change or
 * `registerNow()`. A URL on record whose channel lifecycle hook is not set gets the hook alone; a failed hook
 * call is retried with backoff (and emits `channel-hook` each time), a later success emits `registered` again.
 */
export class AutoRegistrar extends EventEmitter<AutoRegistrarEvents> {
  readonly #api: RecordHookApi;
  readonly #stateDir: string;
  readonly #scope: string | null;
  readonly #now: () => Date;
  #enabled: boolean;
  #state: Promise<Registration | null> | null = null;
  #queue: Promise<void> = Promise.resolve();
  /** The URL the latest event asked for; queued work for an older URL is skipped. */
  #wanted: string | null = null;
  /** The URL queued or being registered by `#want`. */
  #pending: string | null = null;
  /** A URL that failed with an error retrying cannot fix. */
  #blocked: string | null = null;
  #source: RegistrationSource | null = null;
  #lastError: Error | null = null;
  /** Sets the channel lifecycle hook again after a failed call. */
  readonly #hookRetry: RetryLoop;

  constructor(options: AutoRegistrarOptions) {
    super();
    // Without a listener a failed registration would throw from emit.
    this.on('failed', () => {});
    this.#api = options.api;
    this.#stateDir = options.stateDir;
    this.#scope = options.scope ?? null;
    this.#now = options.now ?? (() => new Date());
    this.#enabled = options.enabled;
    this.#hookRetry = new RetryLoop({ policy: options.channelHookRetry ?? CHANNEL_HOOK_RETRY, clock: systemClock });
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  /** The error of the last failed registration, cleared by the next success. */
  get lastError(): Error | null {
    return this.#lastError;
  }

  /** Turns auto-registration on or off; turning it on registers the current URL if it is new. */
  setEnabled(enabled: boolean): void {
    this.#enabled = enabled;
    this.#blocked = null;
    this.#cancelHookRetry();
    const current = this.#source?.status?.publicUrl ?? null;
    if (enabled && current !== null) this.#want(current);
  }

  /** Listens to a supervisor; returns the function that detaches. */
  attach(source: RegistrationSource): () => void {
    this.#source = source;
    const onUrl = (change: UrlChange): void => {
      this.#blocked = null;
      if (change.current !== null) this.#want(change.current);
    };
    const onStatus = (status: TunnelStatus): void => {
      // Every successful check re-announces the URL; only one not yet registered needs work.
      if (status.state !== 'reachable' || status.publicUrl === null || status.registered) return;
      if (status.publicUrl === this.#blocked || status.publicUrl === this.#pending) return;
      this.#want(status.publicUrl);
    };
    source.on('url-changed', onUrl);
    source.on('status', onStatus);
    // Tell the supervisor right away if its URL is the one on record (and set its hook if that is missing).
    void this.lastRegistered().then((last) => {
      if (last !== null && this.#source === source && this.#matches(last, source.status?.publicUrl ?? null)) {
        source.setRegisteredUrl?.(last.url);
        if (this.#needsHook(last)) this.#want(last.url);
      }
    });
    return () => {
      source.off('url-changed', onUrl);
      source.off('status', onStatus);
      if (this.#source === source) {
        this.#source = null;
        this.#cancelHookRetry();
      }
    };
  }

  /** The last successful registration (from disk on first use). */
  lastRegistered(): Promise<Registration | null> {
    this.#state ??= readRegistration(this.#stateDir);
    return this.#state;
  }

  /**
   * Registers `url` (default: the attached supervisor's current URL) now, even if it is on record: the
   * console may have been edited by hand. Rejects with the API client's error.
   */
  registerNow(url?: string): Promise<Registration> {
    const target = url ?? this.#source?.status?.publicUrl ?? null;
    if (target === null) {
      return Promise.reject(new ConfigError(note('webhookNoUrlYet')));
    }
    this.#wanted = target;
    const run = this.#queue.then(() => this.#register(target));
    this.#queue = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /** Resolves when queued registrations have finished (for shutdown and tests). */
  async idle(): Promise<void> {
    let seen: Promise<void>;
    do {
      seen = this.#queue;
      await seen;
    } while (seen !== this.#queue);
  }

  #want(url: string): void {
    if (!this.#enabled) return;
    this.#wanted = url;
    this.#pending = url;
    this.#queue = this.#queue.then(async () => {
      try {
        if (!this.#enabled || this.#wanted !== url) return;
        const last = await this.lastRegistered();
        if (last !== null && this.#matches(last, url)) {
          this.#source?.setRegisteredUrl?.(url);
          // A pending retry owns the hook: calling now would defeat its backoff.
          if (this.#needsHook(last) && !this.#hookRetry.pending) await this.#setChannelHook(last);
          return;
        }
        // Not lost: #register has emitted `failed` (shown by both faces) and kept it as lastError.
        await this.#register(url).catch(() => {});
      } finally {
        if (this.#pending === url) this.#pending = null;
      }
    });
  }

  #matches(last: Registration, url: string | null): boolean {
    return url !== null && last.url === url && last.scope === this.#scope;
  }

  /** True when the client can set the channel lifecycle hook and `last` says it is not set. */
  #needsHook(last: Registration): boolean {
    return this.#api.setChannelHook !== undefined && !last.channelHookSet;
  }

  async #register(url: string): Promise<Registration> {
    this.#cancelHookRetry();
    try {
      const done = await registerWebhook({ api: this.#api, publicWebhookUrl: url, now: this.#now });
      const registration: Registration = {
        url: done.url,
        scope: this.#scope,
        registeredAt: done.registeredAt,
        channelHookSet: this.#api.setChannelHook !== undefined && done.channelHookError === null,
        channelHookError: done.channelHookError,
      };
      this.#lastError = null;
      this.#blocked = null;
      await this.#remember(registration);
      this.#source?.setRegisteredUrl?.(registration.url);
      this.emit('registered', registration);
      if (this.#api.setChannelHook) this.#hookOutcome(registration);
      return registration;
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      this.#lastError = failure;
      if (isPermanent(failure)) this.#blocked = url;
      this.emit('failed', { url, error: failure });
      throw failure;
    }
  }

  /** Sets only the channel lifecycle hook of the registration on record (its recording webhook is in place). */
  async #setChannelHook(last: Registration): Promise<void> {
    let error: string | null = null;
    try {
      await this.#api.setChannelHook?.(last.url);
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    }
    // A newer URL was asked for meanwhile: its own registration sets the hook.
    if (this.#wanted !== last.url) return;
    const registration: Registration = { ...last, channelHookSet: error === null, channelHookError: error };
    await this.#remember(registration);
    if (error === null) this.emit('registered', registration);
    this.#hookOutcome(registration);
  }

  async #remember(registration: Registration): Promise<void> {
    this.#state = Promise.resolve(registration);
    await writeRegistration(this.#stateDir, registration).catch((error: unknown) => {
      // The service has the URL; failing to remember it only costs a repeat call after a restart.
      this.#lastError = error instanceof Error ? error : new Error(String(error));
    });
  }

  /** Reports a hook attempt and, after a failure, schedules the next one. */
  #hookOutcome(registration: Registration): void {
    const { url } = registration;
    if (registration.channelHookSet) {
      this.#hookRetry.reset();
      this.emit('channel-hook', { url, error: null, retryInMs: null });
      return;
    }
    const scheduled = this.#hookRetry.retry(() => {
      if (!this.#enabled || this.#wanted !== url) return;
      this.#queue = this.#queue.then(async () => {
        const last = await this.lastRegistered();
        if (last !== null && this.#matches(last, url) && this.#needsHook(last)) await this.#setChannelHook(last);
      });
    });
    this.emit('channel-hook', { url, error: registration.channelHookError, retryInMs: scheduled?.delayMs ?? null });
  }

  #cancelHookRetry(): void {
    this.#hookRetry.reset();
  }
}

function isPermanent(error: Error): boolean {
  return error instanceof BadCredentialsError || error instanceof ConfigError || error instanceof ValidationError;
}
