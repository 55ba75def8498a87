/**
 * The `Transfer-Encoding: chunked` decoder of the socket engine. http-parser-js, which reads the head, reads a
 * chunk size with `parseInt`: "1x" is 1, "-1" is -1 and "zz" ends the body, so a corrupt answer could pass as a
 * complete one. This one is strict (RFC 9112 7.1): a size is 1-16 hex digits, an extension after `;` is
 * skipped, every line ends in CRLF, trailers are bounded and ignored, and anything else is a
 * MalformedResponseError. It hands out views into the read it was given, never a copy.
 */
import { MalformedResponseError } from './response-head.js';

/** Longest chunk-size line (size, extensions) or trailer line accepted. */
const MAX_LINE = 4096;
/** Most trailer bytes accepted after the last chunk. */
const MAX_TRAILERS = 16 * 1024;

type State = 'size' | 'data' | 'data-cr' | 'data-lf' | 'trailers' | 'done';

export class ChunkedDecoder {
  #state: State = 'size';
  #line = '';
  /** Bytes left in the current chunk. */
  #left = 0;
  #trailerBytes = 0;

  /** The last chunk and the trailers' end arrived: the body is complete. */
  get done(): boolean {
    return this.#state === 'done';
  }

  /**
   * Decodes one read; `onData` gets each piece of body (a view into `input`). Bytes after the end of the body are
   * left alone. Returns how many bytes of `input` were used.
   * @throws MalformedResponseError
   */
  push(input: Buffer, onData: (piece: Buffer) => void): number {
    let i = 0;
    while (i < input.length && this.#state !== 'done') {
      switch (this.#state) {
        case 'data': {
          const take = Math.min(this.#left, input.length - i);
          onData(input.subarray(i, i + take));
          i += take;
          this.#left -= take;
          if (this.#left === 0) this.#state = 'data-cr';
          break;
        }
        case 'data-cr':
          if (input[i] !== 0x0d) throw bad('a chunk not followed by CRLF');
          i += 1;
          this.#state = 'data-lf';
          break;
        case 'data-lf':
          if (input[i] !== 0x0a) throw bad('a chunk not followed by CRLF');
          i += 1;
          this.#state = 'size';
          break;
        case 'size':
        case 'trailers': {
          const lf = input.indexOf(0x0a, i);
          const end = lf < 0 ? input.length : lf;
          this.#line += input.toString('latin1', i, end);
          if (this.#state === 'trailers') this.#trailerBytes += end - i + (lf < 0 ? 0 : 1);
          if (this.#line.length > MAX_LINE || this.#trailerBytes > MAX_TRAILERS) throw bad('an overlong chunk line');
          i = lf < 0 ? input.length : lf + 1;
          if (lf < 0) break;
          const line = this.#line;
          this.#line = '';
          if (!line.endsWith('\r') || line.slice(0, -1).includes('\r')) throw bad('a chunk line not ended by CRLF');
          const text = line.slice(0, -1);
          if (this.#state === 'trailers') {
            if (text === '') this.#state = 'done';
            else if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e\x80-\xff]*$/.test(text)) throw bad('a bad trailer');
            break;
          }
          this.#startChunk(text);
          break;
        }
      }
    }
    return i;
  }

  #startChunk(text: string): void {
    const match = /^([0-9A-Fa-f]{1,16})[\t ]*(?:;[\t\x20-\x7e\x80-\xff]*)?$/.exec(text);
    if (!match) throw bad('a chunk size that is not hexadecimal');
    const size = Number.parseInt(match[1] as string, 16);
    if (!Number.isSafeInteger(size)) throw bad('a chunk size beyond any file');
    if (size === 0) {
      this.#state = 'trailers';
      return;
    }
    this.#left = size;
    this.#state = 'data';
  }
}

function bad(detail: string): MalformedResponseError {
  return new MalformedResponseError('HPE_INVALID_CHUNK_SIZE', detail);
}
