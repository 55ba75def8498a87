/**
 * CORS for web client uploads. The web SDK sends its recording from the producer's page with a custom header
 * (`X-FILENAME`), so the browser asks first with a preflight. Only page origins the producer listed get an
 * answer the browser accepts: the exact origin is echoed (never `*`), `Vary: Origin` keeps caches honest, and
 * credentials are never allowed, because the upload URL's token is the only authentication.
 */
import { note, noteText, type Note } from '../notes.js';

/** Headers a browser page may send with an upload. */
export const ALLOWED_REQUEST_HEADERS = ['Content-Type', 'X-FILENAME'] as const;
/** How long a browser may cache a positive preflight (seconds). Short, so removing an origin takes effect soon. */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The message shown when browsers are refused because no origin was configured at all. */
export const NO_ORIGIN_MESSAGE = noteText(note('uploadNoOrigin'));

/**
 * The serialised origin (`scheme://host[:port]`, lower-case host, default port dropped) of an http(s) URL or
 * origin, or null for anything else (including the opaque origin `null` that sandboxed pages send).
 */
export function normalizeOrigin(text: string | null | undefined): string | null {
  if (typeof text !== 'string') return null;
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'null') return null;
  try {
    const url = new URL(trimmed);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return null;
    return url.origin;
  } catch {
    return null;
  }
}

/** What to do with a request, given its `Origin` header and the allowed list. */
export type OriginVerdict =
  /** No Origin header: not a cross-origin browser request (curl, a server, a native app). */
  | { kind: 'none' }
  /** A listed origin: answer with CORS headers for `origin` (the header exactly as the browser sent it). */
  | { kind: 'allowed'; origin: string }
  /** Present but not listed (or unparsable): refuse without CORS headers. */
  | { kind: 'refused'; origin: string; message: string; note: Note };

/**
 * Checks the request's Origin against the allowed origins (compared after normalising both sides, so
 * `https://App.example:443` matches `https://app.example`).
 */
export function checkOrigin(header: string | string[] | undefined, allowed: readonly string[]): OriginVerdict {
  if (header === undefined) return { kind: 'none' };
  const raw = Array.isArray(header) ? header.join(',') : header;
  const shown = raw.slice(0, 200);
  const normal = normalizeOrigin(raw);
  const list = allowed.map((o) => normalizeOrigin(o)).filter((o): o is string => o !== null);
  if (list.length === 0) return refused(shown, note('uploadNoOrigin'));
  if (normal !== null && list.includes(normal)) return { kind: 'allowed', origin: raw };
  return refused(shown, note('uploadOriginRefused', { origin: shown || '(empty)' }));
}

function refused(origin: string, said: Note): OriginVerdict {
  return { kind: 'refused', origin, message: noteText(said), note: said };
}

/** Headers on every answer (success or error) to an allowed origin, so the page can read the outcome. */
export function corsHeaders(origin: string): Record<string, string> {
  return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
}

/**
 * Headers for a successful preflight. `privateNetwork` answers Chrome's Private Network Access preflight, sent
 * when a public page posts to a loopback address (a recordUrl pointing straight at this machine).
 */
export function preflightHeaders(origin: string, privateNetwork = false): Record<string, string> {
  return {
    ...corsHeaders(origin),
    'Access-Control-Allow-Methods': 'POST',
    'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS.join(', '),
    'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
    ...(privateNetwork ? { 'Access-Control-Allow-Private-Network': 'true' } : {}),
  };
}
