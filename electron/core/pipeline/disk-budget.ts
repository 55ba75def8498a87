/**
 * Disk space shared by the downloads of one recordings folder. Each free-space check alone passed for two
 * 20 MB recordings on a 30 MB disk; both then stopped half way, each holding the space the other needed, and
 * retried until the service deleted both (issue 20). Here a download reserves what it still has to write before
 * it starts, and a download that does not fit beside the others waits for space instead of starting.
 *
 * A floor of free space is never given to downloads: the journal that acknowledges webhooks usually lives on the
 * same disk (a laptop's default), and a webhook it cannot write is lost for good, a download only delayed.
 *
 * Web client uploads draw from the same budget (issue 32: one upload sized to the free space took the journal's
 * reserve, and 30 of the next 40 webhooks were refused). An upload cannot wait (its sender never resends), so
 * one that does not fit is refused at once (`claim`), and the budget remembers it for the health.
 */
import { stat, statfs } from 'node:fs/promises';
import { note, type Note } from '../notes.js';
import { formatBytes, type DiskFullError } from '../download/errors.js';
import { discardPart } from '../download/fetch-file.js';
import type { SpaceRefused } from '../uploads/upload-space.js';

/** Floor bounds: a share of the disk, at least MIN and at most MAX (see `floorFor`). */
const FLOOR_SHARE = 0.05;
const MIN_FLOOR_BYTES = 1024 * 1024;
const MAX_FLOOR_BYTES = 256 * 1024 * 1024;

/** What statfs tells about the disk of a folder (a test seam may stand in). */
export type DiskStats = (
  folder: string,
) => Promise<{ bavail: number | bigint; bsize: number | bigint; blocks: number | bigint }>;

/** The disk health the queue exposes (`DownloadManager.diskStatus`, the pipeline's `disk` event). */
export interface DiskStatus {
  /** The recordings folder whose disk this is. */
  folder: string;
  /** Free bytes for this user, or null when the file system cannot say. */
  freeBytes: number | null;
  /** Bytes running downloads still have to write (reserved for them). */
  reservedBytes: number;
  /** Free space kept for the journal: downloads pause before the disk gets below it. */
  floorBytes: number;
  /** Recordings waiting for space. */
  waiting: number;
  /** Bytes the first waiting recording needs, or null when none waits. */
  neededBytes: number | null;
  /** 'ok', or 'low' while a recording waits for space (the numbers above say how much). */
  state: 'ok' | 'low';
  /**
   * The last web client upload refused for space, until an upload is saved or the disk has room for one as large:
   * what it needed and what was free above the floor.
   */
  uploadsRefused: { neededBytes: number; freeBytes: number } | null;
}

/**
 * Bytes a download still has to write when its size is known: the size less what its part already holds on
 * disk (allocated blocks: a segmented part is sparse until its ranges arrive). 0 when the size is unknown.
 */
export async function bytesToWrite(size: number | null, partPath: string): Promise<number> {
  if (size === null) return 0;
  const held = await stat(partPath).then(
    (s) => Math.min(s.size, s.blocks * 512),
    () => 0,
  );
  return Math.max(0, size - held);
}

/** The floor for a disk of `totalBytes`: 5 % of it, between 1 MiB and 256 MiB. */
export function floorFor(totalBytes: number): number {
  return Math.min(MAX_FLOOR_BYTES, Math.max(MIN_FLOOR_BYTES, Math.floor(totalBytes * FLOOR_SHARE)));
}

interface Reservation {
  folder: string;
  /** Bytes still to write when reserved. */
  bytes: number;
  /** Bytes written since. */
  written: number;
}

/** The reservations of one download manager (every folder it writes to). */
export class DiskBudget {
  readonly #stats: DiskStats;
  readonly #floorBytes: number | undefined;
  readonly #reservations = new Map<string, Reservation>();
  /** key → bytes it waits for, in arrival order. */
  readonly #waiting = new Map<string, number>();
  /** key → its part file, for the recordings that asked for space (see #reclaimFor). */
  readonly #parts = new Map<string, string>();
  #last: DiskStatus | null = null;
  #uploadsRefused: DiskStatus['uploadsRefused'] = null;

  constructor(opts: { stats?: DiskStats; floorBytes?: number } = {}) {
    this.#stats = opts.stats ?? ((folder) => statfs(folder));
    this.#floorBytes = opts.floorBytes;
  }

  /** Free bytes and the floor of `folder`'s disk (free null when unknown: network file systems). */
  async measure(folder: string): Promise<{ free: number | null; floor: number }> {
    try {
      const s = await this.#stats(folder);
      const bsize = Number(s.bsize);
      return { free: Number(s.bavail) * bsize, floor: this.#floorBytes ?? floorFor(Number(s.blocks) * bsize) };
    } catch {
      return { free: null, floor: this.#floorBytes ?? MIN_FLOOR_BYTES };
    }
  }

  /** Bytes other downloads of `folder` reserved and have not written yet. */
  reservedBy(folder: string, except?: string): number {
    let sum = 0;
    for (const [key, r] of this.#reservations) {
      if (key !== except && r.folder === folder) sum += Math.max(0, r.bytes - r.written);
    }
    return sum;
  }

  /**
   * Reserves `bytes` for `key` when they fit beside the other reservations and above the floor. Resolves null
   * when reserved (or when the free space is unknown), else how much is short and free.
   */
  async reserve(
    key: string,
    folder: string,
    bytes: number,
    partPath?: string,
  ): Promise<{ needed: number; free: number } | null> {
    if (partPath) this.#parts.set(key, partPath);
    let { free, floor } = await this.measure(folder);
    const others = this.reservedBy(folder, key);
    let usable = free === null ? null : free - floor - others;
    const running = [...this.#reservations].some(([k, r]) => k !== key && r.folder === folder);
    if (usable !== null && bytes > usable && !running && (await this.#reclaimFor(key, bytes - usable))) {
      ({ free, floor } = await this.measure(folder));
      usable = free === null ? null : free - floor;
    }
    if (usable !== null && bytes > usable) {
      this.#waiting.set(key, bytes);
      this.#update(folder, free, floor);
      return { needed: bytes, free: Math.max(0, usable) };
    }
    this.#waiting.delete(key);
    this.#reservations.set(key, { folder, bytes: Math.max(0, bytes), written: 0 });
    this.#update(folder, free, floor);
    return null;
  }

  /**
   * Nothing downloads, so no space will come back by itself, yet the parts of recordings waiting for space may
   * hold what `key` needs: two recordings that each stopped half way on a disk that holds one whole (a start
   * after the bug of issue 20, or a disk filled by someone else) waited for each other until both expired. The
   * parts of the other waiting recordings, largest first, are deleted until `short` bytes are free (they
   * download again from the start later). Resolves whether enough could be freed (nothing is deleted otherwise).
   */
  async #reclaimFor(key: string, short: number): Promise<boolean> {
    const held: { other: string; part: string; bytes: number }[] = [];
    for (const other of this.#waiting.keys()) {
      const part = this.#parts.get(other);
      if (other === key || !part) continue;
      const bytes = await stat(part).then(
        (s) => s.blocks * 512,
        () => 0,
      );
      if (bytes > 0) held.push({ other, part, bytes });
    }
    held.sort((a, b) => b.bytes - a.bytes);
    let freed = 0;
    const chosen = held.filter((h) => (freed < short ? ((freed += h.bytes), true) : false));
    if (freed < short) return false;
    for (const { part } of chosen) await discardPart(part).catch(() => undefined);
    return true;
  }

  /**
   * Adds `bytes` to the reservation of `key` (made if needed) when they fit beside every other reservation of the
   * disk and above the floor; never waits and never reclaims another's part. For what cannot wait: a web client
   * upload claims its declared size before its body is read, or its body step by step as it arrives. Resolves
   * null when granted (or when the free space is unknown), else why not; a refusal shows in `status`.
   */
  async claim(key: string, folder: string, bytes: number): Promise<SpaceRefused | null> {
    const { free, floor } = await this.measure(folder);
    const own = this.#reservations.get(key);
    const outstanding = own ? Math.max(0, own.bytes - own.written) : 0;
    const usable = free === null ? null : free - floor - this.reservedBy(folder, key) - outstanding;
    if (usable !== null && bytes > usable) {
      // What the upload needed in all (a chunked body claims step by step): the health shows it until one fits.
      this.#uploadsRefused = { neededBytes: (own?.bytes ?? 0) + bytes, freeBytes: Math.max(0, usable) };
      this.#update(folder, free, floor);
      return { needed: bytes, free: Math.max(0, usable), floor };
    }
    if (own) own.bytes += bytes;
    else this.#reservations.set(key, { folder, bytes, written: 0 });
    // An upload as large as the refused one fits now: uploads are no longer refused for space.
    const total = own?.bytes ?? bytes;
    if (this.#uploadsRefused && total >= this.#uploadsRefused.neededBytes) this.#uploadsRefused = null;
    this.#update(folder, free, floor);
    return null;
  }

  /**
   * Looks at the disk again while an upload refusal stands (the receive service does, with its disk checks):
   * once the refused upload would fit, uploads are no longer said to be refused for space.
   */
  async recheckUploads(folder: string): Promise<void> {
    if (this.#uploadsRefused === null) return;
    const { free, floor } = await this.measure(folder);
    this.#update(folder, free, floor);
  }

  /** An upload was saved: uploads are taken again (the health no longer says they are refused for space). */
  uploadSaved(): void {
    if (this.#uploadsRefused === null) return;
    this.#uploadsRefused = null;
    this.#refresh();
  }

  /** Counts bytes `key` wrote against its reservation. */
  wrote(key: string, bytes: number): void {
    const r = this.#reservations.get(key);
    if (r) r.written += bytes;
  }

  /**
   * `key` waits for space (it did not fit, or its download stopped on a full disk or at the floor); a finished
   * download wakes it. Resolves with the note that says so, with the numbers.
   */
  async wait(key: string, error: DiskFullError): Promise<Note> {
    this.#reservations.delete(key);
    if (!this.#waiting.has(key)) this.#waiting.set(key, error.neededBytes ?? 0);
    this.#refresh();
    const { free, floor } = await this.measure(error.folder);
    const numbers = {
      folder: error.folder,
      needed: formatBytes(error.neededBytes ?? 0),
      free: formatBytes(error.availableBytes ?? free ?? 0),
      floor: formatBytes(floor),
    };
    return note(error.neededBytes !== null ? 'diskWait' : 'diskBelowFloor', numbers);
  }

  /**
   * Follows the writes of `key`'s download: counts them against its reservation and, every quarter of the floor
   * written, looks whether the disk went below the floor (a fast download of unknown size must not run through
   * the journal's reserve between two looks); `onLow` then gets the free bytes.
   */
  watch(
    key: string,
    folder: string,
    onLow: (free: number) => void,
  ): { wrote: (bytes: number) => void; settled: () => Promise<void>; every: number } {
    const every = Math.max(64 * 1024, Math.floor((this.#last?.floorBytes ?? 0) / 4));
    let since = 0;
    let looking: Promise<void> | null = null;
    const wrote = (bytes: number): void => {
      this.wrote(key, bytes);
      since += bytes;
      if (looking || since < every) return;
      since = 0;
      looking = this.belowFloor(folder)
        .then((low) => {
          if (low) onLow(low.free);
        })
        .finally(() => {
          looking = null;
        });
    };
    return { wrote, settled: async () => void (await looking), every };
  }

  /** Whether `key`'s folder is below the floor now (checked while a download of unknown size writes). */
  async belowFloor(folder: string): Promise<{ free: number; floor: number } | null> {
    const { free, floor } = await this.measure(folder);
    return free !== null && free < floor ? { free, floor } : null;
  }

  /** The download of `key` ended (saved, failed or paused): its space is free for others. */
  release(key: string): void {
    this.#reservations.delete(key);
    this.#refresh();
  }

  /** `key` neither downloads nor waits any more (saved, expired, refused or stopped). */
  forget(key: string): void {
    this.#reservations.delete(key);
    this.#waiting.delete(key);
    this.#parts.delete(key);
    this.#refresh();
  }

  /** Keys waiting for space, first come first. */
  get waitingKeys(): string[] {
    return [...this.#waiting.keys()];
  }

  get status(): DiskStatus | null {
    return this.#last;
  }

  #refresh(): void {
    const last = this.#last;
    if (last) this.#update(last.folder, last.freeBytes, last.floorBytes);
  }

  #update(folder: string, free: number | null, floor: number): void {
    // The refused upload would fit now (space was freed, reservations ended): uploads are no longer refused. Its
    // need counts what it had claimed, so the space its own removed part gave back does not clear it.
    const refused = this.#uploadsRefused;
    if (refused && free !== null && free - floor - this.reservedBy(folder) >= refused.neededBytes) {
      this.#uploadsRefused = null;
    }
    const first = this.#waiting.values().next();
    this.#last = {
      folder,
      freeBytes: free,
      reservedBytes: this.reservedBy(folder),
      floorBytes: floor,
      waiting: this.#waiting.size,
      neededBytes: first.done ? null : first.value,
      state: this.#waiting.size > 0 ? 'low' : 'ok',
      uploadsRefused: this.#uploadsRefused,
    };
  }
}
