/**
 * Small durability helpers shared by every file Tally must not lose: the recordings journal, the upload
 * log, the receiver tokens and uploaded files.
 */
import { open } from 'node:fs/promises';

/**
 * Makes a rename or a new file's directory entry durable (fsync of the folder). Windows cannot open
 * folders for syncing; NTFS journals metadata itself, so there it is a no-op.
 */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The one write call `writeAll` needs: FileHandle.writev, or a test seam standing in for it. */
export interface VectorWriter {
  writev(buffers: Buffer[], position?: number | null): Promise<{ bytesWritten: number }>;
}

/**
 * Writes every byte of `buffers`, looping over short writes (a full pipe, a signal, some network file
 * systems). With a `position` the writes are positional and advance it; without, they append at the file's
 * own offset. A write that makes no progress is an EIO rather than a loop that never ends.
 */
export async function writeAll(file: VectorWriter, buffers: Buffer[], position: number | null = null): Promise<void> {
  let pending = buffers.filter((b) => b.length > 0);
  let at = position;
  while (pending.length > 0) {
    const { bytesWritten } = at === null ? await file.writev(pending) : await file.writev(pending, at);
    if (bytesWritten <= 0) throw Object.assign(new Error('The file system accepted no bytes.'), { code: 'EIO' });
    if (at !== null) at += bytesWritten;
    let skip = bytesWritten;
    const rest: Buffer[] = [];
    for (const buffer of pending) {
      if (skip >= buffer.length) {
        skip -= buffer.length;
        continue;
      }
      rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
      skip = 0;
    }
    pending = rest;
  }
}
