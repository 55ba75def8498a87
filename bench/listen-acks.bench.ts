/**
 * Durable acks on the whole product path: a burst of 4,000 webhooks (quick: 1,000), each for a distinct
 * recording, sent over 16 keep-alive connections into the real `tally listen` (built CLI through bin/tally.js
 * with its shebang's Node flags, `--ndjson`), which downloads every recording (1 MiB, from nginx on loopback):
 * the journal's commits share the process, its thread pool and the disk with downloads, their fsyncs and the
 * progress output. Since the fourth round of issue 22 the downloads a burst brings wait for its answers (the
 * download queue's acksFirst; a burst longer than 2 s has them run beside it), so few are saved during the
 * burst; the note gives how soon after it the next one was saved. Peer: a bare node:http responder that reads
 * the body and answers `{"ok":true}` (bench/lib/ack-server.ts, nothing durable), same load. The load generator is wrk
 * (one thread, a Lua script numbering the recordings and timing the burst from its first request to the
 * count-th answer). The Node load generator used before was itself the limit on this 2-core machine: it held
 * the bare responder at about 3,800 acks/s where wrk measures 12,000-14,000, so the ratio flattered ours (0.36x
 * in a quick run against 0.12x through wrk, load 3). Without wrk, that Node child (bench/lib/webhook-load.ts,
 * which counts an answer only if it is a 200 with `ok: true`) is used, and the note says so. Runs are
 * interleaved, medians reported, the load average printed beside them. Targets (issue 22): at least 0.25x the
 * bare responder's acks/s, p99 under 10 ms.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundleHelper, runNodeChild } from './lib/child.js';
import { startCli } from './lib/cli-process.js';
import { MiB, startOrigin } from './lib/download.js';
import { hasCommand, median, type BenchContext, type BenchRow } from './lib/harness.js';
import type { LoadJob, LoadResult } from './lib/webhook-load.js';
import { runWrkBurst } from './lib/wrk.js';

const CONNECTIONS = 16;
const load = (): string => loadavg()[0]?.toFixed(2) ?? '?';

interface Run extends LoadResult {
  /** Recordings saved by the time the burst was over (ours). */
  saved?: number;
  /** From the burst's last answer to the next recording saved (ours): the downloads it held back resumed. */
  resumedMs?: number;
}

async function bare(script: string, dir: string, burst: (url: string) => Promise<LoadResult>): Promise<Run> {
  const child = spawn(process.execPath, [script, JSON.stringify({ kind: 'ceiling', dir })]);
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve) => lines.once('line', resolve));
  const { url } = JSON.parse(first) as { url: string };
  try {
    return await burst(url);
  } finally {
    child.stdin.write('stop\n');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

async function ours(
  dir: string,
  origin: string,
  count: number,
  burst: (url: string) => Promise<LoadResult>,
): Promise<Run> {
  const cli = await startCli(
    ['listen', '--ndjson', '--folder', join(dir, 'recordings'), '--port', '0', '--tunnel', 'none'],
    dir,
    { TALLY_DOWNLOAD_ORIGINS: origin },
  );
  let saved = 0;
  try {
    const ready = await cli.next('ready');
    const counting = (async () => {
      for (;;) {
        await cli.next('saved');
        saved += 1;
      }
    })();
    counting.catch(() => undefined);
    const result = await burst(String(ready.localUrl));
    const savedInBurst = saved;
    // The downloads the burst brought wait for its answers (acksFirst; 2 s at most): the next save shows
    // they went on.
    const burstOver = performance.now();
    if (savedInBurst >= count) return { ...result, saved: savedInBurst, resumedMs: 0 };
    let timer: NodeJS.Timeout | undefined;
    const resumed = await Promise.race([
      cli.next('saved').then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 30_000))),
    ]);
    clearTimeout(timer);
    if (!resumed) throw new Error('tally listen saved no recording within 30 s after the burst');
    return { ...result, saved: savedInBurst, resumedMs: performance.now() - burstOver };
  } finally {
    await cli.stop();
  }
}

export default async function bench(ctx: BenchContext): Promise<BenchRow[]> {
  const count = ctx.quick ? 1000 : 4000;
  const runs = ctx.quick ? 1 : 3;
  const origin = await startOrigin(ctx, 1 * MiB);
  const useWrk = await hasCommand('wrk');
  const loader = await bundleHelper('webhook-load.ts', ctx.tmpDir);
  const server = await bundleHelper('ack-server.ts', ctx.tmpDir);
  const mine: Run[] = [];
  const theirs: Run[] = [];
  const loads = [load()];
  try {
    for (let i = 0; i < runs; i += 1) {
      for (const who of i % 2 === 0 ? ['bare', 'ours'] : ['ours', 'bare']) {
        const dir = join(ctx.tmpDir, `${who}-${i}`);
        await mkdir(dir, { recursive: true });
        const burst = async (url: string): Promise<LoadResult> => {
          if (useWrk) {
            const r = await runWrkBurst(dir, url, {
              count,
              connections: CONNECTIONS,
              runId: `${who}${i}`,
              recordingUrl: origin.url,
            });
            if (r.failures > 0) throw new Error(`${who}: wrk counted ${r.failureText}`);
            return { ms: r.ms, ok: count, failures: 0, firstFailure: null, p50: r.p50, p99: r.p99, max: r.max };
          }
          const job: LoadJob = {
            url,
            count,
            concurrency: CONNECTIONS,
            runId: `${who}${i}`,
            recordingUrl: origin.url,
          };
          const result = await runNodeChild<LoadResult>(loader, [JSON.stringify(job)]);
          if (result.failures > 0)
            throw new Error(`${who}: ${result.failures} webhooks failed: ${result.firstFailure}`);
          return result;
        };
        const run =
          who === 'ours' ? await ours(dir, new URL(origin.url).origin, count, burst) : await bare(server, dir, burst);
        (who === 'ours' ? mine : theirs).push(run);
        ctx.log(
          `${who === 'ours' ? 'tally listen' : 'bare node:http'}: ${((count / run.ms) * 1000).toFixed(0)} acks/s, ` +
            `p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms` +
            (run.saved !== undefined ? `, ${run.saved} recordings saved during the burst` : '') +
            ` (load ${load()})`,
        );
      }
    }
  } finally {
    await origin.stop();
  }
  loads.push(load());
  const rate = (r: Run[]): number => median(r.map((x) => (count / x.ms) * 1000));
  const p99s = (r: Run[]): string => r.map((x) => x.p99.toFixed(1)).join(', ');
  return [
    {
      bench: 'listen-acks',
      metric: `acks/s, ${count} webhooks, c=${CONNECTIONS}, downloads behind`,
      ours: rate(mine),
      peer: rate(theirs),
      peerName: 'bare node:http',
      unit: '/s',
      higherIsBetter: true,
      target: '>= 0.25x',
      note:
        `median of ${runs}; tally listen saved ${mine.map((r) => r.saved).join('/')} recordings (1 MiB each) ` +
        `during the bursts and its next one ${mine.map((r) => r.resumedMs?.toFixed(0)).join('/')} ms after ` +
        `(downloads wait for the answers); load from ${useWrk ? 'wrk' : 'a Node child (no wrk)'}; load average ${loads.join(' -> ')}`,
    },
    {
      bench: 'listen-acks',
      metric: `p99 latency, ${count} webhooks, c=${CONNECTIONS}`,
      ours: median(mine.map((r) => r.p99)),
      peer: median(theirs.map((r) => r.p99)),
      peerName: 'bare node:http',
      unit: 'ms',
      higherIsBetter: false,
      target: '< 10 ms',
      note:
        `median of ${runs} p99s (ours ${p99s(mine)}; bare ${p99s(theirs)}); our p50 ` +
        `${median(mine.map((r) => r.p50)).toFixed(2)} ms`,
    },
  ];
}
