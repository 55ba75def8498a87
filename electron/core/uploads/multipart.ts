/**
 * Reads exactly one file part out of a `multipart/form-data` body, on top of busboy. Uploads can be gigabytes,
 * so the body is pulled from its source only once everything parsed so far has been handed on: what is held
 * is one network chunk plus busboy's look-behind for a delimiter split across two chunks. Text fields are
 * dropped (busboy keeps at most the field size limit of each).
 */
import busboy from 'busboy';
import type { Readable } from 'node:stream';
import { note, noteText, type Note } from '../notes.js';
import { parseMediaType, type MediaType } from './media-type.js';

/** The request body is not the multipart body it claims to be (answered with 400); `note` says why. */
export class MultipartError extends Error {
  override readonly name = 'MultipartError';
  constructor(readonly note: Note) {
    super(noteText(note));
  }
}

/** What the file part's headers said. */
export interface FilePart {
  /** The form field name (`name=`), '' when absent. */
  fieldName: string;
  /** The client's file name (`filename*` preferred over `filename`), or null when it sent none. */
  fileName: string | null;
  /** The part's media type without parameters; `text/plain` when the part sent none (RFC 7578 §4.4). */
  contentType: MediaType | null;
}

export type MultipartEvent = { type: 'file'; part: FilePart } | { type: 'data'; chunk: Buffer };

export interface MultipartLimits {
  /** Bytes of one non-file field, which is read and dropped (default 64 KiB). */
  maxFieldBytes?: number;
  /** Number of parts (default 20). */
  maxParts?: number;
}

/** busboy's own cap on one part's header block; it is not configurable. */
const HEADER_LIMIT_TEXT = '16 KiB';

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

/** busboy reports problems as plain Errors; these become the notes a client reads in its 400. */
function describeError(error: Error): Note {
  if (error.message.startsWith('Unexpected end of')) return note('multipartIncomplete');
  if (error.message === 'Malformed part header') return note('multipartHeaders', { limit: HEADER_LIMIT_TEXT });
  return note('multipartMalformed', { detail: error.message });
}

/**
 * Reads a multipart body from `source` and yields the file part's header, then its bytes, as they arrive.
 * The generator finishes after the closing delimiter has been seen and the rest of the body drained.
 * @throws MultipartError on malformed or truncated bodies, a second file part, a field over
 *   `maxFieldBytes` or more than `maxParts` parts (errors of `source` pass through).
 */
export async function* readMultipartFile(
  source: AsyncIterable<Buffer>,
  boundary: string,
  limits: MultipartLimits = {},
): AsyncGenerator<MultipartEvent, void, undefined> {
  const maxFieldBytes = limits.maxFieldBytes ?? 64 * 1024;
  const maxParts = limits.maxParts ?? 20;
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      // The caller has validated the boundary; none of its characters needs escaping inside quotes.
      headers: { 'content-type': `multipart/form-data; boundary="${boundary}"` },
      // busboy flags a field or part count once it *reaches* its limit, so one more is allowed than accepted.
      limits: { files: 1, parts: maxParts + 1, fieldSize: maxFieldBytes + 1 },
      // Browsers send names in raw UTF-8, and a name is only a hint for uploadBaseName, which cleans it.
      defParamCharset: 'utf8',
      preservePath: true,
    });
  } catch (error) {
    throw new MultipartError(note('multipartMalformed', { detail: (error as Error).message }));
  }

  const events: MultipartEvent[] = [];
  // Assigned from busboy's callbacks, which the compiler cannot see.
  let file = null as Readable | null;
  let failure: MultipartError | null = null;
  let finished = false;
  let needDrain = false;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const resume = wake;
    wake = null;
    resume?.();
  };
  const fail = (reason: Note): void => {
    failure ??= new MultipartError(reason);
    notify();
  };

  parser.on('file', (fieldName, stream, info) => {
    file = stream;
    // Paused mode: bytes are read out right after each write, so busboy's backpressure reaches the source.
    stream.on('readable', notify);
    stream.on('end', notify);
    stream.on('error', (error) => fail(describeError(error)));
    events.push({
      type: 'file',
      part: { fieldName, fileName: info.filename ?? null, contentType: parseMediaType(info.mimeType) },
    });
  });
  parser.on('field', (_name, _value, info) => {
    if (info.valueTruncated) fail(note('multipartFieldTooLarge', { bytes: maxFieldBytes }));
  });
  parser.on('filesLimit', () => fail(note('multipartTwoFiles')));
  parser.on('partsLimit', () => fail(note('multipartTooManyParts', { parts: maxParts })));
  parser.on('error', (error: Error) => fail(describeError(error)));
  parser.on('drain', () => {
    needDrain = false;
    notify();
  });
  parser.on('finish', () => {
    finished = true;
    notify();
  });

  const input = source[Symbol.asyncIterator]();
  let inputDone = false;
  try {
    for (;;) {
      if (failure) throw failure;
      const event = events.shift();
      if (event) {
        yield event;
        continue;
      }
      const chunk = file?.read() as Buffer | null | undefined;
      if (chunk) {
        yield { type: 'data', chunk };
        continue;
      }
      if (finished) break;
      // Everything parsed so far is out: only now is the next chunk worth reading.
      if (!needDrain && !inputDone) {
        let next: IteratorResult<Buffer>;
        try {
          next = await input.next();
        } catch (error) {
          inputDone = true;
          throw error;
        }
        if (next.done === true) {
          inputDone = true;
          parser.end();
        } else {
          needDrain = !parser.write(next.value);
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    if (file === null) throw new MultipartError(note('multipartNoFile'));
  } finally {
    parser.destroy();
    file?.destroy();
    // Like for-await: a source left early is told so, and one that failed or ended is not.
    if (!inputDone) await input.return?.();
  }
}
