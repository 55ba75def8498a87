/**
 * What the recordings inbox keeps in memory per job: where the job's latest snapshot line lies in the journal
 * and the few numbers that decide what to do with it (state, times), in typed columns, plus its key. The job
 * itself (URL, channel ID, error text: about 2 KB at the webhook's field caps) stays on disk and is read back on
 * demand; a small cache of recently used jobs keeps the usual case free of reads. About 150 bytes per job, so a
 * journal of 100,000 jobs (a flood's worth) costs about 15 MB instead of the 350 MB the jobs themselves take.
 */
import type { JobState, RecordingJob } from './types.js';

const STATES: readonly JobState[] = ['pending', 'downloading', 'saved', 'failed', 'expired', 'gone'];
const STATE_CODE = new Map(STATES.map((s, i) => [s, i]));
/** States from this code on are terminal (saved, failed, expired, gone). */
const FIRST_TERMINAL = 2;
const NO_ALIAS = -1;
/** A later recording's key under a URL already known: `<url key>-<n>`. */
const VERSIONED = /^([0-9a-f]{32})-(\d+)$/;

/** A 30-bit FNV-1a hash of the alias (a small integer, so the alias map holds no strings); collisions are verified. */
export function aliasHash(alias: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < alias.length; i += 1) {
    h ^= alias.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h & 0x3fffffff;
}

/** A job's two alias hashes: of channel, host and path, and of the same with the path's random segment removed. */
export interface JobAliases {
  own: number;
  trimmed: number | null;
}

/** Adds `slot` to the bucket of `hash` (in place: a big bucket is never copied). */
function addTo(map: Map<number, number[]>, hash: number, slot: number): void {
  const known = map.get(hash);
  if (known) known.push(slot);
  else map.set(hash, [slot]);
}

function removeFrom(map: Map<number, number[]>, hash: number, slot: number): void {
  if (hash === NO_ALIAS) return;
  const known = map.get(hash);
  if (!known) return;
  const at = known.indexOf(slot);
  if (at >= 0) known.splice(at, 1);
  if (known.length === 0) map.delete(hash);
}

export interface Located {
  offset: number;
  length: number;
}

/** Slot-based index of the jobs in the journal (see the file comment). */
export class JobIndex {
  readonly #slots = new Map<string, number>();
  #keys: (string | undefined)[] = [];
  #offset: Float64Array = new Float64Array(1024);
  #length: Uint32Array = new Uint32Array(1024);
  #state: Uint8Array = new Uint8Array(1024);
  #received: Float64Array = new Float64Array(1024);
  #updated: Float64Array = new Float64Array(1024);
  #alias: Int32Array = new Int32Array(1024);
  #trimmed: Int32Array = new Int32Array(1024);
  readonly #free: number[] = [];
  /**
   * Alias hash → slots: of the job's own path (`#aliases`), and of its path without the second-to-last segment
   * (`#trimmedAliases`). Two exact keys instead of one per channel and file name: a flood whose webhooks all fell
   * back to the same file name put every job in one bucket, and each new webhook read them all (issue 20).
   */
  readonly #aliases = new Map<number, number[]>();
  readonly #trimmedAliases = new Map<number, number[]>();
  /**
   * Both directions of each twin link (RecordingJob.twin: the same recording in both webhook forms). Kept whatever
   * order the lines come in (a rewrite may put the later job first); `twinOf` answers only while both are known.
   */
  readonly #twins = new Map<string, string>();
  /**
   * URL key → the highest version number among its jobs (`<key>-<n>`, n ≥ 2: later recordings under a URL already
   * saved, issue 31). Only URLs with more than one recording are here.
   */
  readonly #versions = new Map<string, number>();
  #unfinished = 0;

  get size(): number {
    return this.#slots.size;
  }

  /** Jobs not yet saved, expired or failed (constant time). */
  get unfinished(): number {
    return this.#unfinished;
  }

  has(key: string): boolean {
    return this.#slots.has(key);
  }

  locate(key: string): Located | undefined {
    const slot = this.#slots.get(key);
    return slot === undefined ? undefined : { offset: this.#offset[slot]!, length: this.#length[slot]! };
  }

  /** Records (or moves) a job's latest snapshot; `alias` holds the alias keys' hashes (see aliasOf), or null. */
  set(job: RecordingJob, at: Located, alias: JobAliases | null): void {
    let slot = this.#slots.get(job.key);
    if (slot === undefined) {
      slot = this.#free.pop() ?? this.#grow();
      this.#slots.set(job.key, slot);
      this.#keys[slot] = job.key;
      this.#alias[slot] = alias?.own ?? NO_ALIAS;
      this.#trimmed[slot] = alias?.trimmed ?? NO_ALIAS;
      if (alias) addTo(this.#aliases, alias.own, slot);
      if (alias?.trimmed != null) addTo(this.#trimmedAliases, alias.trimmed, slot);
      this.#received[slot] = Date.parse(job.receivedAt);
      const version = VERSIONED.exec(job.key);
      if (version) {
        const [, base, n] = version as unknown as [string, string, string];
        this.#versions.set(base, Math.max(this.#versions.get(base) ?? 0, Number(n)));
      }
      if (job.twin !== undefined && job.twin !== job.key) {
        this.#twins.set(job.key, job.twin);
        this.#twins.set(job.twin, job.key);
      }
    } else if (this.#state[slot]! < FIRST_TERMINAL) this.#unfinished -= 1;
    // Found to be another recording than its twin (RecordingJob.twinDiffers): the link goes, both ways.
    if (job.twinDiffers) {
      const twin = this.#twins.get(job.key);
      this.#twins.delete(job.key);
      if (twin !== undefined && this.#twins.get(twin) === job.key) this.#twins.delete(twin);
    }
    const state = STATE_CODE.get(job.state) ?? 0;
    if (state < FIRST_TERMINAL) this.#unfinished += 1;
    this.#state[slot] = state;
    this.#updated[slot] = Date.parse(job.updatedAt);
    this.#offset[slot] = at.offset;
    this.#length[slot] = at.length;
  }

  delete(key: string): void {
    const slot = this.#slots.get(key);
    if (slot === undefined) return;
    if (this.#state[slot]! < FIRST_TERMINAL) this.#unfinished -= 1;
    removeFrom(this.#aliases, this.#alias[slot]!, slot);
    removeFrom(this.#trimmedAliases, this.#trimmed[slot]!, slot);
    const twin = this.#twins.get(key);
    if (twin !== undefined) {
      this.#twins.delete(key);
      if (this.#twins.get(twin) === key) this.#twins.delete(twin);
    }
    this.#slots.delete(key);
    this.#keys[slot] = undefined;
    this.#free.push(slot);
  }

  /**
   * The key of the latest job announced under the URL whose key is `base` (its latest recording), or undefined when
   * none is known. The first is `base` itself; later ones `base-2`, `base-3`… (see Inbox.add).
   */
  latestVersion(base: string): string | undefined {
    for (let n = this.#versions.get(base) ?? 0; n >= 2; n -= 1) {
      if (this.#slots.has(`${base}-${n}`)) return `${base}-${n}`;
    }
    return this.#slots.has(base) ? base : undefined;
  }

  /** The key the next recording under the URL whose key is `base` gets. */
  nextVersion(base: string): string {
    const n = Math.max(this.#versions.get(base) ?? 1, this.#slots.has(base) ? 1 : 0) + 1;
    return `${base}-${n}`;
  }

  /** The key of the job's twin while both jobs are in the index. */
  twinOf(key: string): string | undefined {
    const twin = this.#twins.get(key);
    return twin !== undefined && this.#slots.has(twin) && this.#slots.has(key) ? twin : undefined;
  }

  /** Whether the job is linked to a twin (known or not yet read): a job has at most one. */
  hasTwin(key: string): boolean {
    return this.#twins.has(key);
  }

  /**
   * Keys of the jobs whose own alias (`own`) or trimmed alias (`trimmed`) has this hash (candidates: the caller
   * checks the real URLs).
   */
  aliasKeys(alias: number, which: 'own' | 'trimmed' = 'own'): string[] {
    const known = (which === 'own' ? this.#aliases : this.#trimmedAliases).get(alias);
    return known ? known.map((slot) => this.#keys[slot] as string) : [];
  }

  /** Keys oldest first (by receivedAt), optionally only those whose state and update time pass `keep`. */
  keys(keep?: (state: JobState, updatedAtMs: number) => boolean): string[] {
    const slots: number[] = [];
    for (const slot of this.#slots.values()) {
      if (!keep || keep(STATES[this.#state[slot]!] as JobState, this.#updated[slot]!)) slots.push(slot);
    }
    slots.sort((a, b) => this.#received[a]! - this.#received[b]! || a - b);
    return slots.map((slot) => this.#keys[slot] as string);
  }

  /** Every job's slot with where its snapshot lies (for the journal rewrite). */
  *entries(): IterableIterator<{ key: string; slot: number; offset: number; length: number }> {
    for (const [key, slot] of this.#slots)
      yield { key, slot, offset: this.#offset[slot]!, length: this.#length[slot]! };
  }

  /** Room for a new offset per slot, as `move` expects it. */
  offsetsLike(): Float64Array {
    return new Float64Array(this.#offset.length);
  }

  /** After a rewrite: every snapshot moved; `offsets` (from `offsetsLike`) is indexed by slot. */
  move(offsets: Float64Array): void {
    this.#offset = offsets;
  }

  #grow(): number {
    const slot = this.#keys.length;
    this.#keys.push(undefined);
    if (slot >= this.#offset.length) {
      const size = this.#offset.length * 2;
      const grow = <T extends Float64Array | Uint32Array | Uint8Array | Int32Array>(old: T, make: (n: number) => T) => {
        const next = make(size);
        next.set(old as never);
        return next;
      };
      this.#offset = grow(this.#offset, (n) => new Float64Array(n));
      this.#length = grow(this.#length, (n) => new Uint32Array(n));
      this.#state = grow(this.#state, (n) => new Uint8Array(n));
      this.#received = grow(this.#received, (n) => new Float64Array(n));
      this.#updated = grow(this.#updated, (n) => new Float64Array(n));
      this.#alias = grow(this.#alias, (n) => new Int32Array(n));
      this.#trimmed = grow(this.#trimmed, (n) => new Int32Array(n));
    }
    return slot;
  }
}
