/**
 * Shared bench plumbing: every benchmark returns rows of "our figure beside a peer's figure", and
 * bench/run.ts prints them as one table with the ratio. Benchmarks never fail on timing.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

export interface BenchRow {
  bench: string;
  metric: string;
  /** Our figure. */
  ours: number;
  /** The peer's figure on the same input, or null when the peer is unavailable. */
  peer: number | null;
  peerName: string;
  unit: string;
  /** Whether a bigger figure is better (throughput) or smaller (latency, memory). */
  higherIsBetter: boolean;
  /** The target ratio from the issue, e.g. 0.9 (x of the peer) for throughput. */
  target?: string;
  note?: string;
}

export interface BenchContext {
  quick: boolean;
  tmpDir: string;
  log(line: string): void;
}

export type Benchmark = (ctx: BenchContext) => Promise<BenchRow[]>;

/** A free TCP port on loopback (for peers like nginx that need a port in their config). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Runs a command to completion; resolves with exit code, wall time and output. */
export function runCommand(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; ms: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      resolve({ code, ms: Number(process.hrtime.bigint() - started) / 1e6, stdout, stderr }),
    );
  });
}

/** Whether an executable is on PATH. */
export async function hasCommand(name: string): Promise<boolean> {
  const r = await runCommand('sh', ['-c', `command -v ${name}`]).catch(() => null);
  return r?.code === 0;
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const idx = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[idx] as number;
}
