/**
 * Media types of uploads. The extension of a saved file always comes from here, never from the name the
 * client sent: a page cannot make Tally save `recording.exe` or `notes.html`.
 */
import { isTokenValid, isTypeValid, parse } from 'content-type';

/** A parsed `type/subtype; name=value` header: lower-cased essence, parameters with lower-cased names. */
export interface MediaType {
  essence: string;
  params: Map<string, string>;
}

/**
 * Parses a Content-Type header value (RFC 9110 §8.3.1, quoted parameter values included). Returns null for
 * anything that is not `type/subtype`; parameters with malformed names are skipped.
 */
export function parseMediaType(header: string | undefined): MediaType | null {
  if (header === undefined) return null;
  const parsed = parse(header);
  // The library never throws and hands back whatever precedes the first `;` as the type, so its shape is
  // checked here: a bare `audio`, `a/b/c` or `;;;` must not reach extensionFor.
  if (!isTypeValid(parsed.type)) return null;
  const params = new Map<string, string>();
  for (const [name, value] of Object.entries(parsed.parameters)) {
    if (isTokenValid(name)) params.set(name, value);
  }
  return { essence: parsed.type, params };
}

/** Accepted recording types and the extension each is saved with. */
export const UPLOAD_TYPES: Readonly<Record<string, string>> = Object.freeze({
  'audio/webm': '.webm',
  'video/webm': '.webm',
  'audio/ogg': '.ogg',
  'audio/wav': '.wav',
  'audio/x-wav': '.wav',
  'audio/wave': '.wav',
  'audio/vnd.wave': '.wav',
});

/** The extension for an accepted recording type (parameters such as `codecs=opus` ignored), or null. */
export function extensionFor(type: MediaType | null): string | null {
  if (!type) return null;
  return Object.hasOwn(UPLOAD_TYPES, type.essence) ? (UPLOAD_TYPES[type.essence] ?? null) : null;
}
