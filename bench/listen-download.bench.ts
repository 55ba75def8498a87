/**
 * The whole product path downloading: the real `tally listen` (built CLI through bin/tally.js, its shebang's
 * Node flags, default settings) receives one webhook and saves the recording from nginx on loopback, timed from
 * the webhook's POST to its `saved` line (download, verification, fsync of file and folder). Two origins, each
 * against the peer a producer would otherwise use:
 * - unthrottled (1 GiB; quick 128 MiB) against `curl -s -o` (its own time_total), the reference HTTP client;
 * - nginx `limit_rate 24m` per connection (1 GiB; quick 96 MiB), like a CDN that throttles each connection,
 *   against `aria2c -x4 -s4 -k1M` (wall time of the process).
 * Runs are interleaved (the order rotates) and medians reported; the load average is printed beside each row,
 * since the machine may be shared. Our file's SHA-256 is checked every run.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { runListen } from './lib/cli-process.js';
import { MiB, fsyncMs, mbps, runAria2, runCurl, settle, startOrigin, type Origin } from './lib/download.js';
import { sha256File } from './lib/files.js';
import { hasCommand, median, type BenchContext, type BenchRow } from './lib/harness.js';

const load = (): string => loadavg()[0]?.toFixed(2) ?? '?';

interface Side {
  ms: number[];
  rss: number[];
  connections: number[];
}

async function compare(
  ctx: BenchContext,
  origin: Origin,
  runs: number,
  peer: 'curl' | 'aria2c',
): Promise<{ ours: Side; peer: number[]; peerFsynced: number[]; loads: string[] }> {
  const ours: Side = { ms: [], rss: [], connections: [] };
  const theirs: number[] = [];
  const theirsFsynced: number[] = [];
  const loads = [load()];
  const peerOut = join(ctx.tmpDir, `${peer}.mp4`);
  for (let i = 0; i < runs; i += 1) {
    for (const who of i % 2 === 0 ? ['peer', 'ours'] : ['ours', 'peer']) {
      if (who === 'ours') {
        const before = await origin.requests();
        const run = await runListen(origin.url, origin.bytes, join(ctx.tmpDir, `listen-${peer}-${i}`));
        if ((await sha256File(run.path)) !== origin.sha256) throw new Error('tally listen saved a different file');
        await settle(run.path);
        ours.ms.push(run.ms);
        ours.rss.push(run.peakRssMb);
        const connections = (await origin.requests()) - before;
        ours.connections.push(connections);
        ctx.log(
          `tally listen: ${mbps(origin.bytes, run.ms).toFixed(0)} MB/s, ${connections} request(s), ` +
            `peak ${run.peakRssMb.toFixed(1)} MB (load ${load()})`,
        );
      } else {
        const run = peer === 'curl' ? await runCurl(origin, peerOut) : await runAria2(origin, peerOut);
        // Ours is timed to a file fsynced on disk; the same durability for the peer, as context.
        theirsFsynced.push(run.ms + (await fsyncMs(peerOut)));
        await settle(peerOut);
        theirs.push(run.ms);
        ctx.log(`${peer}: ${mbps(origin.bytes, run.ms).toFixed(0)} MB/s (load ${load()})`);
      }
    }
  }
  loads.push(load());
  return { ours, peer: theirs, peerFsynced: theirsFsynced, loads };
}

const row = (
  metric: string,
  bytes: number,
  result: { ours: Side; peer: number[]; peerFsynced: number[]; loads: string[] },
  peerName: string,
  target: string,
): BenchRow => ({
  bench: 'listen-download',
  metric,
  ours: mbps(bytes, median(result.ours.ms)),
  peer: result.peer.length > 0 ? mbps(bytes, median(result.peer)) : null,
  peerName,
  unit: 'MB/s',
  higherIsBetter: true,
  target,
  note:
    `median of ${result.ours.ms.length}; webhook to saved (verified, fsynced); requests ` +
    `${result.ours.connections.join('/')}; peak RSS ${result.ours.rss.map((r) => r.toFixed(0)).join('/')} MB; ` +
    `the peer plus an fsync of its file (ours is timed to a durable file): ` +
    `${mbps(bytes, median(result.peerFsynced)).toFixed(0)} MB/s; load average ${result.loads.join(' -> ')}`,
});

export default async function bench(ctx: BenchContext): Promise<BenchRow[]> {
  const runs = ctx.quick ? 1 : 3;
  const rows: BenchRow[] = [];

  const fastBytes = (ctx.quick ? 128 : 1024) * MiB;
  const fast = await startOrigin({ ...ctx, tmpDir: join(ctx.tmpDir, 'fast') }, fastBytes);
  try {
    const result = await compare(ctx, fast, runs, 'curl');
    rows.push(row(`unthrottled, ${fastBytes / MiB} MiB`, fastBytes, result, 'curl', '>= 0.9x'));
  } finally {
    await fast.stop();
    await settle(join(ctx.tmpDir, 'fast', 'www', 'recording.mp4'));
  }

  if (!(await hasCommand('aria2c'))) {
    ctx.log('aria2c is not installed (Debian package aria2): the throttled comparison is skipped');
    return rows;
  }
  const slowBytes = (ctx.quick ? 96 : 1024) * MiB;
  const slow = await startOrigin({ ...ctx, tmpDir: join(ctx.tmpDir, 'slow') }, slowBytes, '24m');
  try {
    const result = await compare(ctx, slow, runs, 'aria2c');
    rows.push(row(`limit_rate 24m/conn, ${slowBytes / MiB} MiB`, slowBytes, result, 'aria2c -x4 -s4', '>= 1.0x'));
  } finally {
    await slow.stop();
  }
  return rows;
}
