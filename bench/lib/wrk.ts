/**
 * wrk (Debian package `wrk`) as the webhook load generator: one thread, N keep-alive connections, for a fixed
 * time, every request a JSON webhook for a distinct recording (a Lua script numbers them, so no answer is a
 * cheap duplicate). Parses requests, non-2xx answers, socket errors and the latency distribution.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from './harness.js';

export interface WrkResult {
  requests: number;
  seconds: number;
  /** Answers outside 2xx/3xx plus socket errors (connect, read, write, timeout). */
  failures: number;
  failureText: string;
  p50: number;
  p99: number;
}

const SCRIPT = `
local counter = 0
local run = os.getenv("TALLY_BENCH_RUN") or "r"
request = function()
  counter = counter + 1
  local ch = "bench-" .. run .. "-" .. counter
  local body = '{"id":"' .. ch .. '","url":"https://s3.amazonaws.com/bench-service/' .. run .. 'x' .. counter ..
    '/' .. ch .. '.mp4","filesize":"104857600","duration":"3600","thumbnail":""}'
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
`;

/** Writes the Lua script once into `dir`; returns its path. */
export async function wrkScript(dir: string): Promise<string> {
  const path = join(dir, 'webhooks.lua');
  await writeFile(path, SCRIPT);
  return path;
}

function ms(value: string, unit: string): number {
  const n = Number(value);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : unit === 'm' ? n * 60_000 : n;
}

/** Runs wrk against `url` for `seconds` with `connections` connections; `runId` keeps URLs unique across runs. */
export async function runWrk(
  script: string,
  url: string,
  opts: { seconds: number; connections: number; runId: string },
): Promise<WrkResult> {
  const args = ['-t1', `-c${opts.connections}`, `-d${opts.seconds}s`, '--latency', '-s', script, url];
  const r = await runCommand('wrk', args, { env: { ...process.env, TALLY_BENCH_RUN: opts.runId } });
  if (r.code !== 0) throw new Error(`wrk failed (${r.code}): ${r.stderr.slice(-500)}`);
  const out = r.stdout;
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(out);
  const pct = (p: string): number => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)`, 'm').exec(out);
    return m ? ms(m[1] as string, m[2] as string) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  if (!total) throw new Error(`wrk printed no totals: ${out.slice(-500)}`);
  return {
    requests: Number(total[1]),
    seconds: ms(total[2] as string, total[3] as string) / 1000,
    failures: non2xx + socketErrors,
    failureText: `${non2xx} non-2xx, ${socketErrors} socket errors`,
    p50: pct('50'),
    p99: pct('99'),
  };
}
