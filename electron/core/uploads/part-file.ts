/**
 * The upload's part file on its way to a final name: written in bounded batches while hashed, then given a
 * free final name without ever overwriting or leaving a placeholder behind.
 */
import { createHash } from 'node:crypto';
import { link, rename, rm } from 'node:fs/promises';
import { writeAll } from '../durable-fs.js';
import { chooseFreeName, pickFinalName, sanitizeExt } from '../recordings/filename.js';

/** Writes are batched to about this size: fewer system calls, memory still bounded. */
const WRITE_BATCH_BYTES = 1024 * 1024;

/** The part of a FileHandle the route writes through; `wrapPart` may replace it (test seam for a full disk). */
export interface PartFile {
  writev(buffers: Buffer[]): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Writes chunks in batches of about 1 MiB with one write in flight while the next batch fills, hashing on
 * the way. Memory is bounded by two batches whatever the upload size.
 */
export class BatchWriter {
  readonly #file: PartFile;
  readonly #hash = createHash('sha256');
  readonly #onWritten: (bytes: number) => void;
  #batch: Buffer[] = [];
  #batchBytes = 0;
  #inFlight: Promise<void> | null = null;

  /** `onWritten` hears of each batch once it is on disk (the disk budget counts it). */
  constructor(file: PartFile, onWritten: (bytes: number) => void = () => undefined) {
    this.#file = file;
    this.#onWritten = onWritten;
  }

  async add(chunk: Buffer): Promise<void> {
    this.#hash.update(chunk);
    this.#batch.push(chunk);
    this.#batchBytes += chunk.length;
    if (this.#batchBytes >= WRITE_BATCH_BYTES) await this.#start();
  }

  async flush(): Promise<void> {
    await this.#start();
    await this.#inFlight;
  }

  sha256(): string {
    return this.#hash.digest('hex');
  }

  async #start(): Promise<void> {
    if (this.#inFlight) await this.#inFlight;
    this.#inFlight = null;
    if (this.#batchBytes === 0) return;
    const buffers = this.#batch;
    this.#batch = [];
    this.#batchBytes = 0;
    const bytes = buffers.reduce((sum, b) => sum + b.length, 0);
    const pending = writeAll(this.#file, buffers).then(() => this.#onWritten(bytes));
    // Observed on the next add/flush; this keeps a failure from being an unhandled rejection meanwhile.
    pending.catch(() => undefined);
    this.#inFlight = pending;
  }
}

/**
 * Gives the finished part its final name: `base.ext`, else `base (2).ext`... A hard link fails when the name
 * exists, so nothing is ever overwritten and no empty placeholder is left by a crash. File systems without
 * hard links (FAT, some network shares) fall back to an O_EXCL reservation and a rename.
 */
export async function publish(
  partPath: string,
  dir: string,
  base: string,
  ext: string,
  tooMany: () => Error,
): Promise<string> {
  const safeExt = sanitizeExt(ext);
  return pickFinalName(
    dir,
    base,
    safeExt,
    async (candidate) => {
      try {
        await link(partPath, candidate);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') return undefined;
        if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS' || code === 'EXDEV') {
          const reserved = await chooseFreeName(dir, base, safeExt);
          await rename(partPath, reserved.path);
          return reserved.path;
        }
        throw error;
      }
      await rm(partPath, { force: true });
      return candidate;
    },
    tooMany,
  );
}
