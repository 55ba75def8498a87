/**
 * The bytes of a sandbox recording, generated on the fly: a real playable mp4 clip (ftyp, moov, mdat) followed
 * by one `free` box that pads the file to the requested size. Players skip `free` boxes, so every recording
 * plays whatever its size, and nothing is ever held in memory: a 2 GiB file streams with flat memory.
 *
 * The padding is position-dependent (each 8-byte word encodes its own offset, mixed with a per-recording
 * salt), so a client that writes a range at the wrong offset, skips or repeats bytes ends up with a
 * different hash instead of an accidentally identical file.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { CLIP_MP4_BASE64, THUMBNAIL_JPEG_BASE64 } from './clip-data.js';

/** The playable head of every recording. */
export const CLIP = Buffer.from(CLIP_MP4_BASE64, 'base64');
/** The JPEG served as every recording's thumbnail. */
export const THUMBNAIL = Buffer.from(THUMBNAIL_JPEG_BASE64, 'base64');

const BOX_HEADER = 8;
const LARGE_BOX_HEADER = 16;
const MAX_32BIT_BOX = 0xffffffff;
/** Sanity cap (1 TiB): sizes stay exact in a double and nobody waits for more. */
export const MAX_RECORDING_BYTES = 2 ** 40;

const SCRATCH_WORDS = 8192; // 64 KiB of padding per generation step
const HASH_CHUNK = 1 << 20;
const TWO_32 = 4294967296;

/**
 * The real size of a recording asked to be `requested` bytes: never smaller than the clip, and bumped to
 * clip + 8 when the gap is too small to hold a box header.
 */
export function recordingSizeFor(requested: number): number {
  if (!Number.isSafeInteger(requested) || requested < 0 || requested > MAX_RECORDING_BYTES) {
    throw new RangeError(`recording size must be an integer from 0 to ${MAX_RECORDING_BYTES}, got ${requested}`);
  }
  if (requested <= CLIP.length) return CLIP.length;
  return Math.max(requested, CLIP.length + BOX_HEADER);
}

/** Header of the padding box for a box of `total` bytes (64-bit largesize above 4 GiB - 1). */
export function freeBoxHeader(total: number): Buffer {
  if (total <= MAX_32BIT_BOX) {
    const header = Buffer.alloc(BOX_HEADER);
    header.writeUInt32BE(total, 0);
    header.write('free', 4, 'latin1');
    return header;
  }
  const header = Buffer.alloc(LARGE_BOX_HEADER);
  header.writeUInt32BE(1, 0);
  header.write('free', 4, 'latin1');
  header.writeBigUInt64BE(BigInt(total), 8);
  return header;
}

export class RecordingFile {
  /** Exact size in bytes. */
  readonly size: number;
  private readonly header: Buffer;
  private readonly fillerStart: number;
  private readonly scratch = Buffer.allocUnsafe(SCRATCH_WORDS * 8);
  private readonly words = new Uint32Array(this.scratch.buffer, this.scratch.byteOffset, SCRATCH_WORDS * 2);
  private readonly digests = new Map<string, Promise<string>>();

  /**
   * @param requestedSize wanted size in bytes (see recordingSizeFor for the floor)
   * @param salt 32-bit value mixed into the padding so two recordings of one size differ
   */
  constructor(
    requestedSize: number,
    private readonly salt: number,
  ) {
    this.size = recordingSizeFor(requestedSize);
    const padding = this.size - CLIP.length;
    this.header = padding > 0 ? freeBoxHeader(padding) : Buffer.alloc(0);
    this.fillerStart = CLIP.length + this.header.length;
  }

  /** Copies the bytes at [offset, offset + target.length) into `target`; returns how many were copied. */
  read(offset: number, target: Buffer): number {
    const end = Math.min(this.size, offset + target.length);
    let pos = 0;
    let at = offset;
    if (at < CLIP.length && at < end) {
      const n = CLIP.copy(target, pos, at, Math.min(CLIP.length, end));
      pos += n;
      at += n;
    }
    if (at < this.fillerStart && at < end) {
      const from = at - CLIP.length;
      const n = this.header.copy(target, pos, from, Math.min(this.header.length, end - CLIP.length));
      pos += n;
      at += n;
    }
    if (at < end) {
      this.fillPadding(target, pos, at, end - at);
      pos += end - at;
    }
    return pos;
  }

  /** Hex digest of the whole file (cached). Yields to the event loop so servers stay responsive. */
  digest(algorithm: 'md5' | 'sha256', signal?: AbortSignal): Promise<string> {
    let digest = this.digests.get(algorithm);
    if (!digest) {
      digest = this.computeDigest(algorithm, signal);
      this.digests.set(algorithm, digest);
      // A failed (aborted) computation must not poison the cache.
      digest.catch(() => this.digests.delete(algorithm));
    }
    return digest;
  }

  /** The bytes [start, end] (inclusive) as a stream; each chunk is a fresh buffer. */
  createReadStream(start = 0, end = this.size - 1): Readable {
    return Readable.from(this.chunks(start, end), { objectMode: false });
  }

  private *chunks(start: number, end: number): Generator<Buffer> {
    for (let at = start; at <= end;) {
      const chunk = Buffer.allocUnsafe(Math.min(HASH_CHUNK, end - at + 1));
      at += this.read(at, chunk);
      yield chunk;
    }
  }

  private async computeDigest(algorithm: string, signal?: AbortSignal): Promise<string> {
    const hash = createHash(algorithm);
    const buffer = Buffer.allocUnsafe(HASH_CHUNK);
    let chunks = 0;
    for (let at = 0; at < this.size;) {
      const n = this.read(at, buffer);
      hash.update(n === buffer.length ? buffer : buffer.subarray(0, n));
      at += n;
      if (++chunks % 16 === 0) {
        await yieldToLoop();
        signal?.throwIfAborted();
      }
    }
    return hash.digest('hex');
  }

  /** Writes `length` padding bytes for absolute offset `abs` into `target` at `pos`. */
  private fillPadding(target: Buffer, pos: number, abs: number, length: number): void {
    while (length > 0) {
      const word = Math.floor(abs / 8);
      const skip = abs - word * 8;
      const count = Math.min(SCRATCH_WORDS, Math.ceil((skip + length) / 8));
      this.generateWords(word, count);
      const n = Math.min(length, count * 8 - skip);
      this.scratch.copy(target, pos, skip, skip + n);
      pos += n;
      abs += n;
      length -= n;
    }
  }

  /** Fills the scratch with `count` 8-byte words for word indexes first..first+count-1. */
  private generateWords(first: number, count: number): void {
    const words = this.words;
    const salt = this.salt;
    let lo = first % TWO_32;
    let hi = Math.floor(first / TWO_32);
    let i = 0;
    while (i < count) {
      // Run until the low half would wrap, then carry into the high half.
      const run = Math.min(count - i, TWO_32 - lo);
      const hiMix = Math.imul(hi ^ salt, 0x85ebca6b) ^ 0x5bd1e995;
      for (let k = 0; k < run; k++) {
        const w = (lo + k) >>> 0;
        words[2 * (i + k)] = Math.imul(w ^ salt, 0x9e3779b1) ^ hi;
        words[2 * (i + k) + 1] = w ^ hiMix;
      }
      i += run;
      lo = 0;
      hi += 1;
    }
  }
}
