/**
 * ngrok through its official SDK (no binary). The authtoken is always passed explicitly: the SDK's
 * `authtoken_from_env` stays off so a stray NGROK_AUTHTOKEN never decides which account is used, and the
 * token never leaves this file except inside the config handed to the SDK. ngrok's own error messages quote
 * the authtoken (ERR_NGROK_105/107 say "Your authtoken: ..."), so every SDK error is rewritten here.
 */
import type * as NgrokModule from '@ngrok/ngrok';
import type { Config as NgrokConfig } from '@ngrok/ngrok';
import { note } from '../notes.js';
import { ConfigError } from '../errors.js';
import { TunnelError, TunnelProviderBase, abortError, hostPort, throwIfAborted } from './types.js';
import type { LocalTarget, TunnelOpenResult } from './types.js';

export type { NgrokConfig };

/** The part of an SDK listener Tally uses. */
export interface NgrokListenerLike {
  url(): string | null;
  close(): Promise<void>;
}

/**
 * The SDK's cloud boundary: `forward` opens a listener at ngrok's edge, `disconnect` closes one by URL.
 * The real module satisfies it; tests pass a loopback fake.
 */
export interface NgrokSdk {
  forward(config: NgrokConfig): Promise<NgrokListenerLike>;
  disconnect(url?: string | null): Promise<void>;
}

// Compile-time proof that the real SDK module fits the injectable boundary.
type _RealSdkFits = typeof NgrokModule extends NgrokSdk ? true : never;
const _realSdkFits: _RealSdkFits = true;
void _realSdkFits;

export interface NgrokTunnelOptions {
  authtoken: string;
  /** A static domain of the account (`name.ngrok-free.app` or a custom one) so the URL survives restarts. */
  domain?: string | null;
  /** Defaults to the real SDK, loaded on first `open` (it is a native module). */
  sdk?: NgrokSdk;
}

/** Names the field where the app takes the authtoken, and the CLI's way to store it. */
export const NGROK_AUTHTOKEN_MISSING = note('ngrokAuthtokenMissing');

const AUTHTOKEN_CODES = new Set(['ERR_NGROK_105', 'ERR_NGROK_106', 'ERR_NGROK_107', 'ERR_NGROK_300', 'ERR_NGROK_4018']);
const DOMAIN_CODES = new Set(['ERR_NGROK_320', 'ERR_NGROK_7117', 'ERR_NGROK_7118']);

/**
 * Accepts `name.ngrok-free.app` as well as a pasted `https://name.ngrok-free.app/`.
 * @throws ConfigError when it is not a host name.
 */
export function normalizeNgrokDomain(value: string): string {
  const text = value
    .trim()
    .replace(/^https?:\/\//i, '')
    .replace(/\/+$/, '')
    .toLowerCase();
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(text)) {
    throw new ConfigError(note('ngrokNotDomain', { domain: value.trim() }));
  }
  return text;
}

/** ngrok via the SDK. One listener at a time; `open` after `close` starts a fresh one. */
export class NgrokTunnel extends TunnelProviderBase {
  readonly kind = 'ngrok' as const;
  readonly domain: string | null;
  readonly #authtoken: string;
  #sdk: NgrokSdk | undefined;
  #listener: NgrokListenerLike | null = null;
  /** Bumped by every open/close so callbacks from an older listener are ignored. */
  #session = 0;

  /** @throws ConfigError when the authtoken is empty or the domain is not a host name. */
  constructor(options: NgrokTunnelOptions) {
    super();
    if (typeof options.authtoken !== 'string' || options.authtoken.trim() === '') {
      throw new ConfigError(NGROK_AUTHTOKEN_MISSING);
    }
    this.#authtoken = options.authtoken.trim();
    this.domain = options.domain ? normalizeNgrokDomain(options.domain) : null;
    this.#sdk = options.sdk;
  }

  async open(local: LocalTarget, signal?: AbortSignal): Promise<TunnelOpenResult> {
    throwIfAborted(signal);
    await this.#closeListener();
    const session = ++this.#session;
    const sdk = await this.#loadSdk();
    const config: NgrokConfig = {
      addr: hostPort(local),
      proto: 'http',
      authtoken: this.#authtoken,
      authtoken_from_env: false,
      forwards_to: 'Tally webhook receiver',
      onStatusChange: (status: string) => {
        // The SDK reports 'closed' when its session to the edge drops; the supervisor reopens.
        if (status === 'closed' && session === this.#session && this.#listener !== null) {
          this.emit('closed', note('ngrokLost'));
        }
      },
    };
    if (this.domain !== null) config.domain = this.domain;

    const forwarding = sdk.forward(config);
    let listener: NgrokListenerLike;
    try {
      listener = await raceAbort(forwarding, signal);
    } catch (error) {
      // A forward that completes after an abort must not leave a listener behind at the edge.
      if (signal?.aborted) void forwarding.then((late) => late.close()).catch(() => {});
      throw this.#rewriteError(error);
    }
    if (session !== this.#session || signal?.aborted) {
      await listener.close().catch(() => {});
      throw signal?.aborted ? abortError(signal) : new TunnelError(note('ngrokClosedOpening'));
    }
    const url = listener.url();
    if (url === null || !/^https?:\/\//i.test(url) || !URL.canParse(url)) {
      await listener.close().catch(() => {});
      throw new TunnelError(note('ngrokNoUrl'));
    }
    this.#listener = listener;
    return { publicBaseUrl: url.replace(/\/+$/, '') };
  }

  async close(): Promise<void> {
    this.#session++;
    await this.#closeListener();
  }

  /** Never reveals the authtoken, whatever inspects the instance. */
  toJSON(): { kind: 'ngrok'; domain: string | null } {
    return { kind: this.kind, domain: this.domain };
  }

  async #closeListener(): Promise<void> {
    const listener = this.#listener;
    this.#listener = null;
    if (listener === null) return;
    try {
      await listener.close();
    } catch {
      // The listener may already be gone with its session; make sure the edge forgets the URL anyway.
      const url = listener.url();
      if (url !== null) await this.#sdk?.disconnect(url).catch(() => {});
    }
  }

  async #loadSdk(): Promise<NgrokSdk> {
    if (this.#sdk === undefined) {
      try {
        this.#sdk = (await import('@ngrok/ngrok')) as NgrokSdk;
      } catch (error) {
        throw new TunnelError(note('ngrokSdkMissing', { detail: redact(describe(error), this.#authtoken) }));
      }
    }
    return this.#sdk;
  }

  /** Turns an SDK error into a TunnelError/ConfigError whose message never contains the authtoken. */
  #rewriteError(error: unknown): Error {
    if (error instanceof Error && error.name === 'AbortError') return error;
    const code = errorCode(error);
    const detail = redact(describe(error), this.#authtoken);
    if (code !== null && AUTHTOKEN_CODES.has(code)) {
      return new ConfigError(note('ngrokAuthtokenRefused', { providerCode: code }));
    }
    if (code !== null && DOMAIN_CODES.has(code)) {
      return new ConfigError(note('ngrokDomainRefused', { domain: this.domain ?? '', providerCode: code }));
    }
    if (code === 'ERR_NGROK_334' || code === 'ERR_NGROK_6025') {
      return new TunnelError(note('ngrokDomainBusy', { domain: this.domain ?? '', providerCode: code }), code);
    }
    if (code === 'ERR_NGROK_108') {
      return new TunnelError(note('ngrokSessionLimit', { providerCode: code }), code);
    }
    // `detail` is the SDK's own English; the popover translates the sentence around it.
    return new TunnelError(
      code ? note('ngrokFailedCode', { providerCode: code, detail }) : note('ngrokFailed', { detail }),
      code,
    );
  }
}

function errorCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const record = error as Record<string, unknown>;
  const code = record['errorCode'] ?? record['code'];
  if (typeof code === 'string' && /^ERR_NGROK_\d+$/.test(code)) return code;
  const match = /ERR_NGROK_\d+/.exec(describe(error));
  return match ? match[0] : null;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Removes every occurrence of `secret`, then shortens the text. Redacting first matters: cutting first
 * could leave half a token behind where no exact match finds it.
 */
export function redact(text: string, secret: string, maxLength = 300): string {
  const clean = secret === '' ? text : text.split(secret).join('[redacted]');
  return clean.length > maxLength ? `${clean.slice(0, maxLength)}...` : clean;
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
