/**
 * One recording from the team store into the follower's folder, verified and byte-identical. Bytes go to a
 * `.part` file (opened without following links) with a small `.resume` sidecar written at checkpoints, so a
 * follower killed mid-transfer continues from the last checkpoint instead of starting over. At the end the
 * size and sha256 must match the announcement; the sidecar then says "verified" (before any final name exists)
 * and the part is hard-linked to a free final name (never over another file; `pickFinalName`).
 *
 * A finished file is never opened for writing again. A crash between the link and the follower's cleanup
 * leaves a part that *is* the final file (two links to one inode) and a sidecar: the next run sees the
 * verified sidecar or the second link, checks the bytes it has (size and sha256, read only) and finds the final
 * name again, without the team store (the object may have expired meanwhile). Only a part that fails that
 * check is unlinked (never truncated: the final name keeps its bytes) and fetched again.
 */
import { systemClock } from '../time.js';
import { createHash, type Hash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { link, lstat, mkdir, open, readFile, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { note } from '../notes.js';
import { freeBytes, isNoSpaceError } from '../download/disk.js';
import { formatBytes } from '../download/errors.js';
import { SpacedReclaim, noteWritten } from '../download/reclaim.js';
import { syncDir, writeAll } from '../durable-fs.js';
import { TallyError } from '../errors.js';
import { refuseLinkedFolder, removePlantedLink } from '../folder-check.js';
import { mediaExt, pickFinalName, safeFileName } from '../recordings/filename.js';
import type { Announcement } from './announcement.js';
import { NATS_READ_SPAN, StaleResumeError, type TeamStore } from './store.js';
import { abortableDelay } from '../backoff.js';

/** The bytes or the hash did not match the announcement: the part is dropped and the transfer starts over. */
export class MirrorVerifyError extends Error {
  override name = 'MirrorVerifyError';
}

/** The folder has no room for the rest of the recording: one line naming the folder; retried until it has. */
export class FolderFullError extends TallyError {
  readonly code = 'studio_folder_full';
}

/** `free`: the space just read, when the caller has it (else read now). */
async function folderFull(
  dir: string,
  a: Announcement,
  offset: number,
  known?: number | null,
): Promise<FolderFullError> {
  const free = known ?? (await freeBytes(dir)) ?? 0;
  return new FolderFullError(
    note('studioFolderFull', {
      folder: dir,
      channel: a.channelId,
      needed: formatBytes(a.bytes - offset),
      free: formatBytes(free),
    }),
  );
}

export interface MirrorProgress {
  identity: string;
  channelId: string;
  bytes: number;
  totalBytes: number;
}

export interface MirrorOptions {
  store: TeamStore;
  folder: string;
  /** Sub-folder for client uploads (default `client`). */
  clientSubfolder?: string;
  announcement: Announcement;
  signal: AbortSignal;
  onProgress?: (p: MirrorProgress) => void;
  /** Bytes between two checkpoints (fsync + sidecar) besides one a second; default 64 MiB. */
  checkpointBytes?: number;
  /** A read that yields nothing for this long is abandoned and resumed (default 15 s). */
  idleTimeoutMs?: number;
  /** Most bytes per second to take from the team store (leaves bandwidth for a live broadcast); none when absent. */
  rateBytesPerSec?: number;
}

/** At most one checkpoint a second besides the byte spacing, so a slow transfer loses little to a crash. */
const CHECKPOINT_EVERY_MS = 1_000;

interface Sidecar {
  identity: string;
  offset: number;
  resume: string | null;
  /** Set once the part's size and sha256 matched: from then on it is only linked or renamed, never written. */
  verified?: true;
  /** The final name chosen (written before a rename, where the file system has no hard links). */
  final?: string;
}

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

export function partPathsFor(dir: string, a: Pick<Announcement, 'identity' | 'channelId' | 'fileName'>) {
  const tag = createHash('sha256').update(a.identity).digest('hex').slice(0, 10);
  const ext = mediaExt(path.extname(a.fileName));
  const part = path.join(dir, `${safeFileName(a.channelId, { maxBytes: 80 })}.${tag}${ext}.part`);
  return { part, sidecar: `${part}.resume` };
}

/** The folder a recording goes to (client uploads in their sub-folder, never through a link). */
export async function targetFolder(opts: Pick<MirrorOptions, 'folder' | 'clientSubfolder' | 'announcement'>) {
  if (opts.announcement.kind !== 'client') return opts.folder;
  const dir = path.join(opts.folder, safeFileName(opts.clientSubfolder ?? 'client'));
  await refuseLinkedFolder(dir, 'The client uploads folder');
  await mkdir(dir, { recursive: true });
  return dir;
}

async function readSidecar(file: string, identity: string): Promise<Sidecar | null> {
  if (await removePlantedLink(file)) return null;
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as Sidecar;
    if (value.identity !== identity || !Number.isSafeInteger(value.offset) || value.offset < 0) return null;
    if (value.final !== undefined && typeof value.final !== 'string') return null;
    return value;
  } catch {
    return null;
  }
}

async function writeSidecar(file: string, value: Sidecar, durable = false): Promise<void> {
  const tmp = `${file}.tmp`;
  await removePlantedLink(tmp);
  await writeFile(tmp, JSON.stringify(value), { mode: 0o600, ...(durable ? { flush: true } : {}) });
  await rename(tmp, file);
  // "verified" must be on disk before any final name is: a crash in between then finds it, not an old offset.
  if (durable) await syncDir(path.dirname(file));
}

/** The part's size and sha256, read only. */
async function matches(file: string, a: Pick<Announcement, 'bytes' | 'sha256'>): Promise<boolean> {
  const info = await lstat(file).catch(() => null);
  if (!info?.isFile() || info.size !== a.bytes) return false;
  const hash = createHash('sha256');
  await hashPrefix(file, a.bytes, hash);
  return hash.digest('hex') === a.sha256;
}

/**
 * What a crash after verification left: a part that is (or was renamed to) a final file. Resolves with the
 * final path when the bytes check out; otherwise the part's name is unlinked (a final file sharing its inode
 * keeps every byte) and null says to fetch again.
 */
async function reconcileFinished(
  dir: string,
  part: string,
  a: Announcement,
  saved: Sidecar | null,
): Promise<string | null> {
  const info = await lstat(part).catch(() => null);
  if (info?.isFile() && (await matches(part, a))) return placeFinal(dir, part, a);
  if (!info && saved?.final && path.dirname(saved.final) === dir && (await matches(saved.final, a))) {
    return saved.final; // renamed into place (no hard links here) before the crash
  }
  if (info) await rm(part, { force: true });
  return null;
}

async function hashPrefix(file: string, bytes: number, hash: Hash): Promise<void> {
  if (bytes === 0) return;
  for await (const chunk of createReadStream(file, { start: 0, end: bytes - 1 }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
  }
}

/** Mirrors the recording; resolves with its final path. Throws on failure (the caller retries). */
export async function mirrorRecording(opts: MirrorOptions): Promise<{ path: string; bytes: number }> {
  const a = opts.announcement;
  const dir = await targetFolder(opts);
  const { part, sidecar } = partPathsFor(dir, a);
  await removePlantedLink(part);
  const saved = await readSidecar(sidecar, a.identity);
  let partInfo = await lstat(part).catch(() => null);
  // Verified before, or already linked to a final name: never reopened for writing.
  if (saved?.verified || (partInfo && partInfo.nlink > 1)) {
    const final = await reconcileFinished(dir, part, a, saved);
    if (final) {
      await syncDir(dir);
      return { path: final, bytes: a.bytes };
    }
    await writeSidecar(sidecar, { identity: a.identity, offset: 0, resume: null });
    partInfo = null;
  }
  let offset =
    saved && partInfo?.isFile() && saved.offset <= partInfo.size && saved.offset <= a.bytes ? saved.offset : 0;
  let resume = offset > 0 ? (saved?.resume ?? null) : null;

  // Said before a byte is written, not as a raw ENOSPC halfway through.
  const free = await freeBytes(dir);
  if (free !== null && free < a.bytes - offset) throw await folderFull(dir, a, offset, free);
  const handle = await open(part, constants.O_RDWR | constants.O_CREAT | NO_FOLLOW, 0o644);
  try {
    await handle.truncate(offset);
    const hash = createHash('sha256');
    await hashPrefix(part, offset, hash);
    try {
      ({ offset, resume } = await receive(opts, handle, hash, offset, resume, sidecar));
    } catch (error) {
      // The stored object changed or vanished under the part: its bytes are worthless now.
      if (error instanceof StaleResumeError)
        await writeSidecar(sidecar, { identity: a.identity, offset: 0, resume: null });
      // Another program filled the disk meanwhile: what arrived is kept for when there is room again.
      if (isNoSpaceError(error)) throw await folderFull(dir, a, offset);
      throw error;
    }
    const sha256 = hash.digest('hex');
    if (offset !== a.bytes || sha256 !== a.sha256) {
      await handle.truncate(0);
      await writeSidecar(sidecar, { identity: a.identity, offset: 0, resume: null });
      throw new MirrorVerifyError(
        `${a.channelId}: ${offset} bytes with sha256 ${sha256.slice(0, 12)}… arrived, ${a.bytes} with ${a.sha256.slice(0, 12)}… were announced.`,
      );
    }
    await handle.sync();
    await writeSidecar(sidecar, { identity: a.identity, offset, resume, verified: true }, true);
  } finally {
    await handle.close();
  }
  const final = await placeFinal(dir, part, a, sidecar);
  await syncDir(dir);
  return { path: final, bytes: a.bytes };
}

/** Drops a finished (or abandoned) part and its sidecar. */
export async function removePart(dir: string, a: Pick<Announcement, 'identity' | 'channelId' | 'fileName'>) {
  const { part, sidecar } = partPathsFor(dir, a);
  await rm(part, { force: true });
  await rm(sidecar, { force: true });
}

async function receive(
  opts: MirrorOptions,
  handle: FileHandle,
  hash: Hash,
  start: number,
  startResume: string | null,
  sidecar: string,
): Promise<{ offset: number; resume: string | null }> {
  const a = opts.announcement;
  const every = opts.checkpointBytes ?? 64 * 1024 * 1024;
  const idleMs = opts.idleTimeoutMs ?? 15_000;
  const local = new AbortController();
  const onAbort = () => local.abort(opts.signal.reason);
  opts.signal.addEventListener('abort', onAbort, { once: true });
  let idle: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => local.abort(new Error(`no bytes for ${Math.round(idleMs / 1000)} s`)), idleMs);
  };
  let offset = start;
  let resume = startResume;
  const spaced =
    opts.store.kind === 'nats' ? new SpacedReclaim(NATS_READ_SPAN.liveBytes, NATS_READ_SPAN.inFlightBytes) : null;
  let sinceCheckpoint = 0;
  // Durations on the monotonic clock: a wall clock stepped back a day froze a throttled mirror (issue 30).
  let lastCheckpoint = systemClock.now();
  const began = systemClock.now();
  // A checkpoint records the offset reached when it starts, once the bytes before it are on disk: the datasync
  // runs beside the next writes instead of stopping them, and one runs at a time.
  let syncing: Promise<void> | null = null;
  const checkpoint = (): Promise<void> => {
    if (syncing) return syncing;
    const at: Sidecar = { identity: a.identity, offset, resume };
    sinceCheckpoint = 0;
    lastCheckpoint = systemClock.now();
    syncing = handle
      .datasync()
      .then(() => writeSidecar(sidecar, at))
      .finally(() => (syncing = null));
    return syncing;
  };
  try {
    if (offset >= a.bytes) return { offset, resume };
    arm();
    for await (const piece of opts.store.read(a.store, offset, resume, local.signal)) {
      arm();
      if (offset + piece.data.length > a.bytes) {
        throw new MirrorVerifyError(`${a.channelId}: the team store sent more than the ${a.bytes} announced bytes.`);
      }
      await writeAll(handle, [Buffer.from(piece.data.buffer, piece.data.byteOffset, piece.data.byteLength)], offset);
      hash.update(piece.data);
      const written = piece.data.length;
      piece.release?.();
      // The piece and the socket reads it came from are garbage now: collected early, as a download's are (the
      // team server's chunks, spaced by how long they live: store.ts).
      if (spaced) spaced.written(written);
      else noteWritten(written);
      offset += written;
      resume = piece.resume;
      sinceCheckpoint += written;
      if (!syncing && (sinceCheckpoint >= every || systemClock.now() - lastCheckpoint >= CHECKPOINT_EVERY_MS)) {
        const saving = checkpoint().catch(() => undefined); // a failed checkpoint only costs a longer resume
        // A throttled transfer waits anyway: its checkpoint is on disk before the progress that follows is said.
        if (opts.rateBytesPerSec) await saving;
      }
      opts.onProgress?.({ identity: a.identity, channelId: a.channelId, bytes: offset, totalBytes: a.bytes });
      if (offset >= a.bytes) break;
      if (opts.rateBytesPerSec) {
        const ahead = ((offset - start) / opts.rateBytesPerSec) * 1000 - (systemClock.now() - began);
        if (ahead > 0) {
          clearTimeout(idle);
          await abortableDelay(ahead, local.signal);
          arm();
        }
      }
    }
    if (local.signal.aborted) throw local.signal.reason instanceof Error ? local.signal.reason : new Error('aborted');
    return { offset, resume };
  } finally {
    clearTimeout(idle);
    opts.signal.removeEventListener('abort', onAbort);
    // What arrived is kept for the next attempt, whatever ended this one.
    await (syncing as Promise<void> | null)?.catch(() => undefined);
    if (sinceCheckpoint > 0 && offset < a.bytes) await checkpoint().catch(() => undefined);
  }
}

/**
 * A free final name for the verified part: `name.ext`, else `name (2).ext`... A name that already is this
 * part (same inode: linked before a crash) is taken as done. Where the file system has no hard links, an
 * O_EXCL placeholder is renamed over instead.
 */
async function placeFinal(dir: string, part: string, a: Announcement, sidecar?: string): Promise<string> {
  const ext = mediaExt(path.extname(a.fileName));
  const base = safeFileName(path.basename(a.fileName, path.extname(a.fileName)) || a.channelId);
  const partStat = await stat(part);
  return pickFinalName(dir, base, ext, async (candidate) => {
    try {
      await link(part, candidate);
      return candidate;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') {
        const other = await lstat(candidate).catch(() => null);
        return other && other.ino === partStat.ino && other.dev === partStat.dev ? candidate : undefined;
      }
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw error;
      try {
        const placeholder = await open(candidate, 'wx');
        await placeholder.close();
      } catch (inner) {
        if ((inner as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
        throw inner;
      }
      // Said before the part's name goes away, so a crash right after the rename finds the file by it.
      if (sidecar)
        await writeSidecar(
          sidecar,
          { identity: a.identity, offset: a.bytes, resume: null, verified: true, final: candidate },
          true,
        );
      await rename(part, candidate);
      return candidate;
    }
  });
}
