/**
 * A streaming `multipart/form-data` reader for exactly one file part. Uploads can be gigabytes, so nothing
 * here holds more than one network chunk plus a delimiter's worth of bytes: the file's bytes are handed on as
 * they arrive, other (text) fields are counted and dropped, and a delimiter split across two chunks is found
 * by keeping the few bytes that could be its start.
 */
import { parseMediaType, parseParameters, type MediaType } from './media-type.js';

/** The request body is not the multipart body it claims to be (answered with 400). */
export class MultipartError extends Error {
  override readonly name = 'MultipartError';
}

/** What the file part's headers said. */
export interface FilePart {
  /** The form field name (`name=`), '' when absent. */
  fieldName: string;
  /** The client's file name (`filename*` preferred over `filename`), or null when it sent none. */
  fileName: string | null;
  /** The part's Content-Type, or null when absent or unparsable. */
  contentType: MediaType | null;
}

export type MultipartEvent = { type: 'file'; part: FilePart } | { type: 'data'; chunk: Buffer };

export interface MultipartLimits {
  /** Bytes of one part's header block (default 16 KiB). */
  maxHeaderBytes?: number;
  /** Bytes of one non-file field, which is read and dropped (default 64 KiB). */
  maxFieldBytes?: number;
  /** Number of parts (default 20). */
  maxParts?: number;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * The boundary of a `multipart/form-data` Content-Type, or null when the type is something else or the
 * boundary is missing or invalid (RFC 2046: 1 to 70 characters, not ending in a space).
 */
export function multipartBoundary(type: MediaType | null): string | null {
  if (type?.essence !== 'multipart/form-data') return null;
  const boundary = type.params.get('boundary');
  if (boundary === undefined || boundary.length < 1 || boundary.length > 70 || boundary.endsWith(' ')) return null;
  return /^[0-9A-Za-z'()+_,\-./:=? ]+$/.test(boundary) ? boundary : null;
}

type State = 'preamble' | 'after-delimiter' | 'headers' | 'file' | 'field' | 'epilogue';

/**
 * Push parser: feed chunks with `push` (returns the events they complete), then `end()`. Throws
 * MultipartError on malformed input, a second file part, or oversized headers/fields.
 */
export class MultipartParser {
  readonly #delimiter: Buffer;
  readonly #maxHeaderBytes: number;
  readonly #maxFieldBytes: number;
  readonly #maxParts: number;
  #state: State = 'preamble';
  // The body is read as if preceded by CRLF, so a delimiter at the very start is found like any other.
  #buffer: Buffer = Buffer.from(CRLF);
  #parts = 0;
  #fieldBytes = 0;
  #sawFile = false;

  constructor(boundary: string, limits: MultipartLimits = {}) {
    this.#delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.#maxHeaderBytes = limits.maxHeaderBytes ?? 16 * 1024;
    this.#maxFieldBytes = limits.maxFieldBytes ?? 64 * 1024;
    this.#maxParts = limits.maxParts ?? 20;
  }

  /** Whether the file part has begun. */
  get sawFile(): boolean {
    return this.#sawFile;
  }

  /** Feeds the next chunk of the body. */
  push(chunk: Buffer): MultipartEvent[] {
    if (this.#state === 'epilogue') return [];
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const events: MultipartEvent[] = [];
    for (;;) {
      const progressed = this.#step(events);
      if (!progressed) break;
    }
    return events;
  }

  /** The body ended: throws if it stopped before the closing delimiter or held no file. */
  end(): void {
    if (this.#state !== 'epilogue') {
      throw new MultipartError('The multipart body ended before its closing boundary (incomplete upload).');
    }
    if (!this.#sawFile) throw new MultipartError('The multipart body holds no file part.');
  }

  /** Runs one state transition if the buffer allows; false when more input is needed. */
  #step(events: MultipartEvent[]): boolean {
    const buffer = this.#buffer;
    switch (this.#state) {
      case 'preamble': {
        const at = buffer.indexOf(this.#delimiter);
        if (at === -1) {
          // The preamble is meaningless: keep only what could be the start of the first delimiter.
          this.#buffer = buffer.subarray(Math.max(0, buffer.length - (this.#delimiter.length - 1)));
          return false;
        }
        this.#buffer = buffer.subarray(at + this.#delimiter.length);
        this.#state = 'after-delimiter';
        return true;
      }
      case 'after-delimiter': {
        if (buffer.length < 2) return false;
        if (buffer[0] === 0x2d && buffer[1] === 0x2d) {
          this.#state = 'epilogue';
          this.#buffer = Buffer.alloc(0);
          return false;
        }
        // RFC 2046 allows transport padding (spaces, tabs) between the delimiter and its CRLF.
        let i = 0;
        while (i < buffer.length && (buffer[i] === 0x20 || buffer[i] === 0x09)) i += 1;
        if (i > 256) throw new MultipartError('Malformed multipart body: too much padding after a boundary.');
        if (buffer.length < i + 2) return false;
        if (buffer[i] !== 0x0d || buffer[i + 1] !== 0x0a) {
          throw new MultipartError('Malformed multipart body: a boundary is not followed by a line break.');
        }
        this.#parts += 1;
        if (this.#parts > this.#maxParts)
          throw new MultipartError(`The multipart body has more than ${this.#maxParts} parts.`);
        this.#buffer = buffer.subarray(i + 2);
        this.#state = 'headers';
        return true;
      }
      case 'headers': {
        let headerText: string;
        let rest: Buffer;
        if (buffer.length >= 2 && buffer[0] === 0x0d && buffer[1] === 0x0a) {
          headerText = '';
          rest = buffer.subarray(2);
        } else {
          const at = buffer.indexOf(HEADER_END);
          if (at === -1) {
            if (buffer.length > this.#maxHeaderBytes) {
              throw new MultipartError(`A multipart part has more than ${this.#maxHeaderBytes} bytes of headers.`);
            }
            return false;
          }
          if (at > this.#maxHeaderBytes) {
            throw new MultipartError(`A multipart part has more than ${this.#maxHeaderBytes} bytes of headers.`);
          }
          // Browsers send names in UTF-8 without any encoding, so the block is read as UTF-8.
          headerText = buffer.subarray(0, at).toString('utf8');
          rest = buffer.subarray(at + HEADER_END.length);
        }
        // A fresh copy: the header bytes are dropped, and the next chunk is concatenated onto a small buffer.
        this.#buffer = Buffer.from(rest);
        const part = describePart(headerText);
        if (part.isFile) {
          if (this.#sawFile) throw new MultipartError('Send one file per upload; this body holds more than one.');
          this.#sawFile = true;
          this.#state = 'file';
          events.push({ type: 'file', part: part.file });
        } else {
          this.#fieldBytes = 0;
          this.#state = 'field';
        }
        return true;
      }
      case 'file':
      case 'field': {
        const at = buffer.indexOf(this.#delimiter);
        let data: Buffer;
        if (at !== -1) {
          data = buffer.subarray(0, at);
          this.#buffer = buffer.subarray(at + this.#delimiter.length);
        } else {
          // Hold back only a tail that could still turn out to be the start of the delimiter.
          const from = Math.max(0, buffer.length - (this.#delimiter.length - 1));
          const cr = buffer.indexOf(0x0d, from);
          const keep = cr === -1 ? buffer.length : cr;
          data = buffer.subarray(0, keep);
          this.#buffer = buffer.subarray(keep);
        }
        if (this.#state === 'file') {
          if (data.length > 0) events.push({ type: 'data', chunk: data });
        } else {
          this.#fieldBytes += data.length;
          if (this.#fieldBytes > this.#maxFieldBytes) {
            throw new MultipartError(`A form field is larger than ${this.#maxFieldBytes} bytes.`);
          }
        }
        if (at === -1) return false;
        this.#state = 'after-delimiter';
        return true;
      }
      case 'epilogue':
        return false;
    }
  }
}

function describePart(headerText: string): { isFile: boolean; file: FilePart } {
  const headers = new Map<string, string>();
  for (const line of headerText.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  const disposition = headers.get('content-disposition') ?? '';
  const semi = disposition.indexOf(';');
  const params = parseParameters(semi === -1 ? '' : disposition.slice(semi + 1), { backslashEscapes: false });
  const extended = decodeExtendedValue(params.get('filename*'));
  const plain = params.get('filename');
  const fileName = extended ?? plain ?? null;
  const rawType = headers.get('content-type');
  const contentType = parseMediaType(rawType);
  const file: FilePart = { fieldName: params.get('name') ?? '', fileName, contentType };
  // A part is the file when it says so with a file name, or when it carries a non-text media type.
  const isFile = fileName !== null || (contentType !== null && !contentType.essence.startsWith('text/'));
  return { isFile, file };
}

/** RFC 8187 `UTF-8''%e2%82%ac.webm` → `€.webm`; null when absent, in another charset, or malformed. */
function decodeExtendedValue(value: string | undefined): string | null {
  if (value === undefined) return null;
  const match = /^utf-8'[^']*'(.*)$/i.exec(value);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1] ?? '');
  } catch {
    return null;
  }
}

/**
 * Reads a multipart body from `source` and yields the file part's header, then its bytes, as they arrive.
 * The generator finishes after the closing delimiter has been seen and the rest of the body drained.
 * @throws MultipartError on malformed or truncated bodies (errors of `source` pass through).
 */
export async function* readMultipartFile(
  source: AsyncIterable<Buffer>,
  boundary: string,
  limits: MultipartLimits = {},
): AsyncGenerator<MultipartEvent, void, undefined> {
  const parser = new MultipartParser(boundary, limits);
  for await (const chunk of source) {
    for (const event of parser.push(chunk)) yield event;
  }
  parser.end();
}
