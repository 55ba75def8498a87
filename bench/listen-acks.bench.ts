/**
 * Durable acks on the whole product path with a large download behind them (issue 34): the real `tally listen`
 * (built CLI through bin/tally.js with its shebang's Node flags, `--ndjson`) is first given one webhook for a
 * 1 GiB recording (quick: 256 MiB) from nginx on loopback and, once its first bytes are in, a burst of 4,000
 * webhooks (quick: 1,000), each for a distinct recording of 1 MiB, over 16 keep-alive connections. The journal's
 * commits share the machine with the large download (its reads, writes and hashing), the downloads the burst
 * brings, their fsyncs and the progress output. Since the fourth round of issue 22 the downloads a burst brings
 * wait for its answers (the download queue's acksFirst; a burst longer than 2 s has them run beside it); the
 * note gives how soon after the burst the next one was saved, and whether the large download was still running
 * when the burst ended (it must be, or the run did not measure what it says). Peer: a bare node:http responder
 * that reads the body and answers `{"ok":true}` (bench/lib/ack-server.ts, nothing durable, nothing
 * downloading), same load, in the same run. The load generator is wrk (one thread, a Lua script numbering the
 * recordings and timing the burst from its first request to the count-th answer). The Node load generator used
 * before was itself the limit on this 2-core machine: it held the bare responder at about 3,800 acks/s where
 * wrk measures 12,000-14,000. Without wrk, that Node child (bench/lib/webhook-load.ts, which counts an answer
 * only if it is a 200 with `ok: true`) is used, and the note says so. Runs are interleaved, medians reported,
 * the load average printed beside them. Targets (issue 34): at least 0.25x the bare responder's acks/s, p99 at
 * most 2x the bare responder's p99.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundleHelper, runNodeChild } from './lib/child.js';
import { startCli } from './lib/cli-process.js';
import { MiB, startOrigin } from './lib/download.js';
import { makeRandomFile } from './lib/files.js';
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
  /** Ours: the large download was still running when the burst's last answer came. */
  bigRunning?: boolean;
  /** Ours: from the burst's last answer to the large recording's `saved` line. */
  bigSavedMs?: number;
}

/** The large recording downloading behind the burst. */
interface Big {
  url: string;
  bytes: number;
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
  big: (Big & { id: string }) | null,
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
    let bigSavedAt: number | null = null;
    let bigBytes = 0;
    let onBigSaved = () => {};
    let onBigStarted = () => {};
    cli.onEvent((e, at) => {
      if (big && e.channelId === big.id) {
        if (e.type === 'progress' && Number(e.bytes) > 0) onBigStarted();
        if (e.type === 'saved') {
          bigBytes = Number(e.bytes);
          bigSavedAt = at;
          onBigSaved();
        }
      } else if (e.type === 'saved') saved += 1;
    });
    const bigSaved = new Promise<void>((resolve) => (onBigSaved = resolve));
    const bigStarted = new Promise<void>((resolve) => (onBigStarted = resolve));
    const failed = cli.next('failed').then(() => undefined);
    failed.catch(() => undefined);
    if (big) {
      const answer = await fetch(String(ready.localUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: big.id, url: `${big.url}?${big.id}`, filesize: String(big.bytes) }),
      });
      if (answer.status !== 200) throw new Error(`the large recording's webhook answered ${answer.status}`);
      await Promise.race([bigStarted, failed]);
    }
    const result = await burst(String(ready.localUrl));
    const savedInBurst = saved;
    const burstOver = performance.now();
    const bigRunning = bigSavedAt === null;
    // The downloads the burst brought wait for its answers (acksFirst; 2 s at most): the next save shows
    // they went on.
    let resumedMs = 0;
    if (savedInBurst < count) {
      let timer: NodeJS.Timeout | undefined;
      const next = new Promise<boolean>((resolve) =>
        cli.onEvent((e) => e.type === 'saved' && e.channelId !== big?.id && resolve(true)),
      );
      const resumed = await Promise.race([
        next,
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 30_000))),
      ]);
      clearTimeout(timer);
      if (!resumed) throw new Error('tally listen saved no recording within 30 s after the burst');
      resumedMs = performance.now() - burstOver;
    }
    if (!big) return { ...result, saved: savedInBurst, resumedMs };
    await bigSaved;
    if (bigBytes !== big.bytes)
      throw new Error(`tally listen saved ${bigBytes} bytes of the large recording (${big.bytes})`);
    const bigSavedMs = (bigSavedAt ?? burstOver) - burstOver;
    return { ...result, saved: savedInBurst, resumedMs, bigRunning, bigSavedMs };
  } finally {
    await cli.stop();
  }
}

export default async function bench(ctx: BenchContext): Promise<BenchRow[]> {
  const count = ctx.quick ? 1000 : 4000;
  const runs = ctx.quick ? 1 : 3;
  const origin = await startOrigin(ctx, 1 * MiB);
  const bigBytes = (ctx.quick ? 256 : 1024) * MiB;
  await makeRandomFile(join(ctx.tmpDir, 'www', 'large.mp4'), bigBytes);
  const big: Big = { url: new URL('large.mp4', origin.url).href, bytes: bigBytes };
  const useWrk = await hasCommand('wrk');
  const loader = await bundleHelper('webhook-load.ts', ctx.tmpDir);
  const server = await bundleHelper('ack-server.ts', ctx.tmpDir);
  const mine: Run[] = [];
  const theirs: Run[] = [];
  /** Ours with nothing large downloading: what the download behind costs the acks. */
  const idle: Run[] = [];
  const loads = [load()];
  try {
    for (let i = 0; i < runs; i += 1) {
      for (const who of i % 2 === 0 ? ['bare', 'ours', 'idle'] : ['idle', 'ours', 'bare']) {
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
          who === 'bare'
            ? await bare(server, dir, burst)
            : await ours(
                dir,
                new URL(origin.url).origin,
                count,
                who === 'ours' ? { ...big, id: `large-${i}` } : null,
                burst,
              );
        (who === 'ours' ? mine : who === 'idle' ? idle : theirs).push(run);
        const label =
          who === 'ours' ? 'tally listen' : who === 'idle' ? 'tally listen, nothing large' : 'bare node:http';
        ctx.log(
          `${label}: ${((count / run.ms) * 1000).toFixed(0)} acks/s, ` +
            `p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms` +
            (run.saved !== undefined
              ? `, ${run.saved} recordings saved during the burst` +
                (run.bigRunning === undefined
                  ? ''
                  : `, the large download ` +
                    (run.bigRunning ? `saved ${run.bigSavedMs?.toFixed(0)} ms after it` : 'over before it ended'))
              : '') +
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
      metric: `acks/s, ${count} webhooks, c=${CONNECTIONS}, ${bigBytes / MiB} MiB downloading`,
      ours: rate(mine),
      peer: rate(theirs),
      peerName: 'bare node:http',
      unit: '/s',
      higherIsBetter: true,
      target: '>= 0.25x',
      note:
        `median of ${runs}; a ${bigBytes / MiB} MiB download started before each burst of ours was still running ` +
        `when it ended in ${mine.filter((r) => r.bigRunning).length} of ${runs} runs (its saved ` +
        `line ${mine.map((r) => r.bigSavedMs?.toFixed(0)).join('/')} ms from the burst's end, negative if before); the bare responder has nothing ` +
        `behind it; tally listen saved ${mine.map((r) => r.saved).join('/')} recordings (1 MiB each) ` +
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
      target: '<= 2x bare (>= 0.5x)',
      note:
        `median of ${runs} p99s (ours ${p99s(mine)}; bare ${p99s(theirs)}); our p50 ` +
        `${median(mine.map((r) => r.p50)).toFixed(2)} ms`,
    },
    {
      bench: 'listen-acks',
      metric: `acks/s, the same with nothing large downloading`,
      ours: rate(idle),
      peer: rate(theirs),
      peerName: 'bare node:http',
      unit: '/s',
      higherIsBetter: true,
      target: 'context',
      note:
        `median of ${runs}, in the same turns: what the ${bigBytes / MiB} MiB download behind costs the acks; ` +
        `p99 ${median(idle.map((r) => r.p99)).toFixed(1)} ms (${p99s(idle)})`,
    },
  ];
}
