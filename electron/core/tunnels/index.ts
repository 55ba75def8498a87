/**
 * Tunnel providers for the webhook receiver: choose one from settings (or the `--tunnel` flag), then hand
 * it to a `TunnelSupervisor`, and optionally an `AutoRegistrar` to keep the service's webhook URL current.
 */
import { note } from '../notes.js';
import { ConfigError, ValidationError } from '../errors.js';
import { LocalTunnel } from './localtunnel.js';
import { NGROK_AUTHTOKEN_MISSING, NgrokTunnel } from './ngrok.js';
import type { NgrokSdk } from './ngrok.js';
import { NoTunnel } from './none.js';
import { UnusableTunnel } from './unusable.js';
import { UrlTunnel, validatePublicUrl } from './url.js';
import type { TunnelKind, TunnelProvider } from './types.js';

export * from './types.js';
export { NoTunnel } from './none.js';
export { UrlTunnel, validatePublicUrl } from './url.js';
export type { ValidatedPublicUrl } from './url.js';
export { NGROK_AUTHTOKEN_MISSING, NgrokTunnel, normalizeNgrokDomain } from './ngrok.js';
export { UnusableTunnel } from './unusable.js';
export type { NgrokSdk, NgrokListenerLike, NgrokTunnelOptions, NgrokConfig } from './ngrok.js';
export { LocalTunnel, DEFAULT_LOCALTUNNEL_HOST, normalizeLocaltunnelHost } from './localtunnel.js';
export type { LocaltunnelOptions } from './localtunnel.js';
export { TunnelSupervisor, checkSelf, DEFAULT_BACKOFF } from './supervisor.js';
export type {
  TunnelSupervisorOptions,
  TunnelSupervisorEvents,
  UrlChange,
  ReconnectScheduled,
  SelfCheckResult,
  SelfCheckOptions,
} from './supervisor.js';
export { tunnelRequest, TunnelHttpError } from './http.js';
export type { ConnectTarget, ConnectToOverride, TunnelHttpOptions, TunnelHttpResponse } from './http.js';
export {
  AutoRegistrar,
  registerWebhook,
  assertWebhookUrl,
  readRegistration,
  writeRegistration,
  REGISTRATION_FILE,
} from './register.js';
export type {
  RecordHookApi,
  Registration,
  RegistrationSource,
  AutoRegistrarOptions,
  AutoRegistrarEvents,
  ChannelHookAttempt,
} from './register.js';

/** The tunnel part of the settings (settings.ts `TunnelSchema`; the contract uses null for unset). */
export interface TunnelSettingsInput {
  provider: TunnelKind;
  publicUrl?: string | null;
  ngrokDomain?: string | null;
  localtunnelHost?: string | null;
}

export interface TunnelDeps {
  /** From the keychain (credentials.ts token `ngrok`) or an explicit flag; never read from the environment here. */
  ngrokAuthtoken?: string | null;
  /** Replaces the ngrok SDK's cloud boundary (tests). */
  ngrokSdk?: NgrokSdk;
}

/**
 * Builds the provider the settings ask for.
 * @throws ConfigError when something the provider needs is missing (authtoken, URL), ValidationError when a
 *   URL is unusable.
 */
export function createTunnelProvider(settings: TunnelSettingsInput, deps: TunnelDeps = {}): TunnelProvider {
  switch (settings.provider) {
    case 'none':
      return new NoTunnel();
    case 'url':
      if (!settings.publicUrl) {
        throw new ConfigError(note('publicUrlMissing'));
      }
      return new UrlTunnel(settings.publicUrl);
    case 'ngrok': {
      const authtoken = deps.ngrokAuthtoken?.trim();
      if (!authtoken) throw new ConfigError(NGROK_AUTHTOKEN_MISSING);
      return new NgrokTunnel({ authtoken, domain: settings.ngrokDomain ?? null, sdk: deps.ngrokSdk });
    }
    case 'localtunnel':
      return new LocalTunnel({ host: settings.localtunnelHost ?? null });
    default:
      throw new ConfigError(
        `Unknown tunnel provider "${String(settings.provider)}". Use none, url, ngrok or localtunnel.`,
      );
  }
}

/**
 * The provider the settings ask for, or, when a setting makes it unusable, a stand-in whose status says which
 * setting to fix (see UnusableTunnel): a tunnel setting must never keep the receiver from starting.
 */
export function tunnelProviderFor(settings: TunnelSettingsInput, deps: TunnelDeps = {}): TunnelProvider {
  try {
    return createTunnelProvider(settings, deps);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof ValidationError) {
      return new UnusableTunnel(settings.provider, error);
    }
    throw error;
  }
}

/** What `--tunnel` selects: a provider name, or the producer's own public URL. */
export type TunnelFlag = { provider: 'none' | 'ngrok' | 'localtunnel' } | { provider: 'url'; publicUrl: string };

/**
 * Parses `--tunnel none|ngrok|localtunnel|<public https URL>`.
 * @throws ValidationError with a message fit for a usage error.
 */
export function parseTunnelFlag(value: string): TunnelFlag {
  const text = value.trim();
  const name = text.toLowerCase();
  if (name === 'none' || name === 'ngrok' || name === 'localtunnel') return { provider: name };
  if (name === 'lt') return { provider: 'localtunnel' };
  if (/^https?:\/\//i.test(text)) return { provider: 'url', publicUrl: validatePublicUrl(text).url };
  if (name === 'url') {
    throw new ValidationError(['--tunnel'], 'Give the public URL itself, e.g. `--tunnel https://tally.example.com`.');
  }
  throw new ValidationError(
    ['--tunnel'],
    `Unknown tunnel "${text}". Use none, ngrok, localtunnel or a public https URL.`,
  );
}
