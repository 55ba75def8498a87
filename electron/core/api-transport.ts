/**
 * The service client's transport: one HTTP request through got, and got's errors turned into ours. got is loaded
 * lazily and nothing of its error objects (which carry the request options, and those hold the secret) leaves
 * this module. Which failures may be retried is recorded beside the errors, so they stay plain objects.
 */
import type * as Got from 'got';
import { note, type Note, type NoteCode } from './notes.js';
import { NetworkError, TimeoutError } from './errors.js';

/** Error codes that mean the request never left this machine or never reached a server: safe to resend. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL']);

/** One request to the service, as the client builds it. */
export interface RequestSpec {
  /** Label used in errors: the path, never the full URL with its query. */
  endpoint: string;
  url: string;
  method: 'POST' | 'PUT';
  body?: unknown;
  headers?: Record<string, string>;
  kind: 'read' | 'write';
}

/** What came back, before any interpretation. */
export interface RawResponse {
  status: number;
  text: string;
  contentType: string;
}

/** Marks failures that may be retried and how. Kept outside the error objects so they stay plain. */
const transient = new WeakSet<Error>();
const neverSent = new WeakSet<Error>();

/** A failure worth another attempt for a read (a 5xx, a cut-off body, a reset). */
export const isTransient = (error: Error): boolean => transient.has(error);
/** A failure that happened before anything reached the service: safe to resend, even a write. */
export const isNeverSent = (error: Error): boolean => neverSent.has(error);
export const markTransient = (error: Error): void => {
  transient.add(error);
};

/**
 * Sends one request, without retries or redirects, and returns the raw answer whatever its status; a transport
 * failure becomes a typed TimeoutError or NetworkError, marked transient and, where nothing left this machine,
 * never sent.
 *
 * got's own timeout bounds the attempt (`timeout.request`). got's retry stays off, for two reasons its options
 * cannot express: whether an answer is worth another attempt is known only once it is interpreted (a 200 whose
 * JSON is cut short is transient; a 5xx whose body says the credentials are wrong is not), and a write
 * (force-end, the webhook registration) may be sent again only when it provably never left this machine, whatever
 * its method. The client's loop (api-client.ts `#call`) decides both and waits what core/backoff.ts says.
 */
export async function sendRequest(
  spec: RequestSpec,
  options: { userAgent: string; timeoutMs: number },
  signal: AbortSignal | undefined,
): Promise<RawResponse> {
  const got = await loadGot();
  try {
    const response = await got.default(spec.url, {
      method: spec.method,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'user-agent': options.userAgent,
        ...spec.headers,
      },
      // A string body, not got's `json` option: nothing of ours ends up in a parsed-options dump.
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      throwHttpErrors: false,
      // Redirects could carry the secret to another host; an unexpected 3xx is reported instead.
      followRedirect: false,
      retry: { limit: 0 },
      timeout: { request: options.timeoutMs },
      responseType: 'text',
      signal,
    });
    const contentType = response.headers['content-type'];
    return { status: response.statusCode, text: response.body, contentType: contentType ?? '' };
  } catch (error) {
    if (signal?.aborted) throw abortReason(signal);
    throw translateTransportError(got, error, spec, options.timeoutMs);
  }
}

/** got loads on the first request: commands that never call the service are spared its ~25 MB of modules. */
let gotModule: Promise<typeof Got> | undefined;
const loadGot = (): Promise<typeof Got> => (gotModule ??= import('got'));

/** got's errors become ours here and only here; nothing of the original object survives. */
function translateTransportError(got: typeof Got, error: unknown, spec: RequestSpec, timeoutMs: number): Error {
  if (error instanceof got.TimeoutError) {
    const result = new TimeoutError(spec.endpoint, timeoutMs);
    // A timeout while connecting means nothing was sent; later phases may have reached the service.
    if (error.event === 'lookup' || error.event === 'connect') neverSent.add(result);
    transient.add(result);
    return result;
  }
  const code = error instanceof got.RequestError ? String(error.code ?? '') : '';
  const host = safeHost(spec.url);
  const result = new NetworkError(spec.endpoint, describeCode(code, host, error));
  if (NEVER_SENT_CODES.has(code)) neverSent.add(result);
  transient.add(result);
  return result;
}

/** Why the service could not be reached, as a note (the popover says it in its own language). */
function describeCode(code: string, host: string, error: unknown): Note {
  const reason = REASONS[code];
  if (reason) return note(reason, { host });
  if (/CERT|SSL|TLS/i.test(code)) return note('apiTls', { host, errno: code });
  if (error instanceof Error && error.name === 'ReadError') return note('apiCutOff', { host });
  if (/^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return note('apiFailedCode', { host, errno: code });
  return note('apiFailed', { host });
}

const REASONS: Partial<Record<string, NoteCode>> = {
  ECONNREFUSED: 'apiRefused',
  ENOTFOUND: 'apiUnknownHost',
  EAI_AGAIN: 'apiLookupFailed',
  ECONNRESET: 'apiReset',
  EPIPE: 'apiClosedSending',
  ETIMEDOUT: 'apiTimedOut',
  ENETUNREACH: 'apiUnreachable',
  EHOSTUNREACH: 'apiUnreachable',
  ERR_STREAM_PREMATURE_CLOSE: 'apiClosedEarly',
};

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the host';
  }
}

/** The signal's reason (an AbortError DOMException by default), as fetch does. */
export function abortReason(signal?: AbortSignal): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const error = new Error('The operation was aborted.');
  error.name = 'AbortError';
  return error;
}
