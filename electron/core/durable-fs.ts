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
