/**
 * One webhook responder of the `webhook-acks` bench, alone in its own Node process, so that neither the bench
 * runner (tsx), nor the other responders' heaps, nor our inbox's growing index share its event loop or its
 * garbage collector: each p99 is its own. Usage: `node ack-server.mjs '<json AckServerJob>'`. Prints one JSON
 * line `{"url":...}` when listening; on a line `stats` on stdin it prints `AckServerStats` (CPU since the last
 * `stats`, journalled job count); on `stop` it closes and exits.
 *
 * - `ours`: a real WebhookReceiver + Inbox (every 200 after its fdatasync; group commit) + TokenStore + origin
 *   policy, the unfinished-jobs cap lifted (nothing downloads here);
 * - `ceiling`: a bare node:http server that reads the body and answers `{"ok":true}` (nothing durable);
 * - `naive`: append the line and fdatasync per request, no batching.
 */
import { open } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';
import { Inbox } from '../../electron/core/recordings/inbox.js';
import { WebhookReceiver } from '../../electron/core/webhook/receiver.js';
import { TokenStore } from '../../electron/core/webhook/token.js';
import { percentile } from './harness.js';

export type AckServerKind = 'ours' | 'ceiling' | 'naive';

export interface AckServerJob {
  kind: AckServerKind;
  /** A folder of its own for the journal (ours) or the appended file (naive). */
  dir: string;
}

export interface AckServerStats {
  /** User + system CPU of the whole process (main thread and libuv pool) since the previous `stats`, in µs. */
  cpuMicros: number;
  /** Webhooks journalled so far (ours) or answered (others). */
  stored: number;
  /** Ours: journal batches (group commits) since the previous `stats`. */
  commits: number;
  /** Ours: p50 and p99 of one commit's write + fdatasync, as the journal saw them under this load, in ms. */
  commitP50: number;
  commitP99: number;
  /** p99 of the event loop's delay (how long a ready callback waited for the JavaScript thread), in ms. */
  loopDelayP99: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as AckServerJob;
const OK = '{"ok":true}';

/** A responder that reads the whole body, runs `work` with it, then answers 200 `{"ok":true}`. */
async function responder(
  work: (body: Buffer) => Promise<void> | void,
): Promise<{ url: string; close(): Promise<void> }> {
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
  return {
    url: `http://127.0.0.1:${port}/hooks/bench`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

let stored = 0;
/** Wall time of each commit (the write and the fdatasync of one batch), through the journal's handle seam. */
let commits: number[] = [];
let commitStarted = 0;
let url: string;
let close: () => Promise<void>;
if (job.kind === 'ours') {
  const inbox = await Inbox.open(join(job.dir, 'state'), {
    wrapJournal: (file) => ({
      write: (buffer, offset, length) => {
        commitStarted = performance.now();
        return file.write(buffer, offset, length);
      },
      datasync: async () => {
        await file.datasync();
        commits.push(performance.now() - commitStarted);
      },
      truncate: (length) => file.truncate(length),
      close: () => file.close(),
    }),
  });
  const tokens = await TokenStore.open(join(job.dir, 'state'));
  const receiver = new WebhookReceiver({
    inbox,
    tokens,
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
    // Nothing downloads here, so every job stays unfinished: the flood cap (5,000) would refuse the rest.
    maxUnfinishedJobs: Number.MAX_SAFE_INTEGER,
  });
  await receiver.start();
  url = receiver.localUrl;
  close = async () => {
    await receiver.stop(1000);
    stored = inbox.keys().length;
    await inbox.close();
  };
  receiver.on('received', () => (stored += 1));
} else if (job.kind === 'ceiling') {
  ({ url, close } = await responder(() => void (stored += 1)));
} else {
  const file = await open(join(job.dir, 'naive.jsonl'), 'a');
  const server = await responder(async (body) => {
    await file.write(`${body.toString('utf8')}\n`);
    await file.datasync();
    stored += 1;
  });
  url = server.url;
  close = async () => {
    await server.close();
    await file.close();
  };
}

const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
let cpu = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ url })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'stats') {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const stats: AckServerStats = {
      cpuMicros: used.user + used.system,
      stored,
      commits: commits.length,
      commitP50: commits.length ? percentile(commits, 50) : NaN,
      commitP99: commits.length ? percentile(commits, 99) : NaN,
      loopDelayP99: loop.percentile(99) / 1e6,
    };
    commits = [];
    loop.reset();
    process.stdout.write(`${JSON.stringify(stats)}\n`);
  } else if (line === 'stop') {
    await close();
    process.stdout.write(`${JSON.stringify({ stored })}\n`);
    process.exit(0);
  }
}
