/**
 * Child process for the studio bench: one `StudioFollower` (as `tally follow` runs it) against the bench's
 * nats-server, timed from its `ready` to the `saved` of the one announced recording, which includes the
 * verification (size + sha256) and the fsync of the file and folder.
 * Usage: node mirror-runner.mjs '<json MirrorJob>'
 * Prints `{ms, bytes, peakRssMb, baselineRssMb, path}` (peak RSS: getrusage maxrss, like the download runner).
 */
import { performance } from 'node:perf_hooks';
import { StudioFollower } from '../../electron/core/studio/follower.js';

export interface MirrorJob {
  url: string;
  folder: string;
  stateDir: string;
  name: string;
}

export interface MirrorRun {
  ms: number;
  bytes: number;
  peakRssMb: number;
  baselineRssMb: number;
  path: string;
}

const job = JSON.parse(process.argv[2] ?? '{}') as MirrorJob;
const follower = new StudioFollower({
  url: new URL(job.url),
  credentials: null,
  folder: job.folder,
  name: job.name,
  stateDir: job.stateDir,
});
const baselineRssMb = process.resourceUsage().maxRSS / 1024;
let started = 0;
const saved = new Promise<{ path: string; bytes: number }>((resolve) => follower.once('saved', resolve));
follower.once('ready', () => (started = performance.now()));
await follower.start();
const result = await saved;
const ms = performance.now() - started;
await follower.stop();
const run: MirrorRun = {
  ms,
  bytes: result.bytes,
  path: result.path,
  peakRssMb: process.resourceUsage().maxRSS / 1024,
  baselineRssMb,
};
process.stdout.write(`${JSON.stringify(run)}\n`);
