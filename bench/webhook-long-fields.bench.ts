/**
 * Webhooks whose fields are long but allowed (a 4,000-character presigned URL, a 900-character channel ID that
 * falls back to the file name) against short ones (issue 20, case 12): acks per second of the real receiver and
 * journal (bench/lib/long-fields-server.ts, its own process) from 32 keep-alive connections, then a flood of
 * 30,000 long-field webhooks (quick: 3,000) from 50 connections: the share answered within 75 s, the server's peak
 * RSS, and how long a restart on the flooded journal takes to listen again. Every answer must be a 2xx.
 * Targets: long >= 0.5x short; flood >= 90 % answered within 75 s, peak RSS < 300 MB, restart < 30 s.
 * Never fails on timing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundleHelper } from './lib/child.js';
import type { Benchmark, BenchRow } from './lib/harness.js';

interface Server {
  url: string;
  readyMs: number;
  stop(): Promise<{ stored: number; peakRssMb: number }>;
}

async function startServer(script: string, dir: string): Promise<Server> {
  await mkdir(dir, { recursive: true });
  const child: ChildProcess = spawn(process.execPath, [script, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  const { url, readyMs } = JSON.parse(String(first.value)) as { url: string; readyMs: number };
  return {
    url,
    readyMs,
    async stop() {
      child.stdin!.write('stop\n');
      const last = await lines.next();
      return JSON.parse(String(last.value)) as { stored: number; peakRssMb: number };
    },
  };
}

function body(i: number, long: boolean, tag: string): string {
  return JSON.stringify({
    id: long ? `${'c'.repeat(890)}-${tag}-${i}` : `ch-${tag}-${i}`,
    url: `https://s3.amazonaws.com/svc/${tag}${i}/ch.mp4${long ? `?X-Amz-Signature=${'a'.repeat(3950)}` : ''}`,
  });
}

/** Sends `count` webhooks over `connections` keep-alive connections; resolves with the answers' times (ms). */
async function load(
  url: string,
  count: number,
  connections: number,
  long: boolean,
  tag: string,
  withinMs: number,
): Promise<{ ms: number; answered: number; errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(url);
  let next = 0;
  let answered = 0;
  let errors = 0;
  const started = performance.now();
  const one = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const data = body(i, long, tag);
      const req = request(
        target,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
        },
        (res) => {
          res.resume();
          res.once('end', () => {
            if (res.statusCode !== undefined && res.statusCode < 300 && performance.now() - started <= withinMs)
              answered += 1;
            else if (res.statusCode === undefined || res.statusCode >= 300) errors += 1;
            resolve();
          });
        },
      );
      req.once('error', () => {
        errors += 1;
        resolve();
      });
      req.end(data);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < count) await one(next++);
    }),
  );
  agent.destroy();
  return { ms: performance.now() - started, answered, errors };
}

const bench: Benchmark = async (ctx) => {
  const script = await bundleHelper('long-fields-server.ts', ctx.tmpDir);
  const perRun = ctx.quick ? 1_000 : 5_000;
  const rates: Record<'short' | 'long', number[]> = { short: [], long: [] };
  const runs = ctx.quick ? 1 : 3;
  for (let run = 0; run < runs; run += 1) {
    // Interleaved, the order rotating: the machine is shared and noisy.
    for (const kind of run % 2 === 0 ? (['short', 'long'] as const) : (['long', 'short'] as const)) {
      const server = await startServer(script, join(ctx.tmpDir, `acks-${kind}-${run}`));
      const result = await load(server.url, perRun, 32, kind === 'long', `${kind}${run}`, Number.POSITIVE_INFINITY);
      const end = await server.stop();
      if (result.errors > 0 || end.stored !== perRun) {
        throw new Error(`${kind}: ${result.errors} errors, ${end.stored} of ${perRun} stored`);
      }
      rates[kind].push((perRun * 1000) / result.ms);
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const short = median(rates.short);
  const long = median(rates.long);
  ctx.log(`acks/s short ${rates.short.map(Math.round).join(', ')}; long ${rates.long.map(Math.round).join(', ')}`);

  const flood = ctx.quick ? 3_000 : 30_000;
  const floodDir = join(ctx.tmpDir, 'flood');
  const server = await startServer(script, floodDir);
  const result = await load(server.url, flood, 50, true, 'flood', 75_000);
  const end = await server.stop();
  const restarted = await startServer(script, floodDir);
  await restarted.stop();
  ctx.log(`flood: ${result.answered}/${flood} within 75 s (${result.errors} errors) in ${Math.round(result.ms)} ms`);

  const rows: BenchRow[] = [
    {
      bench: 'webhook-long-fields',
      metric: 'acks/s, 4,000-character URLs',
      ours: long,
      peer: short,
      peerName: 'same receiver, short fields',
      unit: 'acks/s',
      higherIsBetter: true,
      target: '>= 0.5x',
    },
    {
      bench: 'webhook-long-fields',
      metric: `flood of ${flood}: answered within 75 s`,
      ours: (result.answered * 100) / flood,
      peer: null,
      peerName: '-',
      unit: '%',
      higherIsBetter: true,
      target: '>= 90 %',
    },
    {
      bench: 'webhook-long-fields',
      metric: `flood of ${flood}: server peak RSS`,
      ours: end.peakRssMb,
      peer: null,
      peerName: '-',
      unit: 'MB',
      higherIsBetter: false,
      target: '< 300 MB',
    },
    {
      bench: 'webhook-long-fields',
      metric: `restart on the flooded journal: listening again`,
      ours: restarted.readyMs,
      peer: null,
      peerName: '-',
      unit: 'ms',
      higherIsBetter: false,
      target: '< 30000 ms',
    },
  ];
  return rows;
};
export default bench;
