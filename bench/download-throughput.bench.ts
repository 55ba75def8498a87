/**
 * Sequential download speed from nginx on loopback: `curl -s -o` against our `downloadFile` (segments 1) in
 * a child process, runs interleaved (rotating who goes first), medians reported. Every one of our outputs is
 * checked against the source's size and SHA-256. Our time includes the fsync of the file and folder that makes
 * a saved recording survive a power cut; curl does not fsync, so a second row adds the time an fsync of curl's
 * output takes. A third row is Node's own floor: `http.get().pipe(createWriteStream())` + fsync in a child,
 * which separates what Node costs from what Tally's engine adds.
 */
import { join } from 'node:path';
import { MiB, fsyncMs, mbps, runCurl, runNodePipe, runOurs, settle, startOrigin } from './lib/download.js';
import { median, type Benchmark, type BenchRow } from './lib/harness.js';

type Who = 'ours' | 'oursDefault' | 'curl' | 'node';

const bench: Benchmark = async (ctx) => {
  const bytes = (ctx.quick ? 64 : 1024) * MiB;
  const runs = ctx.quick ? 2 : 3;
  const origin = await startOrigin(ctx, bytes);
  const out = join(ctx.tmpDir, 'out.mp4');
  const times = {
    ours: [] as number[],
    oursDefault: [] as number[],
    curl: [] as number[],
    curlDurable: [] as number[],
    node: [] as number[],
  };
  const rotation: Who[] = ['curl', 'ours', 'oursDefault', 'node'];
  try {
    for (let i = 0; i < runs; i += 1) {
      for (let k = 0; k < rotation.length; k += 1) {
        const who = rotation[(i + k) % rotation.length] as Who;
        await settle(out);
        if (who === 'ours') {
          const run = await runOurs(origin, out, { segments: 1 });
          times.ours.push(run.ms);
          ctx.log(`ours: ${mbps(bytes, run.ms).toFixed(0)} MB/s (sha256 ok)`);
        } else if (who === 'oursDefault') {
          // What the app does with a recording this size: parallel ranges above the 32 MiB default.
          const run = await runOurs(origin, out, { segments: 4, thresholdBytes: 32 * MiB });
          times.oursDefault.push(run.ms);
          ctx.log(`ours, default settings: ${mbps(bytes, run.ms).toFixed(0)} MB/s (sha256 ok)`);
        } else if (who === 'curl') {
          const run = await runCurl(origin, out);
          const sync = await fsyncMs(out);
          times.curl.push(run.ms);
          times.curlDurable.push(run.ms + sync);
          ctx.log(`curl: ${mbps(bytes, run.ms).toFixed(0)} MB/s (+ fsync ${sync.toFixed(0)} ms)`);
        } else {
          const run = await runNodePipe(origin, out);
          times.node.push(run.ms);
          ctx.log(`node pipe: ${mbps(bytes, run.ms).toFixed(0)} MB/s`);
        }
      }
    }
  } finally {
    await settle(out);
    await origin.stop();
  }
  const metric = `sequential, ${bytes / MiB} MiB`;
  const ours = mbps(bytes, median(times.ours));
  const row = (suffix: string, peerName: string, peerMs: number[], target: string, note?: string): BenchRow => ({
    bench: 'download-throughput',
    metric: `${metric}${suffix}`,
    ours,
    peer: mbps(bytes, median(peerMs)),
    peerName,
    unit: 'MB/s',
    higherIsBetter: true,
    target,
    ...(note ? { note } : {}),
  });
  return [
    row(` (median of ${runs})`, 'curl', times.curl, '>= 0.9x'),
    {
      ...row(', default settings (up to 4 ranges)', 'curl', times.curl, '>= 0.9x'),
      metric: `${bytes / MiB} MiB, app default (up to 4 ranges)`,
      ours: mbps(bytes, median(times.oursDefault)),
      note: 'above 32 MiB the app starts with one connection and adds ranges (up to 4) only while they add throughput; curl uses one connection',
    },
    row(', both fsync', 'curl + fsync', times.curlDurable, '(context)', "the peer adds an fsync of curl's output"),
    row(
      ', vs Node floor',
      'node http->fs',
      times.node,
      '(context)',
      'Node floor: http.get().pipe(createWriteStream()) + fsync in a child; no resume, sidecar or checks',
    ),
  ];
};
export default bench;
