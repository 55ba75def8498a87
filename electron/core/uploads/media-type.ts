/**
 * Media types of uploads. The extension of a saved file always comes from here, never from the name the
 * client sent: a page cannot make Tally save `recording.exe` or `notes.html`.
 */

/** A parsed `type/subtype; name=value` header: lower-cased essence, parameters with lower-cased names. */
export interface MediaType {
  essence: string;
  params: Map<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Parses a Content-Type header value (RFC 9110 §8.3.1, quoted parameter values included). Returns null for
 * anything that is not `type/subtype`; malformed parameters are skipped.
 */
export function parseMediaType(header: string | undefined): MediaType | null {
  if (header === undefined) return null;
  const text = header.trim();
  const semi = text.indexOf(';');
  const essence = (semi === -1 ? text : text.slice(0, semi)).trim().toLowerCase();
  const [type, subtype, extra] = essence.split('/');
  if (!type || !subtype || extra !== undefined || !TOKEN.test(type) || !TOKEN.test(subtype)) return null;
  return { essence, params: parseParameters(semi === -1 ? '' : text.slice(semi + 1)) };
}

/**
 * Parses `; name=value; name="quoted \\"value\\""` parameters (names lower-cased, first occurrence wins,
 * malformed ones skipped). Shared by Content-Type and Content-Disposition. Browsers do not escape backslashes
 * in form-data file names (the HTML standard percent-encodes only `"`, CR and LF), so `backslashEscapes: false`
 * keeps `a\\b.webm` intact there.
 */
export function parseParameters(text: string, opts: { backslashEscapes?: boolean } = {}): Map<string, string> {
  const escapes = opts.backslashEscapes ?? true;
  const params = new Map<string, string>();
  let i = 0;
  while (i < text.length) {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === ';')) i += 1;
    const eq = text.indexOf('=', i);
    if (eq === -1) break;
    const name = text.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i += 1;
    let value = '';
    if (text[i] === '"') {
      i += 1;
      while (i < text.length && text[i] !== '"') {
        if (escapes && text[i] === '\\' && i + 1 < text.length) i += 1;
        value += text.charAt(i);
        i += 1;
      }
      const next = text.indexOf(';', i);
      i = next === -1 ? text.length : next;
    } else {
      const next = text.indexOf(';', i);
      value = text.slice(i, next === -1 ? text.length : next).trim();
      i = next === -1 ? text.length : next;
    }
    if (TOKEN.test(name) && !params.has(name)) params.set(name, value);
  }
  return params;
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

/** The list for error messages: `audio/webm, video/webm, ...`. */
export function acceptedTypesText(): string {
  return Object.keys(UPLOAD_TYPES).join(', ');
}
