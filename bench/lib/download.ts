/**
 * Shared pieces of the download benches: an nginx origin serving one pseudo-random file, our engine in a
 * child process, and the peers (curl, aria2c) with their time and peak RSS measured the same way.
 */
import { existsSync } from 'node:fs';
import { mkdir, open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bundleHelper, runNodeChild } from './child.js';
import type { DownloadJob, DownloadRun } from './download-runner.js';
import { removeAll, sha256File, makeRandomFile } from './files.js';
import { runCommand, type BenchContext } from './harness.js';
import { startNginx } from './nginx.js';
import type { BenchTls } from './tls-ca.js';

export const MiB = 1 << 20;

export interface Origin {
  /** URL of the served file. */
  url: string;
  bytes: number;
  sha256: string;
  dir: string;
  /** The bundled download-runner to run with `node`. */
  runner: string;
  /** The bundled node-pipe floor. */
  nodePipe: string;
  /** Over HTTPS: the CA to trust (curl's `--cacert`, Tally's NODE_EXTRA_CA_CERTS). */
  caFile?: string;
  /** Requests the origin has served so far (each connection of a segmented download is one). */
  requests(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Writes a pseudo-random file of `bytes` to the bench's temp dir and serves it with nginx on loopback (over
 * HTTPS with `tls`).
 */
export async function startOrigin(
  ctx: BenchContext,
  bytes: number,
  limitRate?: string,
  opts: { tls?: BenchTls } = {},
): Promise<Origin> {
  const root = join(ctx.tmpDir, 'www');
  await mkdir(root, { recursive: true });
  const started = performance.now();
  const sha256 = await makeRandomFile(join(root, 'recording.mp4'), bytes);
  ctx.log(`wrote ${(bytes / MiB).toFixed(0)} MiB test file in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const runner = await bundleHelper('download-runner.ts', ctx.tmpDir);
  const nodePipe = await bundleHelper('node-pipe.ts', ctx.tmpDir);
  const served = { url: '', bytes, sha256, dir: ctx.tmpDir, runner, nodePipe };
  return serveAgain(served, join(ctx.tmpDir, 'nginx'), { ...(limitRate ? { limitRate } : {}), ...opts });
}

/**
 * Another nginx over the same file (another port; over HTTPS with `tls`), so one written file serves several
 * origins. Stop it apart from the first.
 */
export async function serveAgain(
  origin: Pick<Origin, 'bytes' | 'sha256' | 'dir' | 'runner' | 'nodePipe'>,
  workDir: string,
  opts: { limitRate?: string; tls?: BenchTls } = {},
): Promise<Origin> {
  const nginx = await startNginx({ root: join(origin.dir, 'www'), workDir, ...opts });
  return {
    ...origin,
    url: `${nginx.origin}/recording.mp4`,
    ...(opts.tls ? { caFile: opts.tls.caFile } : {}),
    requests: () => nginx.requests(),
    stop: () => nginx.stop(),
  };
}

/**
 * Flushes dirty pages left by the previous run (a deleted output still being written back would slow the
 * next one down) so every run starts from the same state.
 */
export async function settle(...outputs: string[]): Promise<void> {
  await removeAll(...outputs);
  await runCommand('sync', []);
}

/** Our `downloadFile` in a child; verifies the output is the source byte for byte before returning. */
export async function runOurs(
  origin: Origin,
  dest: string,
  job: Omit<DownloadJob, 'url' | 'dest'>,
): Promise<DownloadRun & { wallMs: number }> {
  const started = performance.now();
  const run = await runNodeChild<DownloadRun>(origin.runner, [JSON.stringify({ ...job, url: origin.url, dest })]);
  const wallMs = performance.now() - started;
  const size = (await stat(dest)).size;
  if (size !== origin.bytes || run.bytes !== origin.bytes) {
    throw new Error(`downloadFile produced ${size} bytes (reported ${run.bytes}), expected ${origin.bytes}`);
  }
  if ((await sha256File(dest)) !== origin.sha256)
    throw new Error('downloadFile produced a file with the wrong SHA-256');
  return { ...run, wallMs };
}

export interface PeerRun {
  /** Transfer time (curl: its own `time_total`; aria2c: wall time of the process). */
  ms: number;
  peakRssMb: number;
  /** User + system CPU seconds of the whole process (GNU time; NaN without it). */
  cpu: number;
}

const GNU_TIME = '/usr/bin/time';

/** Whether GNU time (Debian package `time`) is there to report a peer's peak RSS. */
export function hasGnuTime(): boolean {
  return existsSync(GNU_TIME);
}

/** Runs a peer; its peak RSS and CPU are NaN without GNU time. */
async function timed(
  cmd: string,
  args: string[],
): Promise<{ ms: number; stdout: string; peakRssMb: number; cpu: number }> {
  if (!hasGnuTime()) {
    const r = await runCommand(cmd, args);
    if (r.code !== 0) throw new Error(`${cmd} failed (${r.code}): ${r.stderr.slice(-500)}`);
    return { ms: r.ms, stdout: r.stdout, peakRssMb: NaN, cpu: NaN };
  }
  // GNU time prints the child's maxrss (KB, the same getrusage figure our child reports) and its user and system
  // CPU seconds as the last stderr line.
  const r = await runCommand(GNU_TIME, ['-f', '%M %U %S', cmd, ...args]);
  const [kb, user, sys] = (r.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  if (r.code !== 0 || !Number.isFinite(kb)) throw new Error(`${cmd} failed (${r.code}): ${r.stderr.slice(-500)}`);
  return { ms: r.ms, stdout: r.stdout, peakRssMb: (kb ?? NaN) / 1024, cpu: (user ?? NaN) + (sys ?? NaN) };
}

/**
 * `curl -s -o out url` (with `--cacert` over HTTPS); time is curl's own `%{time_total}` (no process start-up, like
 * our child's timer).
 */
export async function runCurl(origin: Origin, out: string): Promise<PeerRun> {
  const trust = origin.caFile ? ['--cacert', origin.caFile] : [];
  const r = await timed('curl', [...trust, '-s', '-o', out, '-w', '%{time_total} %{size_download}', origin.url]);
  const [seconds, size] = r.stdout.trim().split(' ').map(Number);
  if (size !== origin.bytes || (await stat(out)).size !== origin.bytes) throw new Error(`curl fetched ${size} bytes`);
  return { ms: (seconds ?? NaN) * 1000, peakRssMb: r.peakRssMb, cpu: r.cpu };
}

/** `aria2c -x4 -s4 -k1M` into `out`; time is the wall time of the process. */
export async function runAria2(origin: Origin, out: string): Promise<PeerRun> {
  const dir = out.slice(0, out.lastIndexOf('/'));
  const name = out.slice(out.lastIndexOf('/') + 1);
  const args = ['-x4', '-s4', '-k1M', '--allow-overwrite=true', '--file-allocation=none', '-q'];
  const trust = origin.caFile ? [`--ca-certificate=${origin.caFile}`] : [];
  const r = await timed('aria2c', [...args, ...trust, '-d', dir, '-o', name, origin.url]);
  if ((await stat(out)).size !== origin.bytes) throw new Error('aria2c fetched the wrong number of bytes');
  return { ms: r.ms, peakRssMb: r.peakRssMb, cpu: r.cpu };
}

/** Plain `http.get().pipe(createWriteStream())` + fsync in a child: Node's own speed on this machine. */
export async function runNodePipe(origin: Origin, out: string): Promise<PeerRun> {
  const run = await runNodeChild<{ ms: number; bytes: number; peakRssMb: number }>(origin.nodePipe, [origin.url, out]);
  if (run.bytes !== origin.bytes) throw new Error(`the node pipe wrote ${run.bytes} bytes`);
  return { ms: run.ms, peakRssMb: run.peakRssMb, cpu: NaN };
}

/** Time to fsync a finished file (what curl would pay for the durability `downloadFile` gives). */
export async function fsyncMs(file: string): Promise<number> {
  const started = performance.now();
  const handle = await open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  return performance.now() - started;
}

/** MB/s (decimal megabytes) for `bytes` in `ms`. */
export function mbps(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}
