/**
 * The head of an origin's answer (status line and headers), read off a raw socket by `http-parser-js` and held to
 * what Node's own strict parser (llhttp) accepts, and a little more: one status line of HTTP/1.x, at most
 * MAX_HEAD_BYTES and MAX_HEADERS, every line ending in CRLF, header names that are tokens, no folded lines, and a
 * body framed by exactly one of Content-Length (digits only, duplicates equal) or `Transfer-Encoding: chunked`,
 * never both. Whatever fails is a MalformedResponseError: the download fails as "a malformed HTTP response" and
 * is retried like any network failure. Informational answers (1xx but 101) are skipped like Node skips them.
 */
import { HTTPParser } from 'http-parser-js';

/** Node's default `--max-http-header-size`: the same bound as before the socket engine. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** More header lines than any origin sends; a head of many tiny lines is refused before it is all read. */
export const MAX_HEADERS = 256;

/** How the body of an answer ends. */
export type BodyFraming =
  | { kind: 'length'; length: number }
  | { kind: 'chunked' }
  /** No length: the body is whatever arrives until the server closes the connection. */
  | { kind: 'close' }
  /** 204, 304: no body at all. */
  | { kind: 'none' };

export interface ResponseHead {
  status: number;
  /** Lower-cased names; a repeated header is joined with ", " except for those that take one value (first wins). */
  headers: Record<string, string | undefined>;
  framing: BodyFraming;
}

/** The origin's answer is not HTTP as Tally reads it. `code` starts with HPE_ like Node's parser errors. */
export class MalformedResponseError extends Error {
  override name = 'MalformedResponseError';
  constructor(
    readonly code: string,
    detail: string,
  ) {
    super(`malformed HTTP response: ${detail}`);
  }
}

// Headers Node keeps the first of (lib/_http_incoming.js): a second value is dropped, never joined.
const SINGLE_VALUED = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);
// Two different values of these would make the download trust one of two stories: refused instead.
const MUST_AGREE = new Set(['content-length', 'content-range', 'location']);

const STATUS_LINE = /^HTTP\/1\.[01] [1-9]\d\d(?: [\t\x20-\x7e\x80-\xff]*)?$/;
const HEADER_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Feeds socket reads to the parser until a final head is complete. `feed` answers null while more bytes are
 * needed, else the head and how many bytes of this read it used (the rest is body).
 */
export class HeadReader {
  #parser = new HTTPParser(HTTPParser.RESPONSE);
  #done: { versionMajor: number; statusCode: number; headers: string[] } | null = null;
  /** Bytes of the current head fed so far (earlier reads), kept to check its lines once the parser is done. */
  #raw: Buffer[] = [];
  #rawBytes = 0;

  constructor() {
    // Our own bound (below) is the one that counts: the parser checks its own only between reads.
    this.#parser.maxHeaderSize = MAX_HEAD_BYTES + 1;
    this.#parser[HTTPParser.kOnHeadersComplete] = (info) => {
      this.#done = info;
      // 2: "skip the body and stop here" (http-parser-js): the bytes after the head are the engine's to read.
      return 2;
    };
  }

  /** @throws MalformedResponseError */
  feed(chunk: Buffer): { head: ResponseHead; used: number } | null {
    let offset = 0;
    while (offset < chunk.length) {
      // Never more than the bound reaches the parser: a huge head in one read is refused, not parsed.
      const room = MAX_HEAD_BYTES + 1 - this.#rawBytes;
      const piece = chunk.subarray(offset, offset + room);
      const result = this.#parser.execute(piece);
      if (result instanceof Error) {
        const code = (result as NodeJS.ErrnoException).code ?? 'HPE_INVALID_CONSTANT';
        throw new MalformedResponseError(code, result.message === 'Parse Error' ? code : result.message);
      }
      const info = this.#done;
      if (!info) {
        this.#raw.push(Buffer.from(piece));
        this.#rawBytes += piece.length;
        if (this.#rawBytes > MAX_HEAD_BYTES) {
          throw new MalformedResponseError('HPE_HEADER_OVERFLOW', `a head larger than ${MAX_HEAD_BYTES} bytes`);
        }
        return null;
      }
      this.#done = null;
      const text = Buffer.concat([...this.#raw, piece.subarray(0, result)]).toString('latin1');
      this.#raw = [];
      this.#rawBytes = 0;
      offset += result;
      const head = checkHead(text, info);
      // 100 Continue, 103 Early Hints: the answer is still to come (101 would switch protocols: refused below).
      if (head.status >= 100 && head.status < 200 && head.status !== 101) continue;
      if (head.status === 101) throw new MalformedResponseError('HPE_INVALID_STATUS', 'a protocol switch (101)');
      return { head, used: offset };
    }
    return null;
  }
}

/** Checks the head's raw lines strictly and builds what the engine reads from it. */
function checkHead(text: string, info: { versionMajor: number; statusCode: number; headers: string[] }): ResponseHead {
  if (!text.endsWith('\r\n\r\n')) throw new MalformedResponseError('HPE_CR_EXPECTED', 'a head not ended by CRLF CRLF');
  const lines = text.slice(0, -4).split('\r\n');
  for (const line of lines) {
    if (line.includes('\n') || line.includes('\r')) {
      throw new MalformedResponseError('HPE_CR_EXPECTED', 'a line ended by a bare LF or CR');
    }
  }
  if (!STATUS_LINE.test(lines[0] ?? '') || info.versionMajor !== 1) {
    throw new MalformedResponseError('HPE_INVALID_CONSTANT', 'not an HTTP/1.x status line');
  }
  if (lines.length - 1 > MAX_HEADERS) {
    throw new MalformedResponseError('HPE_HEADER_OVERFLOW', `more than ${MAX_HEADERS} header lines`);
  }
  for (const line of lines.slice(1)) {
    // A line starting with white space is an obsolete fold; a line without a colon or with a space before it is
    // not a header: llhttp refuses both, http-parser-js would join or skip them.
    if (!HEADER_LINE.test(line))
      throw new MalformedResponseError('HPE_INVALID_HEADER_TOKEN', 'a malformed header line');
  }
  const headers: Record<string, string | undefined> = {};
  const seen: Record<string, string> = {};
  let lengths = 0;
  let encodings = 0;
  for (let i = 0; i + 1 < info.headers.length; i += 2) {
    const name = (info.headers[i] as string).toLowerCase();
    const value = (info.headers[i + 1] as string).trim();
    if (name === 'content-length') lengths += 1;
    if (name === 'transfer-encoding') encodings += 1;
    const earlier = seen[name];
    if (earlier !== undefined && MUST_AGREE.has(name) && earlier !== value) {
      throw new MalformedResponseError('HPE_UNEXPECTED_CONTENT_LENGTH', `two different ${name} headers`);
    }
    seen[name] ??= value;
    if (earlier === undefined) headers[name] = value;
    else if (!SINGLE_VALUED.has(name) && !MUST_AGREE.has(name)) headers[name] = `${headers[name]}, ${value}`;
  }
  const status = info.statusCode;
  return { status, headers, framing: framingOf(status, headers, lengths > 0, encodings > 0) };
}

function framingOf(
  status: number,
  headers: Record<string, string | undefined>,
  hasLength: boolean,
  hasEncoding: boolean,
): BodyFraming {
  if (hasLength && hasEncoding) {
    // Request smuggling's favourite: which one frames the body? Node refuses it; so does Tally.
    throw new MalformedResponseError('HPE_UNEXPECTED_CONTENT_LENGTH', 'both Content-Length and Transfer-Encoding');
  }
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) return { kind: 'none' };
  if (hasEncoding) {
    if ((headers['transfer-encoding'] ?? '').toLowerCase() !== 'chunked') {
      // gzip or another coding Tally never asked for (it asks for the bytes as they are stored).
      throw new MalformedResponseError('HPE_INVALID_TRANSFER_ENCODING', 'a transfer coding other than chunked');
    }
    return { kind: 'chunked' };
  }
  if (hasLength) {
    const raw = headers['content-length'] ?? '';
    const length = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(length)) {
      throw new MalformedResponseError('HPE_INVALID_CONTENT_LENGTH', 'a Content-Length that is not a number');
    }
    return { kind: 'length', length };
  }
  return { kind: 'close' };
}
