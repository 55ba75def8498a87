/**
 * The recordings journal under a flood's worth of jobs: how long Tally takes to open it at start-up and what it
 * holds in memory afterwards, for 1,000 jobs and for 100,000 (20,000 in quick mode). The jobs are as long as the
 * webhook's field caps allow (a 256-character channel ID, a 1,500-character presigned URL), the worst case.
 * Targets (issue 10): a 100,000-job journal opens in under 2 s; RSS at most that of 1,000 jobs + 30 MB. The child
 * runs with the Node flags of bin/tally.js's shebang, as `tally listen` does.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { bundleHelper, cliNodeFlags, runNodeChild } from './lib/child.js';
import type { Benchmark, BenchRow } from './lib/harness.js';

interface Opened {
  openMs: number;
  rssMb: number;
  jobs: number;
}

async function writeJournal(dir: string, jobs: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  const out = createWriteStream(join(dir, 'inbox.jsonl'));
  const now = Date.now();
  for (let i = 0; i < jobs; i += 1) {
    const at = new Date(now - (jobs - i) * 1000).toISOString();
    const job = {
      key: i.toString(16).padStart(32, '0'),
      channelId: `${'c'.repeat(240)}-${i}`,
      url: `https://s3.amazonaws.com/svc/${'r'.repeat(1400)}/${i}.mp4?X-Amz-Signature=${'f'.repeat(64)}`,
      receivedAt: at,
      deadline: new Date(now + 6 * 3600_000).toISOString(),
      announcedBytes: 1_000_000,
      duration: '3600',
      thumbnail: null,
      shape: 'json',
      state: 'pending',
      attempts: 0,
      path: null,
      bytes: null,
      totalBytes: 1_000_000,
      error: null,
      updatedAt: at,
    };
    if (!out.write(`${JSON.stringify({ v: 1, job })}\n`)) await once(out, 'drain');
  }
  out.end();
  await finished(out);
}

const bench: Benchmark = async (ctx) => {
  const script = await bundleHelper('journal-child.ts', ctx.tmpDir);
  const large = ctx.quick ? 20_000 : 100_000;
  const results = new Map<number, Opened>();
  for (const jobs of [1_000, large]) {
    const dir = join(ctx.tmpDir, `journal-${jobs}`);
    await writeJournal(dir, jobs);
    // With the CLI's own Node flags; --expose-gc: RSS is read after a full GC (what the journal holds, not
    // replay's garbage).
    const opened = await runNodeChild<Opened>(script, [dir], [...(await cliNodeFlags()), '--expose-gc']);
    results.set(jobs, opened);
    ctx.log(`${jobs} jobs: opened in ${opened.openMs.toFixed(0)} ms, RSS ${opened.rssMb.toFixed(1)} MB`);
  }
  const small = results.get(1_000) as Opened;
  const big = results.get(large) as Opened;
  const rows: BenchRow[] = [
    {
      bench: 'journal',
      metric: `RSS after opening ${large} jobs`,
      ours: big.rssMb,
      peer: small.rssMb,
      peerName: 'same, 1,000 jobs',
      unit: 'MB',
      higherIsBetter: false,
      target: '<= 1,000 jobs + 30 MB',
    },
    {
      bench: 'journal',
      metric: `open a ${large}-job journal`,
      ours: big.openMs,
      peer: null,
      peerName: '-',
      unit: 'ms',
      higherIsBetter: false,
      target: '< 2000 ms (100,000 jobs)',
    },
  ];
  return rows;
};
export default bench;
