/**
 * Write-behind for a part file: a background fdatasync each time another stretch of bytes is in the file, so
 * the kernel writes the recording back to disk while the download still runs and the final fsync has only the
 * last stretch left. Linux starts writing dirty pages back on its own only after 30 s or once a tenth of the
 * memory is dirty, so without this a 1 GiB recording was transferred first and written back after, in the
 * final fsync (issue 22: about a quarter of the time of a fast download).
 *
 * A failed background sync is kept and thrown by `settle()`, which the engine awaits before its final fsync:
 * Linux reports a writeback error once per open file, so an error taken here and dropped would let the final
 * fsync succeed over lost bytes.
 */
import type { PartHandle } from './download-fs.js';

/** Bytes written between two background syncs (a stretch the disk here writes back in about 15 ms). */
export const WRITE_BEHIND_BYTES = 32 * 1024 * 1024;

export class WriteBehind {
  #since = 0;
  #running: Promise<void> | null = null;
  #error: Error | null = null;
  /** Background syncs started so far. */
  started = 0;

  constructor(
    private readonly handle: Pick<PartHandle, 'datasync'>,
    private readonly everyBytes: number = WRITE_BEHIND_BYTES,
  ) {}

  /** Notes `bytes` more in the file; starts a sync once a stretch is complete and none is running. */
  written(bytes: number): void {
    this.#since += bytes;
    if (this.#since < this.everyBytes || this.#running || this.#error) return;
    this.#since = 0;
    this.started += 1;
    this.#running = this.handle
      .datasync()
      .catch((error: unknown) => {
        this.#error ??= error instanceof Error ? error : new Error(String(error));
      })
      .finally(() => {
        this.#running = null;
      });
  }

  /** Waits for the running sync. @throws the first error a background sync met. */
  async settle(): Promise<void> {
    await this.#running;
    if (this.#error) throw this.#error;
  }
}
