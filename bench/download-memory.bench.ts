/**
 * Peak RSS while downloading a big recording: our `downloadFile` in a child process (as the app runs it, with
 * up to 4 parallel ranges added while they add throughput, and plain sequential) against curl. Every figure is the kernel's high-water mark of
 * resident memory (getrusage maxrss): our child reads its own with `process.resourceUsage()`, the peers' come
 * from GNU time (`/usr/bin/time -f %M`, Debian package `time`; without it the peer column shows n/a). The
 * worst run counts, since the target is a ceiling. The note separates what Node costs from what Tally adds:
 * our RSS before the download starts, and the peak of a bare Node `http.get().pipe(createWriteStream())` of
 * the same file in the same kind of child.
 */
import { join } from 'node:path';
import { MiB, hasGnuTime, runCurl, runNodePipe, runOurs, settle, startOrigin } from './lib/download.js';
import { median, type Benchmark, type BenchRow } from './lib/harness.js';

const bench: Benchmark = async (ctx) => {
  const bytes = (ctx.quick ? 256 : 2048) * MiB;
  const runs = ctx.quick ? 1 : 3;
  const origin = await startOrigin(ctx, bytes);
  const out = join(ctx.tmpDir, 'out.mp4');
  const modes = [
    { name: 'default (up to 4 ranges, added while they help)', segments: 4 },
    { name: 'sequential', segments: 1 },
  ];
  const peaks = new Map<string, number[]>(modes.map((m) => [m.name, []]));
  const floors: number[] = [];
  const curl: number[] = [];
  const nodePipe: number[] = [];
  try {
    for (let i = 0; i < runs; i += 1) {
      for (const mode of modes) {
        await settle(out);
        const run = await runOurs(origin, out, { segments: mode.segments });
        peaks.get(mode.name)?.push(run.peakRssMb);
        floors.push(run.baselineRssMb);
        ctx.log(`ours ${mode.name}: peak ${run.peakRssMb.toFixed(1)} MB (before: ${run.baselineRssMb.toFixed(1)} MB)`);
      }
      await settle(out);
      const peer = await runCurl(origin, out);
      curl.push(peer.peakRssMb);
      await settle(out);
      const bare = await runNodePipe(origin, out);
      nodePipe.push(bare.peakRssMb);
      ctx.log(`curl: peak ${peer.peakRssMb.toFixed(1)} MB; node http->fs: peak ${bare.peakRssMb.toFixed(1)} MB`);
    }
  } finally {
    await settle(out);
    await origin.stop();
  }
  const curlPeak = hasGnuTime() ? Math.max(...curl) : null;
  const range = (xs: number[]): string => {
    const [lo, hi] = [Math.min(...xs).toFixed(0), Math.max(...xs).toFixed(0)];
    return lo === hi ? `${hi} MB` : `${lo}-${hi} MB`;
  };
  return modes.map((mode): BenchRow => {
    const mine = peaks.get(mode.name) ?? [];
    return {
      bench: 'download-memory',
      metric: `peak RSS, ${bytes / MiB} MiB, ${mode.name}`,
      ours: Math.max(...mine),
      peer: curlPeak,
      peerName: 'curl',
      unit: 'MB',
      higherIsBetter: false,
      target: '< 100 MB',
      note:
        `worst of ${runs} (ours ${range(mine)}); before the download ${median(floors).toFixed(0)} MB; ` +
        `bare Node http->fs peaks at ${range(nodePipe)}`,
    };
  });
};
export default bench;
