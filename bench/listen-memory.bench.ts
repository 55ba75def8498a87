/**
 * Peak RSS of the real `tally listen` process (the built CLI, started through bin/tally.js as a user starts it,
 * with the Node flags of its shebang) while it receives one webhook and downloads a 1 GiB recording (quick:
 * 256 MiB) from nginx on loopback: the whole app path (receiver, journal, queue, engine, progress output),
 * not the engine alone as `download-memory` measures. The figure is the kernel's high-water mark (VmHWM in
 * /proc/<pid>/status, read after the save and before the process stops); the saved file's SHA-256 is checked.
 * Peer: curl's peak RSS on the same file (GNU time). Target (issue 22): under 80 MB (issue 10: under 100 MB).
 */
import { join } from 'node:path';
import { cliNodeFlags } from './lib/child.js';
import { runListen, type ListenRun } from './lib/cli-process.js';
import { MiB, hasGnuTime, runCurl, settle, startOrigin } from './lib/download.js';
import { sha256File } from './lib/files.js';
import type { Benchmark } from './lib/harness.js';

const bench: Benchmark = async (ctx) => {
  const bytes = (ctx.quick ? 256 : 1024) * MiB;
  const runs = ctx.quick ? 1 : 2;
  const origin = await startOrigin(ctx, bytes);
  const flags = await cliNodeFlags();
  const ours: ListenRun[] = [];
  const curl: number[] = [];
  try {
    for (let i = 0; i < runs; i += 1) {
      const dir = join(ctx.tmpDir, `listen-${i}`);
      const run = await runListen(origin.url, bytes, dir);
      if ((await sha256File(run.path)) !== origin.sha256) throw new Error('tally listen saved a different file');
      await settle(run.path);
      ours.push(run);
      ctx.log(`tally listen: peak ${run.peakRssMb.toFixed(1)} MB (ready: ${run.readyRssMb.toFixed(1)} MB)`);
      const out = join(ctx.tmpDir, 'curl.mp4');
      curl.push((await runCurl(origin, out)).peakRssMb);
      await settle(out);
    }
  } finally {
    await origin.stop();
  }
  const worst = Math.max(...ours.map((r) => r.peakRssMb));
  const speed = (bytes / MiB / (Math.min(...ours.map((r) => r.ms)) / 1000)).toFixed(0);
  return [
    {
      bench: 'listen-memory',
      metric: `tally listen peak RSS, ${bytes / MiB} MiB recording`,
      ours: worst,
      peer: hasGnuTime() ? Math.max(...curl) : null,
      peerName: 'curl',
      unit: 'MB',
      higherIsBetter: false,
      target: '< 80 MB',
      note:
        `worst of ${runs}; node flags ${flags.join(' ') || '(none)'}; RSS at ready ` +
        `${Math.max(...ours.map((r) => r.readyRssMb)).toFixed(0)} MB; webhook to saved at ${speed} MiB/s`,
    },
  ];
};
export default bench;
