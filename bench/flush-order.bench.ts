/**
 * What downloads' flushes do to a journal commit on this disk. A commit is one O_DSYNC append of a batch-sized
 * line (what the recordings journal writes on Linux); three "downloads" beside it save 1 MiB files back to back
 * the way the engine does (write, fsync, rename, fsync of the folder). Three phases, one after the other: the
 * commits alone, beside the downloads with every flush issued at once (before issue 22), and beside them with
 * the process's flush order (electron/core/flush-priority.ts: commits urgent, download flushes one at a time
 * after them, deferred at most 50 ms). Reports the commits' p50/p99 and how many files the downloads saved.
 */
import { constants } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { FlushPriority } from '../electron/core/flush-priority.js';
import { percentile, type BenchContext, type BenchRow } from './lib/harness.js';

type Mode = 'alone' | 'unordered' | 'ordered';

interface Phase {
  p50: number;
  p99: number;
  saved: number;
}

async function phase(dir: string, mode: Mode, commits: number): Promise<Phase> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | (constants.O_DSYNC ?? 0);
  const journal = await open(join(dir, 'journal'), flags);
  const order = new FlushPriority();
  const line = Buffer.alloc(13 * 420, 120);
  const times: number[] = [];
  let done = false;
  let saved = 0;
  const flush = (fn: () => Promise<void>): Promise<void> => (mode === 'ordered' ? order.background(fn) : fn());
  const download = async (n: number): Promise<void> => {
    const chunk = Buffer.alloc(1 << 20, n);
    while (!done) {
      const part = join(dir, `d${n}.part`);
      const file = await open(part, 'w');
      await file.write(chunk);
      await flush(() => file.sync());
      await file.close();
      await rename(part, join(dir, `d${n}-${saved}`));
      saved += 1;
      const folder = await open(dir, 'r');
      await flush(() => folder.sync());
      await folder.close();
    }
  };
  const downloads = mode === 'alone' ? [] : [0, 1, 2].map((n) => download(n));
  try {
    for (let i = 0; i < commits; i += 1) {
      const started = performance.now();
      await order.urgent(() => journal.write(line));
      times.push(performance.now() - started);
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    done = true;
    await Promise.all(downloads);
    await journal.close();
    await rm(dir, { recursive: true, force: true });
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), saved };
}

export default async function bench(ctx: BenchContext): Promise<BenchRow[]> {
  const commits = ctx.quick ? 300 : 1500;
  const dir = join(ctx.tmpDir, 'flush');
  const before = loadavg()[0]?.toFixed(2) ?? '?';
  const alone = await phase(dir, 'alone', commits);
  const unordered = await phase(dir, 'unordered', commits);
  const ordered = await phase(dir, 'ordered', commits);
  const after = loadavg()[0]?.toFixed(2) ?? '?';
  ctx.log(`alone p50 ${alone.p50.toFixed(2)} ms, p99 ${alone.p99.toFixed(2)} ms`);
  ctx.log(`unordered p50 ${unordered.p50.toFixed(2)} ms, p99 ${unordered.p99.toFixed(2)} ms, ${unordered.saved} saved`);
  ctx.log(`ordered p50 ${ordered.p50.toFixed(2)} ms, p99 ${ordered.p99.toFixed(2)} ms, ${ordered.saved} saved`);
  const note =
    `${commits} commits per phase; alone p50 ${alone.p50.toFixed(2)} / p99 ${alone.p99.toFixed(2)} ms; ` +
    `files saved beside them: ${unordered.saved} unordered, ${ordered.saved} ordered; load average ${before} -> ${after}`;
  return [
    {
      bench: 'flush-order',
      metric: 'journal commit p50 beside 3 saving downloads',
      ours: ordered.p50,
      peer: unordered.p50,
      peerName: 'flushes unordered',
      unit: 'ms',
      higherIsBetter: false,
      target: '(context)',
      note,
    },
    {
      bench: 'flush-order',
      metric: 'journal commit p99 beside 3 saving downloads',
      ours: ordered.p99,
      peer: unordered.p99,
      peerName: 'flushes unordered',
      unit: 'ms',
      higherIsBetter: false,
      target: '(context)',
    },
  ];
}
