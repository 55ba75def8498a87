/**
 * Parallel ranged download from an origin that throttles every connection (nginx `limit_rate`, like many
 * CDNs): `aria2c -x4 -s4 -k1M` against our `downloadFile` with 4 segments, both timed as whole processes
 * (ours therefore pays Node's start-up, aria2c its own), runs interleaved, medians reported. Our output is
 * checked against the source's SHA-256 every run.
 */
import { join } from 'node:path';
import { MiB, mbps, runAria2, runOurs, settle, startOrigin } from './lib/download.js';
import { hasCommand, median, type Benchmark } from './lib/harness.js';

const bench: Benchmark = async (ctx) => {
  const bytes = (ctx.quick ? 32 : 256) * MiB;
  const rate = ctx.quick ? '4m' : '8m';
  const runs = ctx.quick ? 1 : 3;
  const origin = await startOrigin(ctx, bytes, rate);
  const oursOut = join(ctx.tmpDir, 'ours.mp4');
  const ariaOut = join(ctx.tmpDir, 'aria.mp4');
  const ours: number[] = [];
  const aria: number[] = [];
  const haveAria = await hasCommand('aria2c');
  if (!haveAria) ctx.log('aria2c is not installed (Debian package aria2): the peer column will be n/a');
  let connections = 0;
  try {
    for (let i = 0; i < runs; i += 1) {
      const order = (i % 2 === 0 ? ['aria2c', 'ours'] : ['ours', 'aria2c']).filter((w) => haveAria || w === 'ours');
      for (const who of order) {
        await settle(oursOut, ariaOut);
        if (who === 'ours') {
          const run = await runOurs(origin, oursOut, { segments: 4, thresholdBytes: MiB });
          const ms = run.wallMs;
          connections = Math.max(connections, run.connections);
          ours.push(ms);
          ctx.log(`ours: ${mbps(bytes, ms).toFixed(1)} MB/s, ${run.connections} connections (sha256 ok)`);
        } else {
          const run = await runAria2(origin, ariaOut);
          aria.push(run.ms);
          ctx.log(`aria2c: ${mbps(bytes, run.ms).toFixed(1)} MB/s`);
        }
      }
    }
  } finally {
    await settle(oursOut, ariaOut);
    await origin.stop();
  }
  return [
    {
      bench: 'download-segmented',
      metric: `up to 4 ranges, ${bytes / MiB} MiB, limit_rate ${rate}/conn`,
      ours: mbps(bytes, median(ours)),
      peer: aria.length > 0 ? mbps(bytes, median(aria)) : null,
      peerName: 'aria2c -x4 -s4',
      unit: 'MB/s',
      higherIsBetter: true,
      target: '>= 1.0x',
      note:
        `median of ${runs}, wall time of each process including its start-up; ceiling 4 x ${rate} = ` +
        `${((4 * Number.parseInt(rate, 10) * MiB) / 1e6).toFixed(1)} MB/s; ours opened ${connections} connections`,
    },
  ];
};
export default bench;
