/**
 * Load generator for the webhook bench, in its own process so it does not share the receiver's event loop:
 * `concurrency` workers, each sending its share of `count` JSON webhooks back to back over a keep-alive
 * connection, every one for a distinct recording URL. A response counts only if it is 200 with `ok: true`
 * and not a duplicate. Usage: node webhook-load.mjs '<json LoadJob>'; prints a LoadResult.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { percentile } from './harness.js';

export interface LoadJob {
  url: string;
  count: number;
  concurrency: number;
  /** Makes recording URLs unique across runs against the same inbox. */
  runId: string;
  /**
   * A real recording to name in every webhook (made distinct with a query string), so the receiver downloads
   * what it acknowledges; by default an S3 URL nothing downloads from.
   */
  recordingUrl?: string;
}

export interface LoadResult {
  ms: number;
  ok: number;
  failures: number;
  /** First failure, for the error message. */
  firstFailure: string | null;
  p50: number;
  p99: number;
  max: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as LoadJob;
const agent = new http.Agent({ keepAlive: true, maxSockets: job.concurrency });
const target = new URL(job.url);

function body(i: number): string {
  const channel = `bench-${job.runId}-${i}`;
  return JSON.stringify({
    id: channel,
    url: job.recordingUrl
      ? `${job.recordingUrl}?n=${job.runId}x${i.toString(36)}`
      : `https://s3.amazonaws.com/bench-service/${job.runId}x${i.toString(36)}/${channel}.mp4`,
    filesize: job.recordingUrl ? undefined : '104857600',
    duration: '3600',
    thumbnail: '',
  });
}

function send(i: number): Promise<string | null> {
  const payload = body(i);
  return new Promise((resolve) => {
    const req = http.request(
      target,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const good = res.statusCode === 200 && /"ok":true/.test(text) && !/duplicate/.test(text);
          resolve(good ? null : `HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
        });
        res.once('error', (e) => resolve(String(e)));
      },
    );
    req.once('error', (e) => resolve(String(e)));
    req.end(payload);
  });
}

const latencies: number[] = [];
let next = 0;
let failures = 0;
let firstFailure: string | null = null;
const started = performance.now();
async function worker(): Promise<void> {
  while (next < job.count) {
    const i = next++;
    const t0 = performance.now();
    const failure = await send(i);
    latencies.push(performance.now() - t0);
    if (failure) {
      failures += 1;
      firstFailure ??= failure;
    }
  }
}
await Promise.all(Array.from({ length: job.concurrency }, () => worker()));
const ms = performance.now() - started;
agent.destroy();
const result: LoadResult = {
  ms,
  ok: job.count - failures,
  failures,
  firstFailure,
  p50: percentile(latencies, 50),
  p99: percentile(latencies, 99),
  max: Math.max(...latencies),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
