/**
 * The disk space of one upload, drawn from the disk budget every writer of the recordings folder shares
 * (pipeline/disk-budget.ts, handed in as `UploadSpace`): a declared size is claimed whole before the body is
 * read, a chunked body step by step as it arrives, so no upload ever writes into the free space kept for the
 * journal (issue 32: an upload sized to the free space took it, and the next webhooks were refused).
 */

/**
 * Why a claim on the disk budget was refused (pipeline/disk-budget.ts answers with it too): bytes asked, bytes free
 * above the journal's reserve and beside the other reservations, and the reserve itself.
 */
export interface SpaceRefused {
  needed: number;
  free: number;
  floor: number;
}

/** The budget as the upload route sees it (the pipeline binds it to the recordings folder). */
export interface UploadSpace {
  /** Adds `bytes` to what upload `key` may write; null when granted, else why not. Never waits. */
  claim(key: string, bytes: number): Promise<SpaceRefused | null>;
  /** `bytes` of upload `key` reached the disk. */
  wrote(key: string, bytes: number): void;
  /** Upload `key` ended (saved, refused or gone): what it still held is free for others. */
  release(key: string): void;
}

/**
 * A chunked body claims this much at a time: a look at the free space per step, and at most this much claimed
 * and not yet written.
 */
export const UPLOAD_CLAIM_STEP_BYTES = 1024 * 1024;

/** One upload's claims against the shared budget. */
export class UploadClaim {
  readonly #space: UploadSpace;
  readonly #key: string;
  #claimed = 0;

  constructor(space: UploadSpace, key: string) {
    this.#space = space;
    this.#key = key;
  }

  /** Makes sure `total` bytes may be written, claiming in steps; null when they may, else why not. */
  async cover(total: number, step = UPLOAD_CLAIM_STEP_BYTES): Promise<SpaceRefused | null> {
    if (total <= this.#claimed) return null;
    const need = total - this.#claimed;
    // A whole step first (fewer looks at the disk); near a full disk, only what this chunk needs.
    let more = Math.max(step, need);
    let refused = await this.#space.claim(this.#key, more);
    if (refused && more > need) refused = await this.#space.claim(this.#key, (more = need));
    if (refused) return refused;
    this.#claimed += more;
    return null;
  }

  wrote(bytes: number): void {
    this.#space.wrote(this.#key, bytes);
  }

  release(): void {
    this.#space.release(this.#key);
  }
}
