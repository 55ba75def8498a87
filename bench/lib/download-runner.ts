/**
 * Child process for the download benches: one `downloadFile` call, timed from the call to its return (which
 * includes Tally's fsync of the file and the folder, a durability curl and aria2c do not pay).
 * Usage: node --import tsx bench/lib/download-runner.ts '<json DownloadJob>'
 * Prints `{ms, bytes, connections, peakRssMb, baselineRssMb}`: peak RSS is the kernel's high-water mark
 * (getrusage maxrss, the same figure `/usr/bin/time -f %M` reports for the peers); the baseline is that mark
 * once everything is imported, just before the download starts.
 */
import { performance } from 'node:perf_hooks';
import { downloadFile } from '../../electron/core/download/fetch-file.js';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';

export interface DownloadJob {
  url: string;
  dest: string;
  segments: number;
  /** Files larger than this use parallel ranges. */
  thresholdBytes?: number;
}

export interface DownloadRun {
  ms: number;
  bytes: number;
  connections: number;
  peakRssMb: number;
  baselineRssMb: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as DownloadJob;
const policy = new DownloadOriginPolicy([new URL(job.url).origin]);
const baselineRssMb = process.resourceUsage().maxRSS / 1024;
const started = performance.now();
const result = await downloadFile({
  url: job.url,
  dest: job.dest,
  partPath: `${job.dest}.part`,
  policy,
  segments: job.segments,
  ...(job.thresholdBytes !== undefined ? { segmentThresholdBytes: job.thresholdBytes } : {}),
});
const ms = performance.now() - started;
const run: DownloadRun = {
  ms,
  bytes: result.bytes,
  connections: result.connections,
  peakRssMb: process.resourceUsage().maxRSS / 1024,
  baselineRssMb,
};
process.stdout.write(`${JSON.stringify(run)}\n`);
