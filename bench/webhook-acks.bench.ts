/**
 * Webhook acknowledgements per second with the durable journal: a real WebhookReceiver writing into a real
 * Inbox (every 200 waits for its fdatasync; group commit shares one among the webhooks that arrived together)
 * against two responders on the same machine:
 * - the ceiling: a bare node:http server that reads the body and answers `{"ok":true}`, nothing durable;
 * - the naive durable one: append the line and fdatasync per request, no batching (what group commit avoids).
 * The load generator is wrk (Debian package `wrk`): one thread, 32 keep-alive connections, 10 s per run (quick:
 * 3 s), every request a webhook for a distinct recording (so none is a cheap duplicate), latency percentiles
 * from wrk. Without wrk, a Node child process sends a fixed count instead (its own event loop). Runs are
 * interleaved after an unmeasured warm-up, medians reported; every answer must be a 2xx and every acknowledged
 * webhook must be in the inbox. Targets (issue 10): at least 0.2x the bare responder, p99 under 10 ms.
 */
import { open } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DownloadOriginPolicy } from '../electron/core/net/url-policy.js';
import { Inbox } from '../electron/core/recordings/inbox.js';
import { WebhookReceiver } from '../electron/core/webhook/receiver.js';
import { TokenStore } from '../electron/core/webhook/token.js';
import { bundleHelper, runNodeChild } from './lib/child.js';
import { hasCommand, median, type Benchmark } from './lib/harness.js';
import type { LoadJob, LoadResult } from './lib/webhook-load.js';
import { runWrk, wrkScript } from './lib/wrk.js';

const CONCURRENCY = 32;
const OK = '{"ok":true}';

type Who = 'ours' | 'ceiling' | 'naive';

/** A responder that reads the whole body, then runs `work` with it, then answers 200 `{"ok":true}`. */
async function responder(work: (body: Buffer) => Promise<void> | void): Promise<{ url: string; server: Server }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => {
      void Promise.resolve(work(Buffer.concat(chunks))).then(
        () => {
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': OK.length });
          res.end(OK);
        },
        () => {
          res.writeHead(503).end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks/bench`, server };
}

/** One run's figures, whichever generator produced them. */
interface Run {
  acks: number;
  rate: number;
  p50: number;
  p99: number;
}

const bench: Benchmark = async (ctx) => {
  const useWrk = await hasCommand('wrk');
  const count = ctx.quick ? 2_000 : 20_000;
  const seconds = ctx.quick ? 3 : 10;
  const runs = ctx.quick ? 1 : 3;
  const warmup = ctx.quick ? 300 : 2_000;
  const load = useWrk ? '' : await bundleHelper('webhook-load.ts', ctx.tmpDir);
  const script = useWrk ? await wrkScript(ctx.tmpDir) : '';

  const stateDir = join(ctx.tmpDir, 'state');
  const inbox = await Inbox.open(stateDir);
  const tokens = await TokenStore.open(stateDir);
  const receiver = new WebhookReceiver({
    inbox,
    tokens,
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
    // Nothing downloads here, so every job stays unfinished: the flood cap (5,000) would refuse the rest.
    maxUnfinishedJobs: Number.MAX_SAFE_INTEGER,
  });
  let received = 0;
  receiver.on('received', () => (received += 1));
  await receiver.start();

  const ceiling = await responder(() => undefined);
  const naiveFile = await open(join(ctx.tmpDir, 'naive.jsonl'), 'a');
  const naive = await responder(async (body) => {
    await naiveFile.write(`${body.toString('utf8')}\n`);
    await naiveFile.datasync();
  });
  const urls: Record<Who, string> = { ours: receiver.localUrl, ceiling: ceiling.url, naive: naive.url };

  const cpuPerAck: Record<Who, number[]> = { ours: [], ceiling: [], naive: [] };
  let sentToOurs = 0;
  let runNo = 0;
  const fire = async (who: Who, n: number, warm = false): Promise<Run> => {
    runNo += 1;
    // The servers live in this process, which does nothing else meanwhile: its CPU time is theirs.
    const cpu = process.cpuUsage();
    let run: Run;
    if (useWrk) {
      const r = await runWrk(script, urls[who], {
        seconds: warm ? 1 : seconds,
        connections: CONCURRENCY,
        runId: `r${runNo}`,
      });
      if (r.failures > 0) throw new Error(`${who}: ${r.failures} of ${r.requests} webhooks failed (${r.failureText})`);
      run = { acks: r.requests, rate: r.requests / r.seconds, p50: r.p50, p99: r.p99 };
    } else {
      const job: LoadJob = { url: urls[who], count: n, concurrency: CONCURRENCY, runId: `r${runNo}` };
      const r = await runNodeChild<LoadResult>(load, [JSON.stringify(job)]);
      if (r.failures > 0)
        throw new Error(`${who}: ${r.failures} of ${n} webhooks not acknowledged (${r.firstFailure})`);
      run = { acks: n, rate: (n / r.ms) * 1000, p50: r.p50, p99: r.p99 };
    }
    const used = process.cpuUsage(cpu);
    cpuPerAck[who].push((used.user + used.system) / run.acks);
    if (who === 'ours') sentToOurs += run.acks;
    return run;
  };

  const results: Record<Who, Run[]> = { ours: [], ceiling: [], naive: [] };
  const rotation: Who[] = ['ours', 'ceiling', 'naive'];
  try {
    for (const who of rotation) await fire(who, warmup, true);
    for (let i = 0; i < runs; i += 1) {
      for (let k = 0; k < rotation.length; k += 1) {
        const who = rotation[(i + k) % rotation.length] as Who;
        const r = await fire(who, count);
        results[who].push(r);
        ctx.log(`${who}: ${r.rate.toFixed(0)} acks/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`);
      }
    }
    // Every acknowledged webhook must really be in the journal, or the figure is worthless. (wrk counts only
    // the answers it read before its time was up: a few more may have been journalled meanwhile.)
    const journalled = inbox.keys().length;
    if (received !== journalled || journalled < sentToOurs || (!useWrk && journalled !== sentToOurs)) {
      throw new Error(`${sentToOurs} webhooks acknowledged, ${received} received, ${journalled} jobs in the inbox`);
    }
  } finally {
    await receiver.stop(1000);
    await inbox.close();
    await naiveFile.close();
    await Promise.all([ceiling.server, naive.server].map((s) => new Promise((r) => s.close(r))));
  }

  const rate = (who: Who): number => median(results[who].map((r) => r.rate));
  const p99 = (who: Who): number => median(results[who].map((r) => r.p99));
  const cpu = (who: Who): string => `${median(cpuPerAck[who].slice(1)).toFixed(0)} µs`;
  const cpuNote = `server CPU per ack: ours ${cpu('ours')}, bare ${cpu('ceiling')}, fsync-per-request ${cpu('naive')}`;
  const base = { bench: 'webhook-acks', higherIsBetter: true } as const;
  const n = useWrk ? `wrk ${seconds} s, c=${CONCURRENCY}` : `${count.toLocaleString('en')} webhooks, c=${CONCURRENCY}`;
  return [
    {
      ...base,
      metric: `acks/s, ${n}`,
      ours: rate('ours'),
      peer: rate('ceiling'),
      peerName: 'bare node:http',
      unit: '/s',
      target: '>= 0.2x',
      note: `median of ${runs}; ${cpuNote}`,
    },
    {
      ...base,
      metric: `p99 latency, ${n}`,
      ours: p99('ours'),
      peer: p99('ceiling'),
      peerName: 'bare node:http',
      unit: 'ms',
      higherIsBetter: false,
      target: '< 10 ms',
      note: `median of ${runs} run(s) of each p99; our p50 ${median(results.ours.map((r) => r.p50)).toFixed(2)} ms`,
    },
    {
      ...base,
      metric: `acks/s, durable both`,
      ours: rate('ours'),
      peer: rate('naive'),
      peerName: 'fsync per request',
      unit: '/s',
      target: '(context)',
      note: 'peer: append + fdatasync per webhook without batching (what group commit saves)',
    },
  ];
};
export default bench;
