/**
 * A small seeded PRNG so that ids, sizes and watcher curves are the same on every run with the same seed:
 * tests and screenshots stay reproducible without freezing time.
 */

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Mixes integers into a well-spread 32-bit value (a murmur3-style finaliser). Pure: same input, same output. */
export function hash32(...values: number[]): number {
  let h = 0x811c9dc5;
  for (const v of values) {
    h = Math.imul(h ^ (v >>> 0), 0x01000193);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** Deterministic random source (mulberry32). */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = hash32(Math.trunc(seed)) || 1;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A raw 32-bit value, e.g. to seed a per-broadcast curve. */
  uint32(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }

  /** `length` characters of [A-Za-z0-9]. */
  chars(length: number, alphabet = ID_ALPHABET): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }
}
