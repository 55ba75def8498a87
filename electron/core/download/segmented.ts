/**
 * Parallel ranged download into one part file, like `aria2c -x4 -s4`, but adaptive: it starts with the one
 * connection that probed the file and adds ranges only while they add throughput. Origins that throttle each
 * connection (nginx `limit_rate`, many CDNs) give N times the speed with N connections; on a fast link one
 * stream is faster than four sharing it (and the CPU). Every RAMP window the engine measures the total rate:
 * while one connection stays under `splitBelowBytesPerSec` and the last step raised the total by MIN_GAIN (1.3x),
 * the connection count doubles (up to `segments`); otherwise it stays where it is for the rest of the file.
 * Every connection writes its bytes at their offset; segment progress is checkpointed (fdatasync, then the
 * sidecar) about once a second, so after a crash each segment resumes where its last durable byte was. A
 * connection that runs out of work takes over the second half of the segment with the most bytes left, so one
 * slow connection does not hold up the end.
 */
import type { Hash } from 'node:crypto';
import type { SocketResponse } from './socket-response.js';
import type { EngineContext } from './engine-context.js';
import { ifRangeValidator, RestartFromZero, transferError } from './engine-context.js';
import { HttpStatusError, NetworkError, TimeoutError } from './errors.js';
import { httpDate } from '../time.js';
import { pumpToFile } from './file-sink.js';
import { WriteBehind } from './write-behind.js';
import { abortError, describeEndpoint, errorHint, openResponse, parseContentRange } from './http-request.js';
import type { PartState, Segment } from './part-state.js';
import { writePartState } from './part-state.js';
import { systemClock } from '../time.js';

/** How often a segment may fail without making progress before the whole download fails. */
const SEGMENT_RETRIES = 2;
/** A step that added connections must raise the total rate by this factor for the ramp to go on. */
const MIN_GAIN = 1.3;

/** What the first connection hashed while streaming from byte 0 (only that prefix of the file). */
export interface StreamedPrefix {
  hash: Hash;
  /** Bytes of the file, from 0, that went through `hash`. */
  bytes: number;
}

interface LiveSegment extends Segment {
  active: boolean;
  /** Position after the last issued write (may be ahead of `pos` while a write is in flight). */
  issued: number;
  failures: number;
}

/** Splits [0, total) into `count` contiguous segments of nearly equal size (each at least 1 byte). */
export function planSegments(total: number, count: number): Segment[] {
  const n = Math.max(1, Math.min(Math.floor(count), total));
  const size = Math.floor(total / n);
  const segments: Segment[] = [];
  for (let i = 0; i < n; i += 1) {
    const start = i * size;
    const end = i === n - 1 ? total : start + size;
    segments.push({ start, end, pos: start });
  }
  return segments;
}

/** Bytes of the part already on disk according to the segment list. */
export function segmentBytes(segments: readonly Segment[]): number {
  return segments.reduce((sum, seg) => sum + (seg.pos - seg.start), 0);
}

/**
 * Fetches every unfinished segment of `state`, starting with one connection and ramping up to `ctx.segments`
 * while more connections add throughput. `first` is an already open response starting at byte 0 (the probe of
 * a fresh download), used for the segment at 0; with `hash`, its bytes are hashed as they are written.
 * Resolves with the prefix of the file that went through `hash` (null when there was none or it is unusable):
 * the caller hashes the rest from disk, so an adaptive download never verifies fewer bytes than a fixed one.
 * @throws RestartFromZero when the server stops honouring ranges or its copy changed; transfer errors.
 */
export async function runSegmented(
  ctx: EngineContext,
  url: URL,
  state: PartState,
  first: SocketResponse | null,
  hash: Hash | null = null,
): Promise<StreamedPrefix | null> {
  const total = state.total;
  if (total === null || !state.segments) throw new RestartFromZero('segmented state without a size');
  const segs: LiveSegment[] = state.segments
    .map((s) => ({ ...s, active: false, issued: s.pos, failures: 0 }))
    .sort((a, b) => a.start - b.start);
  const validator = ifRangeValidator(state);
  const handle = await ctx.fsx.open(ctx.partPath, 'r+').catch((error: unknown) => {
    first?.destroy();
    throw transferError(ctx, error, url);
  });

  const inner = new AbortController();
  const onOuterAbort = (): void => inner.abort(ctx.signal?.reason);
  if (ctx.signal?.aborted) onOuterAbort();
  else ctx.signal?.addEventListener('abort', onOuterAbort, { once: true });

  let fatal: Error | null = null;
  const fail = (error: Error): void => {
    fatal ??= error;
    inner.abort(error);
  };

  const behind = new WriteBehind(handle, ctx.writeBehindBytes);
  const snapshot = (): PartState => ({ ...state, segments: segs.map(({ start, end, pos }) => ({ start, end, pos })) });
  let lastCheckpoint = systemClock.now();
  let checkpointing: Promise<void> | null = null;
  const checkpoint = async (): Promise<void> => {
    // Snapshot first: every position in it was written before the datasync below starts.
    const snap = snapshot();
    await handle.datasync();
    await writePartState(ctx.fsx, ctx.partPath, snap);
  };
  const maybeCheckpoint = (): void => {
    const now = systemClock.now();
    if (checkpointing || now - lastCheckpoint < ctx.checkpointIntervalMs) return;
    lastCheckpoint = now;
    checkpointing = checkpoint()
      .catch((error: unknown) => fail(transferError(ctx, error, url)))
      .finally(() => {
        checkpointing = null;
      });
  };

  const pick = (): LiveSegment | null => {
    const idle = segs.find((s) => !s.active && s.pos < s.end);
    if (idle) return idle;
    let best: LiveSegment | null = null;
    for (const s of segs) {
      if (s.active && (!best || s.end - s.issued > best.end - best.issued)) best = s;
    }
    if (!best || best.end - best.issued < 2 * ctx.minSplitBytes) return null;
    const mid = best.issued + Math.floor((best.end - best.issued) / 2);
    const stolen: LiveSegment = { start: mid, end: best.end, pos: mid, issued: mid, active: false, failures: 0 };
    best.end = mid;
    segs.splice(segs.indexOf(best) + 1, 0, stolen);
    return stolen;
  };

  let open = 0;
  /** Connections whose response is streaming into the file right now. */
  let receiving = 0;
  /** Bytes written by this call (all connections). */
  let written = 0;
  const fetchSegment = async (
    seg: LiveSegment,
    response: SocketResponse | null,
    segHash: Hash | null,
  ): Promise<void> => {
    let res = response;
    if (!res) {
      const headers: Record<string, string> = { range: `bytes=${seg.pos}-${seg.end - 1}` };
      if (validator) headers['if-range'] = validator;
      const opened = await openResponse({
        url,
        headers,
        policy: ctx.policy,
        signal: inner.signal,
        timeoutMs: ctx.timeoutMs,
      });
      res = opened.res;
      const status = res.statusCode ?? 0;
      if (status === 206) {
        const date = httpDate(res.headers.date);
        if (date !== null) ctx.onServiceDate?.(date);
        const range = parseContentRange(res.headers['content-range']);
        const etag = res.headers.etag ?? null;
        const changed = state.etag !== null && etag !== null && etag !== state.etag;
        if (!range || range.start !== seg.pos || (range.total !== null && range.total !== total) || changed) {
          res.destroy();
          throw new RestartFromZero('the server copy changed while downloading');
        }
      } else if (status === 200 || status === 416) {
        res.destroy();
        throw new RestartFromZero('the server stopped honouring byte ranges');
      } else {
        throw new HttpStatusError(status, opened.url.host, await errorHint(res), httpDate(res.headers.date));
      }
    }
    receiving += 1;
    const result = await pumpToFile(res, {
      handle,
      position: seg.pos,
      limit: () => seg.end,
      hash: segHash,
      onIssue: (next) => {
        seg.issued = next;
      },
      onWritten: (bytes, next) => {
        seg.pos = next;
        written += bytes;
        ctx.meter.add(bytes);
        behind.written(bytes);
        maybeCheckpoint();
      },
    })
      .catch((error: unknown) => {
        throw transferError(ctx, error, url);
      })
      .finally(() => {
        receiving -= 1;
      });
    if (!result.reachedLimit && seg.pos < seg.end) {
      throw new NetworkError(describeEndpoint(url), 'the connection closed before its part of the file was complete');
    }
  };

  let prefix: StreamedPrefix | null = null;
  let running = 0;
  const worker = async (initial: SocketResponse | null): Promise<void> => {
    running += 1;
    try {
      await work(initial);
    } finally {
      running -= 1;
    }
  };
  const work = async (initial: SocketResponse | null): Promise<void> => {
    let response = initial;
    while (!inner.signal.aborted) {
      const seg = response ? (segs.find((s) => s.start === 0 && s.pos === 0) ?? null) : pick();
      if (!seg) {
        response?.destroy();
        return;
      }
      const before = seg.pos;
      seg.active = true;
      open += 1;
      ctx.maxConnections = Math.max(ctx.maxConnections, open);
      // Only the probe's response starts at byte 0 of a fresh file: its bytes are the prefix that gets hashed.
      const segHash = response && hash && seg.start === 0 && seg.pos === 0 ? hash : null;
      try {
        await fetchSegment(seg, response, segHash);
      } catch (error) {
        if (inner.signal.aborted) return;
        const transient = error instanceof NetworkError || error instanceof TimeoutError;
        if (transient && seg.pos > before) seg.failures = 0;
        else if (transient) seg.failures += 1;
        if (!transient || seg.failures > SEGMENT_RETRIES) {
          fail(error as Error);
          return;
        }
      } finally {
        // Every byte hashed is on disk only if every issued write completed; otherwise the prefix is not used.
        if (segHash) prefix = seg.issued === seg.pos ? { hash: segHash, bytes: seg.pos } : null;
        seg.active = false;
        open -= 1;
        response = null;
      }
    }
  };

  const workers: Promise<void>[] = [worker(first)];
  // The ramp: measure the total rate over a window once every connection asked for is streaming; double the
  // count while one connection is slow and the last step paid for itself. It never takes connections away.
  const ramp = { target: 1, lastRate: null as number | null, at: systemClock.now(), bytes: 0, settled: 0 };
  const splitBelow = ctx.ramp.splitBelowBytesPerSec;
  const timer =
    ctx.segments > 1
      ? setInterval(
          () => {
            const now = systemClock.now();
            if (running < ramp.target || inner.signal.aborted) {
              clearInterval(timer); // a connection found no work left to take: nothing more to split
              return;
            }
            // A window starts one tick after every connection of the step is streaming: what a socket held
            // before its first write (the probe's bytes that arrived while the part was being set up) would
            // otherwise count as speed.
            if (receiving < ramp.target || ramp.settled < 1) {
              ramp.settled = receiving < ramp.target ? 0 : ramp.settled + 1;
              ramp.at = now;
              ramp.bytes = written;
              return;
            }
            if (now - ramp.at < ctx.ramp.windowMs) return;
            const rate = ((written - ramp.bytes) * 1000) / (now - ramp.at);
            ramp.at = now;
            ramp.bytes = written;
            ramp.settled = 0;
            const paid = ramp.lastRate === null || rate >= ramp.lastRate * MIN_GAIN;
            if (!paid || rate / ramp.target >= splitBelow || ramp.target >= ctx.segments) {
              clearInterval(timer);
              return;
            }
            ramp.lastRate = rate;
            const next = Math.min(ctx.segments, ramp.target * 2);
            for (let i = ramp.target; i < next; i += 1) workers.push(worker(null));
            ramp.target = next;
          },
          Math.max(5, ctx.ramp.windowMs / 4),
        )
      : undefined;

  try {
    // The ramp may add workers while these are awaited; it stops (below) before the list can be read as done.
    for (let i = 0; i < workers.length; i += 1) await workers[i];
    clearInterval(timer);
    await checkpointing;
    const failure: Error | null = fatal ?? (ctx.signal?.aborted ? abortError(ctx.signal) : null);
    if (failure) {
      if (!(failure instanceof RestartFromZero)) await checkpoint().catch(() => undefined);
      throw failure;
    }
    if (segs.some((s) => s.pos < s.end)) {
      await checkpoint().catch(() => undefined);
      throw new NetworkError(describeEndpoint(url), 'some parts of the file could not be fetched');
    }
    await behind.settle();
    await handle.sync();
    return prefix;
  } finally {
    clearInterval(timer);
    // A sync still running must end before the handle closes (its failure, if any, was thrown above or is moot).
    await behind.settle().catch(() => undefined);
    ctx.signal?.removeEventListener('abort', onOuterAbort);
    await handle.close().catch(() => undefined);
  }
}
