/**
 * The client of the service's three channel endpoints and its admin API. Every answer is validated and
 * normalised into `Channel`; every failure becomes one of our typed errors. got's own errors are never
 * rethrown or attached as `cause`, because they carry the request options, and those hold the secret.
 */
import { retrying, type BackoffPolicy } from './backoff.js';
import type { Endpoints } from './endpoints.js';
import {
  BadCredentialsError,
  ChannelNotEndedError,
  ResponseShapeError,
  ServiceError,
  UnknownChannelError,
  ValidationError,
} from './errors.js';
import type { Channel, Credentials, SearchResult } from './model.js';
import {
  EndSchema,
  PATHS,
  looksLikeHtml,
  parseLiveList,
  parseSearch,
  saysNotFound,
  saysUnauthorized,
  shapeError,
  summarizeBody,
} from './api-responses.js';
import { parseUnknown } from './validate.js';
import {
  abortReason,
  isNeverSent,
  isTransient,
  markTransient,
  sendRequest,
  type RawResponse,
  type RequestSpec,
} from './api-transport.js';

// The client's module stays the one place callers (and its spec) import the parsers from.
export { parseLiveList, parseSearch, summarizeBody } from './api-responses.js';

/** A search answer, plus whether some matching channels could not be fetched (see `ChannelApi.search`). */
export interface ApiSearchResult extends SearchResult {
  /** True when the service holds more matching channels than could be listed, even after splitting. */
  truncated: boolean;
}

export interface ChannelApiOptions {
  endpoints: Endpoints;
  /** Fixed credentials, or a function asked before every call (so a new login applies at once). */
  credentials: Credentials | (() => Promise<Credentials>);
  /** Per attempt. Default 10 s. */
  timeoutMs?: number;
  /** Extra attempts for reads (live list, search). Default 3. */
  retries?: number;
  /** Base of the exponential backoff; each wait is random in [0, base·2^attempt] ("full jitter"). Default 300 ms. */
  retryBaseMs?: number;
  userAgent?: string;
  /** Aborts every call of this client. */
  signal?: AbortSignal;
  /** Source of jitter, replaceable for tests. */
  random?: () => number;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Recursion limit of search splitting: 44 halvings reach one second from any range a Date can hold. */
const MAX_SPLIT_DEPTH = 48;
/** Hard cap on requests one search may make (the real budget scales with the result size). */
const MAX_SEARCH_REQUESTS = 400;
const MAX_BACKOFF_MS = 10_000;

/** Client of the service. Construct one per set of endpoints; it holds no connection state. */
export class ChannelApi {
  readonly #endpoints: Endpoints;
  readonly #credentials: () => Promise<Credentials>;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #backoff: BackoffPolicy;
  readonly #userAgent: string;
  readonly #signal: AbortSignal | undefined;
  readonly #random: () => number;

  constructor(options: ChannelApiOptions) {
    this.#endpoints = {
      baseUrl: options.endpoints.baseUrl.replace(/\/+$/, ''),
      consoleApiUrl: options.endpoints.consoleApiUrl.replace(/\/+$/, ''),
      adminUrl: options.endpoints.adminUrl.replace(/\/+$/, ''),
    };
    const creds = options.credentials;
    this.#credentials = typeof creds === 'function' ? creds : async () => creds;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#retries = Math.max(0, options.retries ?? 3);
    this.#backoff = { baseMs: Math.max(0, options.retryBaseMs ?? 300), maxMs: MAX_BACKOFF_MS, jitter: 1 };
    this.#userAgent = options.userAgent ?? 'Tally';
    this.#signal = options.signal;
    this.#random = options.random ?? Math.random;
  }

  /** Channels broadcasting now. */
  async listLive(options: CallOptions = {}): Promise<Channel[]> {
    const { serviceId, secret } = await this.#credentials();
    const data = await this.#call(
      {
        endpoint: PATHS.live,
        url: this.#endpoints.baseUrl + PATHS.live,
        method: 'POST',
        body: { serviceId, secret },
        kind: 'read',
      },
      secret,
      options,
    );
    return parseLiveList(data);
  }

  /**
   * Channels in a time range, newest first. The service answers at most some number of items per
   * request while `totalCount` counts them all; when items are missing the range is halved again and
   * again (down to one second) and the answers merged by channel ID. `truncated` says if some could
   * still not be listed.
   */
  async search(q: { since: Date; until: Date; keyword?: string }, options: CallOptions = {}): Promise<ApiSearchResult> {
    if (!(q.since instanceof Date) || Number.isNaN(q.since.getTime())) {
      throw new ValidationError(['since'], 'The start of the search period is not a valid time.');
    }
    if (!(q.until instanceof Date) || Number.isNaN(q.until.getTime())) {
      throw new ValidationError(['until'], 'The end of the search period is not a valid time.');
    }
    if (q.since.getTime() > q.until.getTime()) {
      throw new ValidationError(['since', 'until'], 'The search period starts after it ends.');
    }
    const keyword = q.keyword ?? '';
    const start = Math.floor(q.since.getTime() / 1000);
    const end = Math.ceil(q.until.getTime() / 1000);
    const merged = new Map<string, Channel>();
    let requests = 0;
    let truncated = false;

    const fetchRange = async (from: number, to: number): Promise<SearchResult> => {
      requests += 1;
      const result = await this.#searchOnce(from, to, keyword, options);
      for (const channel of result.channels) merged.set(channel.id, channel);
      return result;
    };

    let budget = MAX_SEARCH_REQUESTS;
    const split = async (from: number, to: number, parentTotal: number, depth: number): Promise<void> => {
      if (to - from <= 1 || depth >= MAX_SPLIT_DEPTH || requests + 2 > budget) {
        truncated = true;
        return;
      }
      // Halves share their boundary second: whether the service's bounds are inclusive is not
      // documented, and the Map removes the duplicates this may bring.
      const mid = from + Math.floor((to - from) / 2);
      const halves = [
        { from, to: mid, result: await fetchRange(from, mid) },
        { from: mid, to, result: await fetchRange(mid, to) },
      ];
      // Both halves as full as the whole: splitting separates nothing (channels spanning the whole
      // range, or a service ignoring the period), and going deeper would only multiply requests.
      if (halves.every((h) => h.result.totalCount >= parentTotal)) {
        truncated = true;
        return;
      }
      for (const half of halves) {
        if (half.result.totalCount > half.result.channels.length) {
          await split(half.from, half.to, half.result.totalCount, depth + 1);
        }
      }
    };

    const first = await fetchRange(start, end);
    if (first.totalCount > first.channels.length) {
      // Enough requests for a well-behaved service to list everything a few times over, and no more.
      const pages = Math.ceil(first.totalCount / Math.max(1, first.channels.length));
      budget = Math.min(MAX_SEARCH_REQUESTS, 20 + 6 * pages);
      await split(start, end, first.totalCount, 0);
    }

    const channels = [...merged.values()].sort(newestFirst);
    const totalCount = Math.max(first.totalCount, channels.length);
    return {
      startTime: first.startTime,
      currentTime: first.currentTime,
      totalCount,
      channels,
      truncated: truncated || channels.length < totalCount,
    };
  }

  async #searchOnce(from: number, to: number, keyword: string, options: CallOptions): Promise<SearchResult> {
    const { serviceId, secret } = await this.#credentials();
    const data = await this.#call(
      {
        endpoint: PATHS.search,
        url: this.#endpoints.consoleApiUrl + PATHS.search,
        method: 'POST',
        body: { serviceId, secret, keyword, starttime: from, endtime: to },
        kind: 'read',
      },
      secret,
      options,
    );
    return parseSearch(data, { startTime: new Date(from * 1000), now: new Date() });
  }

  /**
   * Force-ends a channel. Never resent after the request may have reached the service: ending is not
   * something to do twice by accident, and a second answer could wrongly say "unknown channel".
   */
  async endChannel(id: string, options: CallOptions = {}): Promise<void> {
    if (typeof id !== 'string' || id.length === 0) throw new ValidationError(['channelId'], 'A channel ID is needed.');
    const { serviceId, secret } = await this.#credentials();
    const data = await this.#call(
      {
        endpoint: PATHS.end,
        url: this.#endpoints.baseUrl + PATHS.end,
        method: 'POST',
        body: { serviceId, secret, channelId: id },
        kind: 'write',
      },
      secret,
      options,
      id,
    );
    const { send } = parseUnknown(EndSchema, data, shapeError(PATHS.end));
    if (!send) throw new ChannelNotEndedError(id);
  }

  /** Sets the URL that receives the recording-complete webhook (admin API `recordhook`). */
  async setRecordHook(url: string, options: CallOptions = {}): Promise<void> {
    await this.#putHookUrl('recordhook', url, options);
  }

  /**
   * Sets the channel lifecycle hook (admin API `webhook`): the service then calls `GET <url>?action=create&chid=…`
   * and `?action=close&chid=…`. Like every admin call, any 2xx is success and no body is required.
   */
  async setChannelHook(url: string, options: CallOptions = {}): Promise<void> {
    await this.#putHookUrl('webhook', url, options);
  }

  async #putHookUrl(kind: 'recordhook' | 'webhook', url: string, options: CallOptions): Promise<void> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ValidationError(['url'], 'The webhook URL is not a valid URL.');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new ValidationError(['url'], 'The webhook URL must start with https:// or http://.');
    }
    const { serviceId, secret } = await this.#credentials();
    const path = `/api/${kind}/${encodeURIComponent(serviceId)}`;
    const spec = {
      endpoint: path,
      url: this.#endpoints.adminUrl + path,
      method: 'PUT' as const,
      kind: 'write' as const,
    };
    await this.#call({ ...spec, body: { url }, headers: { secret } }, secret, options);
  }

  /** Turns server-side recording on or off for the project (admin API; the service must have approved it). */
  async setServerRecording(enabled: boolean, options: CallOptions = {}): Promise<void> {
    const { serviceId, secret } = await this.#credentials();
    const path = `/api/record/${encodeURIComponent(serviceId)}/${enabled ? 1 : 0}`;
    await this.#call(
      { endpoint: path, url: this.#endpoints.adminUrl + path, method: 'PUT', headers: { secret }, kind: 'write' },
      secret,
      options,
    );
  }

  /** Checks host and credentials with one live-list call. */
  async testConnection(options: CallOptions = {}): Promise<{ ok: true; liveCount: number }> {
    const live = await this.listLive(options);
    return { ok: true, liveCount: live.length };
  }

  /** One logical call: attempts with backoff, then interpretation of the answer. */
  async #call(spec: RequestSpec, secret: string, options: CallOptions, channelId?: string): Promise<unknown> {
    const signal = combineSignals(this.#signal, options.signal);
    return retrying(
      async () => {
        const response = await sendRequest(spec, { userAgent: this.#userAgent, timeoutMs: this.#timeoutMs }, signal);
        return interpret(spec, response, secret, channelId);
      },
      {
        policy: this.#backoff,
        retries: this.#retries,
        // Reads are retried on anything transient; writes only when they never left this machine.
        shouldRetry: (error) =>
          error instanceof Error && (isNeverSent(error) || (spec.kind === 'read' && isTransient(error))),
        random: this.#random,
        ...(signal ? { signal, aborted: () => abortReason(signal) } : {}),
      },
    );
  }
}

function newestFirst(a: Channel, b: Channel): number {
  const diff = b.createdAt.getTime() - a.createdAt.getTime();
  if (diff !== 0) return diff;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Status and body → parsed JSON, or the typed error the answer means. */
function interpret(spec: RequestSpec, res: RawResponse, secret: string, channelId?: string): unknown {
  const html = looksLikeHtml(res.text, res.contentType);
  let json: unknown = undefined;
  let jsonOk = false;
  if (res.text.trim() && !html) {
    try {
      json = JSON.parse(res.text) as unknown;
      jsonOk = true;
    } catch {
      jsonOk = false;
    }
  }

  if (res.status === 401 || res.status === 403) throw new BadCredentialsError();
  if (res.status < 200 || res.status >= 300) {
    if (jsonOk && saysUnauthorized(json)) throw new BadCredentialsError();
    if (channelId !== undefined && ((res.status === 404 && !html) || (jsonOk && saysNotFound(json)))) {
      throw new UnknownChannelError(channelId);
    }
    const error = new ServiceError(res.status, summarizeBody(res.text, res.contentType, secret), spec.endpoint);
    if (res.status >= 500 || res.status === 429 || res.status === 408) markTransient(error);
    throw error;
  }

  // 2xx from here on.
  if (spec.method === 'PUT') {
    // The admin API's answers are undocumented: any 2xx is success unless the body says otherwise.
    if (jsonOk && saysUnauthorized(json)) throw new BadCredentialsError();
    return jsonOk ? json : null;
  }
  if (!res.text.trim()) {
    throw new ResponseShapeError(spec.endpoint, [], `the body was empty (status ${res.status}).`);
  }
  if (html) {
    throw new ResponseShapeError(
      spec.endpoint,
      [],
      `expected JSON but got ${summarizeBody(res.text, res.contentType, secret)}.`,
    );
  }
  if (!jsonOk) {
    const error = new ResponseShapeError(
      spec.endpoint,
      [],
      `expected JSON but got "${summarizeBody(res.text, res.contentType, secret)}".`,
    );
    // Unparseable JSON on a read is usually a cut-off body; another attempt is harmless.
    markTransient(error);
    throw error;
  }
  if (saysUnauthorized(json) && !isExpectedShape(spec, json)) throw new BadCredentialsError();
  if (channelId !== undefined && saysNotFound(json) && !isExpectedShape(spec, json)) {
    throw new UnknownChannelError(channelId);
  }
  return json;
}

function isExpectedShape(spec: RequestSpec, json: unknown): boolean {
  if (spec.endpoint === PATHS.live) return Array.isArray(json);
  if (spec.endpoint === PATHS.search) return typeof json === 'object' && json !== null && 'items' in json;
  if (spec.endpoint === PATHS.end) return typeof json === 'object' && json !== null && 'send' in json;
  return false;
}

function combineSignals(a?: AbortSignal, b?: AbortSignal): AbortSignal | undefined {
  if (a && b) return AbortSignal.any([a, b]);
  return a ?? b;
}
