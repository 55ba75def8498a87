/**
 * Which URLs Tally may ever download. Webhooks are unauthenticated (a token in the path is all we have), so a
 * URL in a webhook is attacker-controlled text: without this policy a forged webhook could make the app fetch
 * `http://169.254.169.254/...` or a file on a LAN box and save it as a "recording". Every download, every
 * redirect hop and every DNS answer goes through here.
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupAllOptions, LookupOneOptions, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { DEFAULT_DOWNLOAD_ORIGINS } from '../endpoints.js';
import { TallyError, ValidationError } from '../errors.js';

/** Outcome of a policy check: the parsed URL to use, or a reason written for a producer. */
export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** Environment variable holding a comma-separated list of allowed download origins. */
export const DOWNLOAD_ORIGINS_ENV = 'TALLY_DOWNLOAD_ORIGINS';

/** Longer URLs are refused: presigned S3 URLs stay well under 2 KiB, and the URL ends up in the journal. */
export const MAX_URL_LENGTH = 8192;

/** Why an IP address is not a public unicast address, or null when it is one. */
export type AddressCategory =
  | 'loopback'
  | 'link-local'
  | 'private'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'shared (carrier-grade NAT)'
  | 'broadcast';

/**
 * A DNS answer pointed at an address the policy refuses (DNS rebinding or a misconfigured name), or a host name
 * the policy does not allow at all (address '-').
 */
export class AddressRefusedError extends TallyError {
  readonly code = 'address_refused';
  /**
   * Whether asking again may give another answer: a captive portal, a split-horizon VPN or a DNS hiccup answers a
   * private address for a while, then the public one again. Only a name the rules refuse is final.
   */
  readonly transient: boolean;
  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly category: AddressCategory | 'not allowed',
  ) {
    super(
      `Refused to connect to ${hostname}: it resolves to ${address}, a ${category} address. ` +
        'Recordings are only downloaded from public addresses unless that exact origin is allowed.',
    );
    this.transient = address !== '-';
  }
}

/** `dns.lookup`-compatible signature accepted by `http.Agent`'s `lookup` and got's `dnsLookup`. */
export type LookupFunction = {
  (
    hostname: string,
    options: LookupAllOptions,
    callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ): void;
  (
    hostname: string,
    options: LookupOneOptions | number,
    callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
  ): void;
  (
    hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void;
  (hostname: string, callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void): void;
};

/** The resolver behind `lookup`: `dns.lookup` asked for all addresses. A constructor option for tests. */
export type Resolver = (
  hostname: string,
  options: { all: true; family?: number; hints?: number },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

interface OriginRule {
  /** As written in the configuration (trimmed), for messages. */
  source: string;
  protocol: 'http:' | 'https:';
  /** Lowercase hostname; for wildcards the suffix after `*.`; IPv6 in brackets as WHATWG URL prints it. */
  host: string;
  /** '' for the scheme's default port, as `URL.port` gives it. */
  port: string;
  wildcard: boolean;
}

export interface DownloadOriginPolicyOptions {
  /** Test seam: replaces `dns.lookup` behind `lookup` / `lookupFor`. */
  resolver?: Resolver;
}

/**
 * Allow-list of download origins. Exact origins (`https://s3.amazonaws.com`) and wildcard subdomains
 * (`https://*.s3.amazonaws.com`, matching one or more labels in front of the suffix, never the bare suffix).
 * Internal addresses (loopback, private, link-local...) are refused unless that literal IP origin is listed
 * (or, for loopback only, a `localhost` origin): this is what lets tests use `http://127.0.0.1:PORT`.
 */
export class DownloadOriginPolicy {
  readonly #rules: readonly OriginRule[];
  readonly #resolver: Resolver;

  /** @throws ValidationError naming the bad entry when an origin cannot be used. */
  constructor(origins: readonly string[], options: DownloadOriginPolicyOptions = {}) {
    const rules = origins.map((entry) => entry.trim()).filter((entry) => entry !== '');
    if (rules.length === 0) {
      throw new ValidationError([DOWNLOAD_ORIGINS_ENV], 'The list of allowed download origins is empty.');
    }
    this.#rules = Object.freeze(rules.map(parseOriginRule));
    this.#resolver = options.resolver ?? ((hostname, opts, callback) => dnsLookup(hostname, opts, callback));
  }

  /**
   * Reads `TALLY_DOWNLOAD_ORIGINS` (comma-separated); when unset or blank uses `fallback` (e.g. a setting),
   * then the documented default.
   * @throws ValidationError when an entry is not a usable origin.
   */
  static fromEnv(
    env: NodeJS.ProcessEnv = process.env,
    fallback?: readonly string[] | null,
    options?: DownloadOriginPolicyOptions,
  ): DownloadOriginPolicy {
    const raw = env[DOWNLOAD_ORIGINS_ENV];
    if (raw !== undefined && raw.trim() !== '') return new DownloadOriginPolicy(raw.split(','), options);
    if (fallback && fallback.length > 0) return new DownloadOriginPolicy(fallback, options);
    return new DownloadOriginPolicy(DEFAULT_DOWNLOAD_ORIGINS, options);
  }

  /** The allowed origins as configured (normalised), e.g. for a settings screen. */
  get origins(): string[] {
    return this.#rules.map(
      (rule) => `${rule.protocol}//${rule.wildcard ? '*.' : ''}${rule.host}${rule.port ? `:${rule.port}` : ''}`,
    );
  }

  /** Whether `url` may be downloaded. Never throws. */
  check(input: string | URL): UrlCheck {
    const text = typeof input === 'string' ? input : input.href;
    if (text.length > MAX_URL_LENGTH) return refuse(`the URL is longer than ${MAX_URL_LENGTH} characters`);
    let url: URL;
    try {
      // A URL object is already parsed: read as it is (a webhook's URL is parsed once, see the receiver).
      url = typeof input === 'string' ? new URL(text) : input;
    } catch {
      return refuse('the URL is not a valid absolute URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      return refuse(`${url.protocol.replace(/:$/, '')}: URLs are never downloaded, only http(s)`);
    }
    if (url.username !== '' || url.password !== '') return refuse('the URL carries a user name or password');
    const rule = this.#match(url);
    const address = ipLiteral(url.hostname);
    if (address !== null) {
      const category = classifyAddress(address);
      // An IP literal can only match an exact rule for that very literal, so `rule` implies explicit consent.
      if (category !== null && !rule) return refuse(`the URL points at a ${category} address (${url.hostname})`);
    }
    if (!rule) {
      const sameHost = this.#rules.some((r) => hostMatches(r, url.hostname) && r.port === url.port);
      if (sameHost && url.protocol === 'http:') return refuse(`plain http is not allowed for ${url.host}`);
      return refuse(`${url.origin} is not an allowed download origin (allowed: ${this.origins.join(', ')})`);
    }
    return { ok: true, url };
  }

  /**
   * Checks a redirect hop: `location` is resolved against `from` and must pass `check`. A downgrade from https
   * to http is refused even when both origins are allowed, so a redirect cannot strip transport security.
   */
  checkRedirect(from: URL, location: string): UrlCheck {
    let next: URL;
    try {
      next = new URL(location, from);
    } catch {
      return refuse('the redirect location is not a valid URL');
    }
    if (from.protocol === 'https:' && next.protocol === 'http:') return refuse('redirect from https to plain http');
    const result = this.check(next);
    return result.ok ? result : refuse(`redirect refused: ${result.reason}`);
  }

  /**
   * A `dns.lookup` replacement for every download connection (got `dnsLookup`, `http.Agent` `lookup`). It only
   * sees a host name, so it decides from the rules naming that host: internal answers are refused unless an exact
   * rule names that IP literal, or `localhost` for loopback answers. Refused answers are dropped; when none is left
   * the callback gets an AddressRefusedError. This defeats DNS rebinding of an allowed (wildcard) name.
   */
  readonly lookup: LookupFunction = ((
    hostname: string,
    optionsOrCallback: LookupOptions | number | ((...args: never[]) => void),
    maybeCallback?: (...args: never[]) => void,
  ) => {
    const callback = (typeof optionsOrCallback === 'function' ? optionsOrCallback : maybeCallback) as (
      err: NodeJS.ErrnoException | null,
      address?: string | LookupAddress[],
      family?: number,
    ) => void;
    const options: LookupOptions =
      typeof optionsOrCallback === 'number'
        ? { family: optionsOrCallback }
        : typeof optionsOrCallback === 'object' && optionsOrCallback !== null
          ? optionsOrCallback
          : {};
    this.#lookup(hostname, options, callback);
  }) as LookupFunction;

  /**
   * The same lookup, bound to one request URL: it first re-checks the URL (so a caller that forgot `check` still
   * cannot reach a forbidden origin) and refuses any host name other than the URL's own.
   */
  lookupFor(url: URL): LookupFunction {
    const verdict = this.check(url);
    const expected = url.hostname.toLowerCase();
    return ((hostname: string, optionsOrCallback: unknown, maybeCallback?: unknown) => {
      const callback = (typeof optionsOrCallback === 'function' ? optionsOrCallback : maybeCallback) as (
        err: NodeJS.ErrnoException | null,
      ) => void;
      if (!verdict.ok) return process.nextTick(callback, new AddressRefusedError(hostname, '-', 'not allowed'));
      if (hostname.toLowerCase() !== stripBrackets(expected)) {
        return process.nextTick(callback, new AddressRefusedError(hostname, '-', 'not allowed'));
      }
      (this.lookup as (...args: unknown[]) => void)(hostname, optionsOrCallback, maybeCallback);
    }) as LookupFunction;
  }

  #lookup(
    hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void,
  ): void {
    const name = hostname.toLowerCase();
    const rules = this.#rules.filter((rule) => hostMatches(rule, name));
    if (rules.length === 0) {
      process.nextTick(callback, new AddressRefusedError(hostname, '-', 'not allowed'));
      return;
    }
    const request: { all: true; family?: number; hints?: number } = { all: true };
    if (options.family !== undefined) request.family = familyNumber(options.family);
    if (options.hints !== undefined) request.hints = options.hints;
    this.#resolver(hostname, request, (err, addresses) => {
      if (err) return callback(err);
      const allowed: LookupAddress[] = [];
      let firstRefused: AddressRefusedError | null = null;
      for (const entry of addresses) {
        const parsed = parseIp(entry.address);
        const category = parsed ? classifyBytes(parsed) : 'reserved';
        if (category === null || rules.some((rule) => permitsInternal(rule, parsed, category))) allowed.push(entry);
        else firstRefused ??= new AddressRefusedError(hostname, entry.address, category);
      }
      if (allowed.length === 0) {
        const error: NodeJS.ErrnoException =
          firstRefused ?? Object.assign(new Error(`No address found for ${hostname}.`), { code: 'ENOTFOUND' });
        return callback(error);
      }
      if (options.all) return callback(null, allowed);
      const first = allowed[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  }

  #match(url: URL): OriginRule | undefined {
    return this.#rules.find(
      (rule) => rule.protocol === url.protocol && rule.port === url.port && hostMatches(rule, url.hostname),
    );
  }
}

function refuse(reason: string): UrlCheck {
  return { ok: false, reason };
}

function familyNumber(family: number | string): number {
  if (family === 'IPv4') return 4;
  if (family === 'IPv6') return 6;
  return typeof family === 'number' ? family : 0;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function hostMatches(rule: OriginRule, hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (!rule.wildcard) return host === rule.host || stripBrackets(host) === stripBrackets(rule.host);
  // Label boundary: `evils3.amazonaws.com` must not match `*.s3.amazonaws.com`.
  return host.length > rule.host.length + 1 && host.endsWith(`.${rule.host}`);
}

/** Loopback/private answers are allowed only for a rule that names them explicitly. */
function permitsInternal(rule: OriginRule, address: Uint8Array | null, category: AddressCategory): boolean {
  if (rule.wildcard || address === null) return false;
  const literal = parseIp(stripBrackets(rule.host));
  if (literal) return sameAddress(literal, address);
  return category === 'loopback' && (rule.host === 'localhost' || rule.host.endsWith('.localhost'));
}

function parseOriginRule(entry: string): OriginRule {
  const bad = (why: string): never => {
    throw new ValidationError(
      [DOWNLOAD_ORIGINS_ENV],
      `"${entry}" is not a usable download origin: ${why}. Write origins like https://s3.amazonaws.com or https://*.s3.amazonaws.com, separated by commas.`,
    );
  };
  const wildcard = /^[a-z][a-z0-9+.-]*:\/\/\*\./i.test(entry);
  const text = wildcard ? entry.replace('*.', '') : entry;
  if (text.includes('*')) bad('a wildcard may only be the first label, as in https://*.example.com');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return bad('it is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') bad('only http and https origins are allowed');
  if (url.username !== '' || url.password !== '') bad('it must not contain a user name or password');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '' || /[?#]/.test(text)) {
    bad('an origin has no path, query or fragment');
  }
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/?$/i.test(text)) bad('an origin has no path, query or fragment');
  if (url.hostname === '') bad('it has no host');
  if (wildcard) {
    if (ipLiteral(url.hostname) !== null) bad('a wildcard cannot precede an IP address');
    if (!url.hostname.includes('.')) bad('a wildcard needs a suffix of at least two labels');
  }
  return {
    source: entry,
    protocol: url.protocol as 'http:' | 'https:',
    host: url.hostname.toLowerCase(),
    port: url.port,
    wildcard,
  };
}

/** The address bytes when `hostname` (as WHATWG URL prints it) is an IP literal, else null. */
function ipLiteral(hostname: string): Uint8Array | null {
  return parseIp(stripBrackets(hostname));
}

/**
 * Classifies an IP address given as text (IPv4 dotted quad or IPv6, any form `net.isIP` accepts, no zone id).
 * Returns null for a public unicast address.
 */
export function classifyAddress(address: string | Uint8Array): AddressCategory | null {
  const bytes = typeof address === 'string' ? parseIp(stripBrackets(address)) : address;
  if (bytes === null) return 'reserved';
  return classifyBytes(bytes);
}

function classifyBytes(bytes: Uint8Array): AddressCategory | null {
  if (bytes.length === 4) return classifyV4(bytes);
  const word = (i: number): number => ((bytes[i * 2] ?? 0) << 8) | (bytes[i * 2 + 1] ?? 0);
  const zeroUpTo = (n: number): boolean => bytes.subarray(0, n).every((b) => b === 0);
  if (zeroUpTo(16)) return 'unspecified';
  if (zeroUpTo(15) && bytes[15] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible (::a.b.c.d) forms reach the embedded address.
  if (zeroUpTo(10) && word(5) === 0xffff) return classifyV4(bytes.subarray(12));
  if (zeroUpTo(12)) return classifyV4(bytes.subarray(12));
  // NAT64 well-known prefix 64:ff9b::/96 and 6to4 2002::/16 also embed an IPv4 address.
  if (word(0) === 0x64 && word(1) === 0xff9b && word(2) === 0 && word(3) === 0 && word(4) === 0 && word(5) === 0) {
    return classifyV4(bytes.subarray(12));
  }
  if (word(0) === 0x2002) return classifyV4(bytes.subarray(2, 6));
  if ((word(0) & 0xffc0) === 0xfe80) return 'link-local';
  if ((word(0) & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((word(0) & 0xfe00) === 0xfc00) return 'private'; // unique local fc00::/7
  if ((word(0) & 0xff00) === 0xff00) return 'multicast';
  if (word(0) === 0x0100 && word(1) === 0 && word(2) === 0 && word(3) === 0) return 'reserved'; // discard 100::/64
  if (word(0) === 0x2001 && word(1) === 0x0db8) return 'reserved'; // documentation
  return null;
}

function classifyV4(b: Uint8Array): AddressCategory | null {
  const [a = 0, b1 = 0, c = 0, d = 0] = b;
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b1 >= 16 && b1 <= 31) || (a === 192 && b1 === 168)) return 'private';
  if (a === 169 && b1 === 254) return 'link-local';
  if (a === 100 && b1 >= 64 && b1 <= 127) return 'shared (carrier-grade NAT)';
  if (a === 255 && b1 === 255 && c === 255 && d === 255) return 'broadcast';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved';
  if (a === 192 && b1 === 0 && (c === 0 || c === 2)) return 'reserved';
  if (a === 198 && (b1 === 18 || b1 === 19)) return 'reserved'; // benchmarking
  if ((a === 198 && b1 === 51 && c === 100) || (a === 203 && b1 === 0 && c === 113)) return 'reserved';
  return null;
}

function sameAddress(x: Uint8Array, y: Uint8Array): boolean {
  const norm = (v: Uint8Array): Uint8Array => {
    // Compare an IPv4-mapped IPv6 answer equal to its IPv4 literal.
    if (v.length === 16 && v.subarray(0, 10).every((b) => b === 0) && v[10] === 0xff && v[11] === 0xff) {
      return v.subarray(12);
    }
    return v;
  };
  const a = norm(x);
  const b = norm(y);
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** Parses a canonical IPv4 dotted quad or an IPv6 address (with optional embedded IPv4 tail) into bytes. */
export function parseIp(text: string): Uint8Array | null {
  const version = isIP(text);
  if (version === 4) return Uint8Array.from(text.split('.').map(Number));
  if (version !== 6) return null;
  let body = text.toLowerCase();
  const zone = body.indexOf('%');
  if (zone >= 0) body = body.slice(0, zone);
  let tail: number[] = [];
  const lastColon = body.lastIndexOf(':');
  const last = body.slice(lastColon + 1);
  if (last.includes('.')) {
    tail = last.split('.').map(Number);
    body = `${body.slice(0, lastColon + 1)}0:0`;
  }
  const [head = '', rest] = body.split('::');
  const headWords = head === '' ? [] : head.split(':');
  const restWords = rest === undefined || rest === '' ? [] : rest.split(':');
  const missing = 8 - headWords.length - restWords.length;
  const words = [...headWords, ...Array<string>(rest === undefined ? 0 : missing).fill('0'), ...restWords];
  if (words.length !== 8) return null;
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    const v = parseInt(w, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  if (tail.length === 4) out.set(tail, 12);
  return out;
}
