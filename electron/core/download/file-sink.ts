/**
 * Moves a response body into the part file at a given offset with positional writes, in order. The socket engine
 * hands over runs of up to 512 KiB from its staging buffer (socket-response.ts); each run is written before the
 * buffer is read into again: with `fs.writeSync` on the descriptor (the engine runs in its own thread, so a write
 * to the page cache blocks nobody's webhook), or, for a handle a test replaced, through its `writev` with the
 * socket paused meanwhile. A moving upper bound lets a segment be shortened while it is being fetched.
 */
import type { Hash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { writeAll } from '../durable-fs.js';
import type { PartHandle } from './download-fs.js';
import type { SocketResponse } from './socket-response.js';

/** Writes every byte of `buffers` at `position` (the shared loop over short writes). */
export function writeAllAt(handle: PartHandle, buffers: Buffer[], position: number): Promise<void> {
  return writeAll(handle, buffers, position);
}

/** Writes every byte of `piece` at `position` on a descriptor, looping over short writes. */
function writeAllSync(fd: number, piece: Buffer, position: number): void {
  let done = 0;
  while (done < piece.length) {
    const wrote = writeSync(fd, piece, done, piece.length - done, position + done);
    if (wrote <= 0) throw Object.assign(new Error('The file system accepted no bytes.'), { code: 'EIO' });
    done += wrote;
  }
}

export interface SinkOptions {
  handle: PartHandle;
  /** Offset of the first byte of the body in the file. */
  position: number;
  /** Exclusive upper bound, read before every write (a segment may be split while running). */
  limit: () => number;
  /** Fed with exactly the bytes written, in order. */
  hash?: Hash | null;
  /** Called synchronously when a write is issued, with the position after it (before it completes). */
  onIssue?: (nextIssued: number) => void;
  /** Called after each completed write with its size and the next position (bytes are then in the file). */
  onWritten?: (bytes: number, nextPosition: number) => void;
}

export interface PumpResult {
  /** Bytes written to the file. */
  written: number;
  /** The limit was reached (the rest of the body, if any, was not read and the connection was closed). */
  reachedLimit: boolean;
}

/**
 * Reads the body of `res` into the file. Resolves when the body ended (or the limit was reached) and every byte is
 * written; rejects with the connection's or the write's error once the bytes that had arrived intact are written,
 * so the caller may checkpoint or close the file right away.
 */
export async function pumpToFile(res: SocketResponse, opts: SinkOptions): Promise<PumpResult> {
  let issued = opts.position;
  let written = 0;
  let reachedLimit = false;
  const fd = opts.handle.fd;
  /** The part of `piece` that fits under the limit, hashed and announced as issued. */
  const take = (piece: Buffer): Buffer => {
    const room = Math.max(0, opts.limit() - issued);
    const part = piece.length > room ? piece.subarray(0, room) : piece;
    if (part.length > 0) opts.hash?.update(part);
    return part;
  };
  /** After `part` is in the file: whether the body may go on (false once the limit is reached). */
  const wrote = (part: Buffer, position: number, offered: number): boolean => {
    written += part.length;
    if (part.length > 0) opts.onWritten?.(part.length, position + part.length);
    if (part.length < offered || issued >= opts.limit()) reachedLimit = true;
    return !reachedLimit;
  };
  await res.pump({
    write: (piece) => {
      if (reachedLimit) return false;
      const part = take(piece);
      const position = issued;
      issued += part.length;
      opts.onIssue?.(issued);
      if (part.length === 0 || fd !== undefined) {
        if (part.length > 0) writeAllSync(fd as number, part, position);
        return wrote(part, position, piece.length);
      }
      return writeAllAt(opts.handle, [part], position).then(() => wrote(part, position, piece.length));
    },
  });
  return { written, reachedLimit };
}
