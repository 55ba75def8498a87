/**
 * Gives written download buffers back early. Every socket read allocates a fresh 64 KiB Buffer; once its bytes
 * are in the part file it is garbage, but only a garbage collection frees it, and a download allocates so
 * little JavaScript per byte that V8 collects only when about 64 MB of such buffers have piled up. `tally
 * listen` peaked at about 200 MB downloading 1 GiB that way, 100 MB of it such buffers (issue 10). A
 * young-generation collection every RECLAIM_EVERY_BYTES written frees them while they are still young (0.2-2 ms
 * each on the 2-core test machine), and a full one every 32 MiB, marked concurrently so the event loop does not
 * wait for it, those still in flight during two young ones. Measured on `tally listen` with 1 GiB: peak RSS about
 * 100 MB instead of 125-200 (bench/listen-memory.bench.ts). At loopback speed that is about 0.5 s of collection
 * per GiB; at the speed of a real link to S3, a few per cent of one core.
 * The collector comes from V8's own `--expose-gc`, set at run time for new contexts only (the global `gc`
 * stays undefined): if that ever fails, downloads simply run without it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const RECLAIM_EVERY_BYTES = 2 * 1024 * 1024;
/** Every this many young collections, a full one (every 32 MiB written), run concurrently (`async`). */
const MAJOR_EVERY = 16;

type Collect = (options: { type: 'minor' | 'major'; execution: 'sync' | 'async' }) => void;
let collect: Collect | null | undefined;
let sinceLast = 0;
let minors = 0;

function collector(): Collect | null {
  if (collect !== undefined) return collect;
  try {
    setFlagsFromString('--expose-gc');
    const found: unknown = runInNewContext('typeof gc === "function" ? gc : null');
    collect = typeof found === 'function' ? (found as Collect) : null;
  } catch {
    collect = null;
  }
  return collect;
}

/** Counts bytes written by every download of the process; every RECLAIM_EVERY_BYTES, a young-generation GC. */
export function noteWritten(bytes: number): void {
  sinceLast += bytes;
  if (sinceLast < RECLAIM_EVERY_BYTES) return;
  sinceLast = 0;
  minors += 1;
  // Now and then a full one too: a buffer still in flight during two young collections has moved to the old generation.
  const major = minors % MAJOR_EVERY === 0;
  collector()?.(major ? { type: 'major', execution: 'async' } : { type: 'minor', execution: 'sync' });
}
