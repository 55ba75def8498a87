/**
 * Creates a folder and proves it writable before anything relies on it, with one clear error naming the
 * folder when it cannot be used, and never a loop.
 *
 * Why not `mkdir(path, { recursive: true })`: where a file system refuses a folder with ENOENT although the
 * parent exists (/proc, /sys, some FUSE mounts), Node's recursive mkdir creates the "missing" parent, finds it
 * there and tries again, for ever, at full CPU (https://github.com/nodejs/node/issues/29999 and its
 * successors). Here each missing level is created once, non-recursively, and every failure is final.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rm, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { nested, note, type Note } from './notes.js';
import { ConfigError } from './errors.js';

/** How long a folder may take to answer (a stalled network drive) before it is refused. */
export const FOLDER_CHECK_TIMEOUT_MS = 5_000;

export interface FolderCheckOptions {
  /** Where the folder was given, for the message: `--folder`, `the Recordings folder setting`... */
  source: string | Note;
  timeoutMs?: number;
  /**
   * Write a probe file (default true). Callers about to write into the folder anyway (each download) skip it:
   * their own file proves the folder, and a probe would show up among the recordings for a moment.
   */
  probe?: boolean;
}

/** Why a folder cannot be written, from the system's error code, as a note the popover translates. */
export function folderProblemNote(code: string | undefined): Note {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return note('folderNoPermission');
    case 'EROFS':
      return note('folderReadOnly');
    case 'ENOTDIR':
    case 'EEXIST':
      return note('folderFileInWay');
    case 'ENOSPC':
      return note('folderDiskFull');
    case 'ENOENT':
      return note('folderNotAllowed');
    case 'ETIMEDOUT':
      return note('folderTimeout');
    case 'ENAMETOOLONG':
      return note('folderTooLong');
    case 'ELOOP':
      return note('folderLoops');
    default:
      return note('folderOther', { code: code ?? 'unknown error' });
  }
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'the disk is full';
    case 'ENOTDIR':
      return 'a part of the path is a file, not a folder';
    case 'ENOENT':
      return 'this file system does not allow folders there';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    case 'ELOOP':
      return 'the path loops through symbolic links';
    default:
      return code ? `the system said ${code}` : String((error as Error | null)?.message ?? error);
  }
}

async function check(folder: string, probe: boolean): Promise<void> {
  // Walk up to the deepest part that exists (bounded by the path's depth), then create each missing level once.
  const missing: string[] = [];
  let at = folder;
  for (;;) {
    const info = await lstat(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (info) {
      if (!info.isDirectory()) {
        if (info.isSymbolicLink()) {
          // A link to a folder is a deliberate choice of the user (e.g. ~/Recordings -> /mnt/disk): follow it once.
          const target = await stat(at).catch(() => null);
          if (target?.isDirectory()) break;
        }
        throw Object.assign(new Error(`${at} is not a folder`), { code: 'ENOTDIR' });
      }
      break;
    }
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const level of missing) {
    await mkdir(level).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
  if (!probe) return;
  // A folder can exist and still refuse files (read-only mount, no permission): prove it with a real file.
  const probeFile = resolve(folder, `.tally-write-check-${randomBytes(6).toString('hex')}`);
  const handle = await open(
    probeFile,
    constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW,
  );
  try {
    await handle.write(Buffer.from('ok'));
    await handle.sync();
  } finally {
    await handle.close();
    await rm(probeFile, { force: true });
  }
}

/**
 * Ensures `path` exists as a folder Tally can write into, or throws a ConfigError naming the folder, why it
 * cannot be used and where it came from (so the message says which flag or setting to change).
 */
export async function ensureWritableFolder(path: string, options: FolderCheckOptions): Promise<string> {
  const folder = resolve(path);
  const timeoutMs = options.timeoutMs ?? FOLDER_CHECK_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), timeoutMs);
  });
  try {
    await Promise.race([check(folder, options.probe ?? true), timeout]);
    return folder;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ETIMEDOUT' ? `it did not answer within ${Math.round(timeoutMs / 1000)} s` : reason(error);
    const source = typeof options.source === 'string' ? { source: options.source } : nested('source', options.source);
    // `why` stays the English clause the CLI has always printed; `whyNote` says it as a sentence elsewhere.
    const whyNote = code ? { whyNote: folderProblemNote(code).code, ...folderProblemNote(code).params } : {};
    throw new ConfigError(note('folderCannotUse', { folder, ...source, why, ...whyNote }), { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Inside the recordings folder Tally never writes through a symbolic link: one planted where a part file, its
 * sidecar or a name marker goes would send the download into a file elsewhere. Removes such a link (the link
 * only, never its target) and returns whether one was there, so the caller can say so.
 */
export async function removePlantedLink(file: string): Promise<boolean> {
  const info = await lstat(file).catch(() => null);
  if (!info?.isSymbolicLink()) return false;
  await rm(file, { force: true });
  return true;
}

/** Throws a ConfigError naming `folder` when it is a symbolic link: folders Tally makes inside its own are real. */
export async function refuseLinkedFolder(folder: string, what: string): Promise<void> {
  const info = await lstat(folder).catch(() => null);
  if (info?.isSymbolicLink()) {
    throw new ConfigError(
      `${what} ${folder} is a symbolic link; Tally does not write through links inside the recordings folder. Remove the link.`,
    );
  }
}
