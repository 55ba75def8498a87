/**
 * Moves a response body into the part file at a given offset with positional writes, one at a time and in order.
 * Backpressure comes from the Writable (at most ~256 KiB queued per connection), the reads of one event-loop
 * turn are gathered into one write of up to 256 KiB, and a moving upper bound lets a segment be shortened while
 * it is being fetched.
 */
import type { Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { writeAll } from '../durable-fs.js';
import type { PartHandle } from './download-fs.js';
import { noteWritten } from './reclaim.js';

/**
 * Bytes buffered per connection before the socket is paused: 256 KiB (512 KiB before issue 22), which kept
 * the speed on loopback and brings `tally listen` with four throttled connections from 82-83 to 80 MB.
 */
const SINK_HIGH_WATER_MARK = 1 << 18;
/** The most bytes gathered into one positional write (see PositionalSink._writev). */
const WRITE_BATCH_BYTES = 1 << 18;

type Callback = (error?: Error | null) => void;

/** Writes every byte of `buffers` at `position` (the shared loop over short writes). */
export function writeAllAt(handle: PartHandle, buffers: Buffer[], position: number): Promise<void> {
  return writeAll(handle, buffers, position);
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

/**
 * Gives back the memory of body chunks once they are in the file. Node's HTTP parser hands each body chunk
 * over in a buffer of its own, which only this sink holds; detaching it (ES2024 `ArrayBuffer.transfer`) lets
 * much of its memory go before the next garbage collection, though not all of it at once: with a bare
 * `http.get` the array buffers of a 96 MiB download peaked at 56 MB with the detach and 82 MB without.
 * Together with reclaim.ts (whose collections free the rest) `tally listen` peaks 1-2 MB lower for a large
 * download and spends less time collecting (issue 22). A chunk that is a view into a larger buffer is left to
 * the collector.
 */
function releaseReads(chunks: Array<{ chunk: Buffer }>): void {
  for (const { chunk } of chunks) {
    const whole = chunk.buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer; detached: boolean };
    if (chunk.byteOffset === 0 && chunk.byteLength === whole.byteLength && !whole.detached) whole.transfer(0);
  }
}

class PositionalSink extends Writable {
  /** Position where the next write will go (counts issued, not completed, writes). */
  issued: number;
  reachedLimit = false;
  #inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly opts: SinkOptions) {
    super({ highWaterMark: SINK_HIGH_WATER_MARK });
    this.issued = opts.position;
  }

  /** Chunks taken but not yet written (see _writev), and their bytes. */
  #held: Array<{ chunk: Buffer }> = [];
  #heldBytes = 0;
  /** A write is in flight: writes are one at a time, in order (a checkpoint trusts every byte below `pos`). */
  #writing = false;
  /** The stream's callback for chunks taken while a write was in flight: answered once it is done. */
  #waiting: Callback | null = null;
  /** `_final`'s callback while a write was in flight. */
  #finalWaiting: Callback | null = null;
  #flushQueued = false;

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: Callback): void {
    this._writev([{ chunk }], callback);
  }

  /**
   * Chunks are gathered into writes of up to WRITE_BATCH_BYTES: a socket read is 64 KiB, and each write costs the
   * JavaScript thread a trip through the thread pool (a fifth of a fast download's speed, measured). What arrived
   * during one turn of the event loop is written at the end of that turn even when it is less, so a slow
   * connection's bytes are never held back (its progress and the stall rule see them as before); on a fast one
   * the reads of one turn make up the batch.
   */
  override _writev(chunks: Array<{ chunk: Buffer }>, callback: Callback): void {
    for (const entry of chunks) {
      this.#held.push(entry);
      this.#heldBytes += entry.chunk.length;
    }
    if (this.#writing) this.#waiting = callback;
    else this.#took(callback);
  }

  override _final(callback: Callback): void {
    if (this.#writing) this.#finalWaiting = callback;
    else this.#writeHeld(callback);
  }

  #took(callback: Callback): void {
    if (
      this.reachedLimit ||
      this.#heldBytes >= WRITE_BATCH_BYTES ||
      this.issued + this.#heldBytes >= this.opts.limit()
    ) {
      this.#writeHeld(callback);
      return;
    }
    callback();
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    setImmediate(() => {
      this.#flushQueued = false;
      if (this.#writing || this.#held.length === 0 || this.destroyed) return;
      this.#writeHeld((error) => {
        if (error) this.destroy(error);
      });
    });
  }

  #writeHeld(callback: Callback): void {
    const held = this.#held;
    this.#held = [];
    this.#heldBytes = 0;
    if (held.length === 0) {
      callback();
      return;
    }
    this.#writing = true;
    this.#issue(held, (error) => {
      this.#writing = false;
      const waiting = this.#waiting;
      const final = this.#finalWaiting;
      this.#waiting = null;
      this.#finalWaiting = null;
      callback(error);
      if (error) {
        waiting?.(error);
        final?.(error);
      } else if (waiting) this.#took(waiting);
      else if (final) this.#writeHeld(final);
    });
  }

  #issue(chunks: Array<{ chunk: Buffer }>, callback: Callback): void {
    if (this.reachedLimit) {
      callback();
      return;
    }
    const limit = this.opts.limit();
    let room = limit - this.issued;
    const buffers: Buffer[] = [];
    let length = 0;
    for (const { chunk } of chunks) {
      if (room <= 0) break;
      const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
      buffers.push(piece);
      this.opts.hash?.update(piece);
      room -= piece.length;
      length += piece.length;
    }
    const position = this.issued;
    this.issued += length;
    // Only the write that reaches the limit announces it, once it is on disk (callback() below may start the next).
    const reachesLimit = this.issued >= limit;
    if (reachesLimit) this.reachedLimit = true;
    this.opts.onIssue?.(this.issued);
    const write = length > 0 ? writeAllAt(this.opts.handle, buffers, position) : Promise.resolve();
    this.#inFlight = write.then(
      () => {
        releaseReads(chunks);
        if (length > 0) this.opts.onWritten?.(length, position + length);
        callback();
        if (reachesLimit) this.emit('limit');
      },
      (error: Error) => callback(error),
    );
  }

  /** Resolves once no write is in flight (whatever its outcome). */
  idle(): Promise<void> {
    return this.#inFlight.catch(() => undefined);
  }
}

export interface PumpResult {
  /** Bytes written to the file. */
  written: number;
  /** The limit was reached (the rest of the body, if any, was discarded and the response destroyed). */
  reachedLimit: boolean;
}

/**
 * Pipes `res` into the file. Resolves when the body ended (or the limit was reached) and every byte is
 * written; rejects with the stream or write error only after any write in flight has settled, so the caller
 * may checkpoint or close the file right away.
 */
export function pumpToFile(res: IncomingMessage, opts: SinkOptions): Promise<PumpResult> {
  let written = 0;
  const sink = new PositionalSink({
    ...opts,
    onWritten: (bytes, next) => {
      written += bytes;
      noteWritten(bytes);
      opts.onWritten?.(bytes, next);
    },
  });
  return new Promise<PumpResult>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, fromBody = false): void => {
      if (settled) return;
      settled = true;
      res.unpipe(sink);
      if (error || sink.reachedLimit) res.destroy();
      const done = () => {
        sink.destroy();
        if (error) reject(error);
        else resolve({ written, reachedLimit: sink.reachedLimit });
      };
      if (error && fromBody && !sink.errored && !sink.reachedLimit) {
        // The connection failed, not the file: what the sink already holds arrived intact and in order, so it is
        // written before giving up. The next attempt then resumes after it instead of fetching it again.
        sink.once('finish', done);
        sink.once('error', done);
        sink.end();
        return;
      }
      void sink.idle().then(done);
    };
    sink.once('limit', () => finish(null));
    sink.once('finish', () => finish(null));
    sink.once('error', (error) => finish(error));
    res.once('error', (error) => finish(error, true));
    res.once('close', () => {
      // A body cut short without an 'error' (seen with some proxies) must not pass as complete.
      if (!res.complete && !sink.reachedLimit) {
        finish(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }), true);
      }
    });
    // IncomingMessage only emits 'error' when someone listens: a body that died before we got here (while
    // the caller was still preparing the file) is only visible as `destroyed`.
    if (res.destroyed) {
      finish(res.errored ?? Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      return;
    }
    res.pipe(sink);
  });
}
