/**
 * Fair upload slots (issue 32, finding 2): 512 uploads that each announced 10 MB and sent a byte every 30 s
 * kept every genuine upload out with 503, because the cap refused newcomers long before stalled connections
 * were evicted. Here the stall rule of downloads applies to uploads: when a newcomer finds the uploads (or
 * those of its address) at their cap, the slowest upload below the minimum rate gives way to it, and a newcomer
 * is refused only when every upload in progress moves. A refusal and an eviction each say why.
 *
 * The rate is judged over the last window, or since the upload began when it is younger than that (after a
 * short grace, so a connection that just opened is never judged): a web client's recording arrives at network
 * speed, far above the minimum, while a trickle stays far below it however long it lasts.
 */
import { formatBytes } from '../download/errors.js';
import { note, type Note } from '../notes.js';
import { systemClock } from '../time.js';

/** When an upload is too slow to keep its slot. Tests shorten the durations; the rule stays the same. */
export interface UploadStallRule {
  /** An upload receiving less than this on average over the window may give way to a newcomer. */
  bytesPerSec: number;
  /** The window the rate is judged over (ms). */
  windowMs: number;
  /** An upload younger than this is never judged (ms). */
  graceMs: number;
}

export const DEFAULT_UPLOAD_STALL_RULE: UploadStallRule = { bytesPerSec: 1024, windowMs: 30_000, graceMs: 2_000 };

/**
 * Uploads from one address at once. A studio behind one public address stops two uploads per producer at the
 * same moment, so this is generous; it only keeps one sender from holding every slot. At the cap a stalled
 * upload of the same address gives way first, so a genuine upload from it still gets in.
 */
export const DEFAULT_MAX_UPLOADS_PER_ADDRESS = 64;

/** One upload in progress: how much of its body arrived, and when. */
export class UploadSlot {
  readonly address: string;
  readonly startedAt: number;
  /** Why it was closed to make room, once it was. */
  evicted: Note | null = null;
  #bytes = 0;
  /** Two marks of (time, bytes) at least half a window apart: the rate over about the last window. */
  #older: [number, number];
  #newer: [number, number];
  readonly #close: () => void;

  constructor(address: string, now: number, close: () => void) {
    this.address = address;
    this.startedAt = now;
    this.#older = [now, 0];
    this.#newer = [now, 0];
    this.#close = close;
  }

  /** `bytes` more of the body arrived at `now`. */
  received(bytes: number, now: number, windowMs: number): void {
    this.#bytes += bytes;
    if (now - this.#newer[0] >= windowMs / 2) {
      this.#older = this.#newer;
      this.#newer = [now, this.#bytes];
    }
  }

  /** Bytes per second over about the last window (since the start when younger), or null within the grace. */
  rate(now: number, rule: UploadStallRule): number | null {
    if (now - this.startedAt < rule.graceMs) return null;
    // The older mark is between half a window and a window and a half old once the upload is that old.
    const [at, bytes] = now - this.#newer[0] >= rule.windowMs ? this.#newer : this.#older;
    const seconds = Math.max(0.001, (now - at) / 1000);
    return (this.#bytes - bytes) / seconds;
  }

  /** Closes it to make room for `newcomer`'s sake, saying why. */
  evict(why: Note): void {
    this.evicted = why;
    this.#close();
  }
}

export interface UploadSlotsOptions {
  /** Uploads in progress at once. */
  max: number;
  perAddress?: number;
  rule?: Partial<UploadStallRule>;
  /** Monotonic milliseconds (default time.ts's `systemClock.now`; a test's hand clock). */
  clock?: () => number;
}

/** The uploads in progress, admitted fairly (see the file comment). */
export class UploadSlots {
  readonly max: number;
  readonly perAddress: number;
  readonly rule: UploadStallRule;
  readonly #clock: () => number;
  readonly #slots = new Set<UploadSlot>();

  constructor(opts: UploadSlotsOptions) {
    this.max = opts.max;
    this.perAddress = opts.perAddress ?? DEFAULT_MAX_UPLOADS_PER_ADDRESS;
    this.rule = { ...DEFAULT_UPLOAD_STALL_RULE, ...opts.rule };
    this.#clock = opts.clock ?? systemClock.now;
  }

  /**
   * A slot for a new upload from `address`, made by evicting a stalled upload when the uploads of that address
   * or all uploads are at their cap; or the note that says why none could be made. `close` ends the connection
   * of the new upload should it be evicted later.
   */
  admit(address: string, close: () => void): UploadSlot | Note {
    const fromAddress = [...this.#slots].filter((s) => s.address === address).length;
    if (fromAddress >= this.perAddress && !this.evictStalled((s) => s.address === address)) {
      return note('uploadBusyAddress', { count: fromAddress, address });
    }
    if (this.#slots.size >= this.max && !this.evictStalled()) {
      return note('uploadBusy', { count: this.#slots.size });
    }
    const slot = new UploadSlot(address, this.#clock(), close);
    this.#slots.add(slot);
    return slot;
  }

  /** The upload ended (saved, refused or gone). */
  leave(slot: UploadSlot): void {
    this.#slots.delete(slot);
  }

  /** `bytes` of `slot`'s body arrived now. */
  received(slot: UploadSlot, bytes: number): void {
    slot.received(bytes, this.#clock(), this.rule.windowMs);
  }

  /**
   * Closes the slowest upload below the minimum rate (among those `which` selects) and frees its slot at once.
   * Resolves whether one was closed.
   */
  evictStalled(which: (slot: UploadSlot) => boolean = () => true): boolean {
    const now = this.#clock();
    let slowest: UploadSlot | null = null;
    let slowestRate = Infinity;
    for (const slot of this.#slots) {
      if (slot.evicted || !which(slot)) continue;
      const rate = slot.rate(now, this.rule);
      if (rate === null || rate >= this.rule.bytesPerSec) continue;
      if (rate < slowestRate) [slowest, slowestRate] = [slot, rate];
    }
    if (!slowest) return false;
    const seconds = Math.round(Math.min(this.rule.windowMs, now - slowest.startedAt) / 1000);
    this.#slots.delete(slowest);
    slowest.evict(
      note('uploadEvicted', {
        rate: `${formatBytes(Math.floor(slowestRate))}/s`,
        seconds: Math.max(1, seconds),
        min: `${formatBytes(this.rule.bytesPerSec)}/s`,
      }),
    );
    return true;
  }
}
