/**
 * wrk (Debian package `wrk`) as the webhook load generator: one thread, N keep-alive connections, for a fixed
 * time, every request a JSON webhook for a distinct recording (a Lua script numbers them, so no answer is a
 * cheap duplicate). Parses requests, non-2xx answers, socket errors and the latency distribution. A burst of a
 * fixed count (`runWrkBurst`) has the script time itself with the monotonic clock and wrk stopped once the last
 * answer arrived.
 */
import { spawn } from 'node:child_process';
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
  if (!total) throw new Error(`wrk printed no totals: ${out.slice(-500)}`);
  const { p50, p99, failures, failureText } = summary(out);
  return {
    requests: Number(total[1]),
    seconds: ms(total[2] as string, total[3] as string) / 1000,
    failures,
    failureText,
    p50,
    p99,
  };
}

/** What wrk printed: latency percentiles and maximum (ms), and failed answers (non-2xx and socket errors). */
function summary(out: string): { p50: number; p99: number; max: number; failures: number; failureText: string } {
  const pct = (p: string): number => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)`, 'm').exec(out);
    return m ? ms(m[1] as string, m[2] as string) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  // "Latency   avg(unit)   stdev(unit)   max(unit)   +/- stdev"
  const latency = /^\s*Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m)/m.exec(out);
  return {
    p50: pct('50'),
    p99: pct('99'),
    max: latency ? ms(latency[1] as string, latency[2] as string) : NaN,
    failures: non2xx + socketErrors,
    failureText: `${non2xx} non-2xx, ${socketErrors} socket errors`,
  };
}

/**
 * A burst of `count` webhooks, each for a distinct recording at `recordingUrl` (a query string makes it so), so
 * the receiver downloads what it acknowledges. The script notes the monotonic time of the first request and of
 * the count-th answer (LuaJIT's FFI, clock_gettime) and prints it; wrk's own duration is the whole `-d`.
 */
const BURST_SCRIPT = `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } tally_timespec;
int clock_gettime(int clock, tally_timespec *tp);
]]
local ts = ffi.new("tally_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local run = os.getenv("TALLY_BENCH_RUN") or "r"
local recording = os.getenv("TALLY_BENCH_RECORDING")
local total = tonumber(os.getenv("TALLY_BENCH_COUNT"))
local counter, answered, first = 0, 0, nil
request = function()
  if first == nil then first = now_ms() end
  counter = counter + 1
  local ch = "burst-" .. run .. "-" .. counter
  local body = '{"id":"' .. ch .. '","url":"' .. recording .. '?r=' .. run .. '-' .. counter .. '","filesize":"1048576"}'
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
response = function(status, headers, body)
  answered = answered + 1
  if answered == total then
    io.write(string.format("burst-ms %.3f\\n", now_ms() - first))
    io.flush()
  end
end
`;

export interface WrkBurst {
  /** From the first request to the count-th answer. */
  ms: number;
  p50: number;
  p99: number;
  /** The slowest answer. */
  max: number;
  failures: number;
  failureText: string;
}

/**
 * Sends `count` webhooks over `connections` keep-alive connections with one wrk thread and stops wrk (SIGINT,
 * after which it prints its latency distribution) once the count-th answer is in. Rejects after `timeoutMs`.
 */
export async function runWrkBurst(
  dir: string,
  url: string,
  opts: { count: number; connections: number; runId: string; recordingUrl: string; timeoutMs?: number },
): Promise<WrkBurst> {
  const script = join(dir, 'burst.lua');
  await writeFile(script, BURST_SCRIPT);
  const child = spawn('wrk', ['-t1', `-c${opts.connections}`, '-d600s', '--latency', '-s', script, url], {
    env: {
      ...process.env,
      TALLY_BENCH_RUN: opts.runId,
      TALLY_BENCH_RECORDING: opts.recordingUrl,
      TALLY_BENCH_COUNT: String(opts.count),
    },
  });
  let out = '';
  let burstMs: number | null = null;
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const m = burstMs === null ? /burst-ms ([\d.]+)/.exec(out) : null;
    if (m) {
      burstMs = Number(m[1]);
      child.kill('SIGINT');
    }
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
  if (burstMs === null) throw new Error(`wrk did not see ${opts.count} answers: ${out.slice(-500)}`);
  return { ms: burstMs, ...summary(out) };
}
