/** The producer's own public URL (`--tunnel https://…`): checked, normalised, and where its host points. */
import { isIP } from 'node:net';
import { note, noteText, type Note } from '../notes.js';
import { ValidationError } from '../errors.js';
import { classifyAddress } from '../net/url-policy.js';
import { TunnelProviderBase } from './types.js';
import type { LocalTarget, TunnelOpenResult } from './types.js';

/** A producer-supplied public URL, checked and normalised. */
export interface ValidatedPublicUrl {
  /** The URL without a trailing slash. */
  url: string;
  /** Set when the URL works but only on this machine or network. */
  warning?: string;
  /** `warning` as a note the popover translates. */
  warningNote?: Note;
}

const LAN_SUFFIXES = ['.local', '.lan', '.home.arpa', '.internal'];

/** Where a hostname points: this machine, the local network, or (as far as we can tell) the internet. */
function reach(hostname: string): 'loopback' | 'lan' | 'internet' | 'invalid' {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) {
    const category = classifyAddress(host);
    if (category === null) return 'internet';
    if (category === 'loopback') return 'loopback';
    // Tailscale and other overlay networks hand out carrier-grade NAT addresses: reachable like a LAN.
    if (category === 'private' || category === 'link-local' || category === 'shared (carrier-grade NAT)') return 'lan';
    return 'invalid';
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  if (!host.includes('.') || LAN_SUFFIXES.some((suffix) => host.endsWith(suffix))) return 'lan';
  return 'internet';
}

/**
 * Checks the public URL a producer gives for the `url` provider (reverse proxy, Tailscale Funnel, a named
 * cloudflared tunnel...). It must be https; plain http is accepted only for loopback or LAN hosts, with a
 * warning. Credentials, query strings and fragments are refused: the caller appends `/hooks/<token>`.
 * @throws ValidationError with a message for the producer.
 */
export function validatePublicUrl(value: string): ValidatedPublicUrl {
  const text = value.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError(['publicUrl'], note('publicUrlNotUrl', { url: text }));
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ValidationError(['publicUrl'], note('publicUrlScheme', { scheme: url.protocol }));
  }
  if (url.username !== '' || url.password !== '') {
    throw new ValidationError(['publicUrl'], note('publicUrlCredentials'));
  }
  if (url.search !== '' || url.hash !== '' || text.includes('?') || text.includes('#')) {
    throw new ValidationError(['publicUrl'], note('publicUrlQuery'));
  }
  if (/\/hooks(\/|$)/.test(url.pathname)) {
    throw new ValidationError(['publicUrl'], note('publicUrlHooks'));
  }
  const where = reach(url.hostname);
  if (where === 'invalid') {
    throw new ValidationError(['publicUrl'], note('publicUrlNowhere', { host: url.hostname }));
  }
  const base = url.href.replace(/\/+$/, '');
  const here = where === 'loopback';
  if (url.protocol === 'http:') {
    if (where === 'internet') {
      throw new ValidationError(['publicUrl'], note('publicUrlNeedsHttps'));
    }
    return warned(base, note(here ? 'plainHttpLoopback' : 'plainHttpLan', { host: url.host }));
  }
  if (where !== 'internet') {
    return warned(base, note(here ? 'hostLoopback' : 'hostLan', { host: url.host }));
  }
  return { url: base };
}

function warned(url: string, warningNote: Note): ValidatedPublicUrl {
  return { url, warning: noteText(warningNote), warningNote };
}

/** The producer's own public URL, forwarded to the receiver by something outside Tally. */
export class UrlTunnel extends TunnelProviderBase {
  readonly kind = 'url' as const;
  readonly #url: ValidatedPublicUrl;

  /** @throws ValidationError when the URL is unusable (checked here so a bad setting fails early). */
  constructor(publicUrl: string) {
    super();
    this.#url = validatePublicUrl(publicUrl);
  }

  get publicBaseUrl(): string {
    return this.#url.url;
  }

  async open(_local: LocalTarget, _signal?: AbortSignal): Promise<TunnelOpenResult> {
    const { url, warning, warningNote } = this.#url;
    return warning === undefined ? { publicBaseUrl: url } : { publicBaseUrl: url, warning, warningNote };
  }

  async close(): Promise<void> {}
}
