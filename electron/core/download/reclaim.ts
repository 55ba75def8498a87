/**
 * Gives written download buffers back early. Every socket read allocates a fresh 64 KiB Buffer; once its bytes are
 * in the part file it is garbage, but only a garbage collection frees it, and a download allocates so little
 * JavaScript per byte that V8 collects only when about 64 MB of such buffers have piled up. `tally listen` peaked
 * at about 200 MB downloading 1 GiB that way, 100 MB of it such buffers (issue 10). A young-generation collection
 * when more than RECLAIM_ABOVE_BYTES of them are held (checked every RECLAIM_EVERY_BYTES written) frees them while
 * they are still young (0.2-2 ms each on the 2-core test machine), and a full one now and then
 * (MajorCollectionRule), marked concurrently so the event loop does not wait for it, frees those still in flight
 * during two young ones. Measured on `tally listen` with 1 GiB: peak RSS 95-99 MB instead of 125-200
 * (bench/listen-memory.bench.ts). Issue 22 lowered both figures (1 MiB held, checked every 512 KiB) once the sink
 * freed its own chunks (file-sink.ts, `releaseReads`), which halves the garbage: peak 77-78 MB against 86 with the
 * same collection time per GiB. The full collections, every 16th young one before, were then a quarter of the
 * process's CPU for 1 GiB (59 of them, 0.9 s of 3.5 s, each marking the whole heap): every 32nd costs 0.3 MB more
 * at the peak for 15 % less CPU, and a mirror (studio/mirror-file.ts) 20 % less; the second round starts them only
 * when what young collections leave keeps growing. The collector comes from V8's own `--expose-gc`, set at run time
 * for new contexts only (the global `gc` stays undefined): if that ever fails, downloads simply run without it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const RECLAIM_EVERY_BYTES = 512 * 1024;
/** Array buffers held beyond this (socket reads waiting for a GC) are worth a collection. */
export const RECLAIM_ABOVE_BYTES = 1024 * 1024;
/** Growth of what young collections leave behind (promoted reads) that starts a full one, run concurrently. */
export const MAJOR_GROWTH_BYTES = 2 * 1024 * 1024;
/** At least this many forced young collections between two full ones. */
export const MAJOR_EVERY = 32;

type Collect = (options: { type: 'minor' | 'major'; execution: 'sync' | 'async' }) => void;
let collect: Collect | null | undefined;

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

/**
 * When a full collection is worth starting, after each forced young one. What a young collection leaves is
 * either in flight or was promoted (it outlived two collections while its connection waited), and only a full
 * collection frees the latter. So a full one starts when what young ones leave has grown by MAJOR_GROWTH_BYTES
 * over the least they left since the last full one, at most every MAJOR_EVERY young ones. A fast download
 * promotes almost nothing and gets none: each is a pause of the event loop that answers webhooks (14-48 ms
 * measured during a webhook burst on the loaded 2-core machine), and every 32nd young one, the rule before,
 * cost a fast 1 GiB download a fifth of its speed for no memory (peak 78-79 MB either way). A slow one with four
 * connections, whose reads wait long enough to be promoted, still gets them (peak 80-81 MB either way).
 */
export class MajorCollectionRule {
  #youngSinceMajor = 0;
  #leastLeft = Infinity;

  /** After a forced young collection that left `leftBytes` of array buffers: whether to start a full one. */
  afterYoung(leftBytes: number): boolean {
    this.#youngSinceMajor += 1;
    this.#leastLeft = Math.min(this.#leastLeft, leftBytes);
    if (this.#youngSinceMajor < MAJOR_EVERY || leftBytes < this.#leastLeft + MAJOR_GROWTH_BYTES) return false;
    this.#youngSinceMajor = 0;
    this.#leastLeft = Infinity;
    return true;
  }
}

let sinceLast = 0;
const majorRule = new MajorCollectionRule();
let minors = 0;
let majors = 0;
/** Array-buffer memory other work of the process keeps alive on purpose (`holdBuffers`). */
let heldElsewhere = 0;
/** Holds declared by work in flight (`holdBuffers` without `kept`): the full-collection rule waits for none. */
let passingHolds = 0;
/** Bytes of the `kept` holds: exact, so the rule's figure leaves them out (a pool filling and emptying). */
let keptBytes = 0;

/**
 * Counts bytes written by every download of the process. `heldOnPurpose` is array-buffer memory the caller
 * keeps alive by design (a mirror's read-ahead), not garbage: it raises the threshold, so a collection is
 * not forced for memory no collection can free; so does what other work declared with `holdBuffers`. Every
 * RECLAIM_EVERY_BYTES it looks at the memory held by array buffers (socket reads not yet collected); above
 * RECLAIM_ABOVE_BYTES, a young-generation collection,
 * and a concurrent full one when MajorCollectionRule says so. Below it nothing is forced: a forced collection
 * also promotes whatever else is young at that moment, which costs memory when the buffers are not the problem.
 */
export function noteWritten(bytes: number, heldOnPurpose = 0): void {
  sinceLast += bytes;
  if (sinceLast < RECLAIM_EVERY_BYTES) return;
  sinceLast = 0;
  const collect = collectYoung(heldOnPurpose);
  // Not while other work holds buffers on purpose for a while (a team receiver's puts, 0 to 16 MiB coming and
  // going during a burst): what young collections leave then says nothing about promoted reads, and the rule
  // started a full collection every MAJOR_EVERY young ones (10-12 per 300 recordings against 4 for a plain
  // listen, a quarter of a second of the event loop; issue 22). V8's own full collections still run. Buffers
  // kept for good (a pool of spare pieces) leave the rule on: their exact size is left out of its figure, so a
  // pool filling and emptying does not look like promoted reads.
  if (collect && passingHolds === 0 && majorRule.afterYoung(process.memoryUsage().arrayBuffers - keptBytes)) {
    collect({ type: 'major', execution: 'async' });
    majors += 1;
  }
}

/**
 * A young collection when more array buffers than RECLAIM_ABOVE_BYTES are held beyond what is held on purpose
 * (by the caller, and by other work through `holdBuffers`); answers the collector when one ran.
 */
function collectYoung(heldOnPurpose: number): Collect | null {
  if (process.memoryUsage().arrayBuffers < RECLAIM_ABOVE_BYTES + heldOnPurpose + heldElsewhere) return null;
  const collect = collector();
  if (!collect) return null;
  collect({ type: 'minor', execution: 'sync' });
  minors += 1;
  return collect;
}

/**
 * Declares array-buffer memory that work beside the downloads keeps alive on purpose until the returned
 * function is called: a team receiver's puts into the team store (studio/store.ts), each holding its file's
 * piece and the NATS client's copy of a chunk (`kept`: buffers kept for the process's life, such as the spare
 * pieces of clips, rather than for a piece of work). Without it every check during a burst found those buffers
 * above the threshold and forced a young collection that could not free them; worse, it promoted them (and
 * everything else young) to the old generation, and V8 then ran a full collection after nearly every one:
 * 57 full collections instead of 1 for 300 recordings of 1 MiB, 2.3 s of the receiver's 7.3 s of CPU
 * (issue 22).
 */
export function holdBuffers(bytes: number, kept = false): () => void {
  heldElsewhere += bytes;
  if (kept) keptBytes += bytes;
  else passingHolds += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    heldElsewhere -= bytes;
    if (kept) keptBytes -= bytes;
    else passingHolds -= 1;
  };
}

/**
 * Reclaim for one reader that knows how long its pieces stay alive: a member's mirror, whose chunks from the
 * team server arrive in batches (studio/store.ts) as views into buffers of about 1 MB each. Every
 * `spacingBytes` written (longer than a chunk lives: its batch and one more chunk), a young-generation
 * collection when array buffers above `heldOnPurpose` + RECLAIM_ABOVE_BYTES are held, and never a full one.
 * So spaced, no chunk is alive at two forced collections and none is promoted to the old generation.
 * `noteWritten`'s spacing (every 512 KiB, whatever is in flight) promoted every chunk of a batch still
 * waiting, and V8 then ran a full collection after nearly every forced one (58 for 512 MiB, a third of the
 * member's CPU; issue 22).
 */
export class SpacedReclaim {
  readonly #spacingBytes: number;
  readonly #heldOnPurpose: number;
  #since = 0;

  constructor(spacingBytes: number, heldOnPurpose: number) {
    this.#spacingBytes = spacingBytes;
    this.#heldOnPurpose = heldOnPurpose;
  }

  written(bytes: number): void {
    this.#since += bytes;
    if (this.#since < this.#spacingBytes) return;
    this.#since = 0;
    collectYoung(this.#heldOnPurpose);
  }
}

/** Young collections forced so far (tests and benches). */
export function forcedCollections(): number {
  return minors;
}

/** Full collections forced so far (tests and benches). */
export function forcedFullCollections(): number {
  return majors;
}
