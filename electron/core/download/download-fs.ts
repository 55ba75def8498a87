/**
 * The file-system calls the engine makes, behind one object so tests can inject failures (ENOSPC in the
 * middle of a write, a statfs reporting a full disk) while everything else stays the real file system.
 */
import { constants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import { flushes } from '../flush-priority.js';
import type { StatfsFunction } from './disk.js';

/** The subset of `FileHandle` the engine writes through. */
export interface PartHandle {
  /**
   * The descriptor, when writes may go straight to it (fs.writeSync in the engine's thread). Absent for a handle
   * a test replaced: its writes then go through `writev`.
   */
  readonly fd?: number;
  writev(buffers: NodeJS.ArrayBufferView[], position?: number | null): Promise<{ bytesWritten: number }>;
  read(buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }>;
  truncate(len?: number): Promise<void>;
  sync(): Promise<void>;
  datasync(): Promise<void>;
  close(): Promise<void>;
}

export interface DownloadFs {
  open(file: string, flags: string): Promise<PartHandle>;
  stat(file: string): Promise<{ size: number; isFile(): boolean }>;
  rename(from: string, to: string): Promise<void>;
  unlink(file: string): Promise<void>;
  readFile(file: string, encoding: 'utf8'): Promise<string>;
  statfs: StatfsFunction;
}

const { O_CREAT, O_NOFOLLOW, O_RDWR, O_TRUNC, O_WRONLY } = constants;

/**
 * The engine's open flags with O_NOFOLLOW for every file it writes: a symbolic link planted at a part or sidecar
 * path fails the open (ELOOP) instead of sending bytes elsewhere. Read-only opens keep following: they are
 * folders opened for fsync, and the recordings folder itself may well be a link the user made. Windows has no
 * O_NOFOLLOW (and making links there needs privilege): the string flags are used as they are.
 */
export function noFollowFlags(flags: string): string | number {
  if (O_NOFOLLOW === undefined) return flags;
  switch (flags) {
    case 'w':
      return O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW;
    case 'r+':
      return O_RDWR | O_NOFOLLOW;
    default:
      return flags;
  }
}

/** The real file system. */
export const nodeFs: DownloadFs = {
  open: (file, flags) => fsp.open(file, noFollowFlags(flags)),
  stat: (file) => fsp.stat(file),
  rename: (from, to) => fsp.rename(from, to),
  unlink: (file) => fsp.unlink(file),
  readFile: (file, encoding) => fsp.readFile(file, encoding),
  statfs: (file) => fsp.statfs(file),
};

/**
 * The real file system with some calls replaced. Every flush of a file it opens (fsync, fdatasync) waits its
 * turn behind the recordings journal's commits: a download never delays a webhook's answer (flush-priority.ts).
 */
export function downloadFs(
  overrides?: Partial<DownloadFs>,
  turn: <T>(flush: () => Promise<T>) => Promise<T> = (flush) => flushes.background(flush),
): DownloadFs {
  const base = overrides ? { ...nodeFs, ...overrides } : nodeFs;
  // A replaced `open` may hand out handles whose writes are watched or failed on purpose: never bypassed.
  const direct = !overrides?.open;
  return { ...base, open: async (file, flags) => flushInBackground(await base.open(file, flags), direct, turn) };
}

function flushInBackground(
  handle: PartHandle,
  direct: boolean,
  turn: <T>(flush: () => Promise<T>) => Promise<T>,
): PartHandle {
  return {
    ...(direct && typeof handle.fd === 'number' ? { fd: handle.fd } : {}),
    writev: (buffers, position) => handle.writev(buffers, position),
    read: (buffer, offset, length, position) => handle.read(buffer, offset, length, position),
    truncate: (len) => handle.truncate(len),
    sync: () => turn(() => handle.sync()),
    datasync: () => turn(() => handle.datasync()),
    close: () => handle.close(),
  };
}

/** Size of a file, or null when it does not exist. */
export async function sizeOf(fsx: DownloadFs, file: string): Promise<number | null> {
  try {
    return (await fsx.stat(file)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Deletes a file; a missing file is fine. */
export async function removeIfExists(fsx: DownloadFs, file: string): Promise<void> {
  try {
    await fsx.unlink(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * Makes a rename or creation in `dir` durable. Windows cannot open directories; there NTFS journals the
 * metadata itself, so the failure is ignored.
 */
export async function fsyncDir(fsx: DownloadFs, dir: string): Promise<void> {
  let handle: PartHandle | null = null;
  try {
    handle = await fsx.open(dir, 'r');
    await handle.sync();
  } catch {
    // Best effort: see above.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Writes `text` to `file` atomically and durably: temp file, fsync, rename, fsync of the directory. */
export async function writeFileAtomic(fsx: DownloadFs, file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`;
  const handle = await fsx.open(tmp, 'w');
  try {
    const data = Buffer.from(text, 'utf8');
    let written = 0;
    while (written < data.length) {
      const { bytesWritten } = await handle.writev([data.subarray(written)], written);
      written += bytesWritten;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsx.rename(tmp, file);
  await fsyncDir(fsx, path.dirname(file));
}
