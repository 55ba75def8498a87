/**
 * Web client uploads: curl streams a 1 GiB recording (256 MiB with --quick) to `/uploads/<token>` on the real
 * receiver, beside the same upload to a bare node:http sink that pipes the body into a file and fsyncs it (the
 * floor for "receive and store"). Reports throughput and the receiving process's peak RSS growth, sampled in
 * process while the upload runs (curl is a separate process, so it does not count).
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DownloadOriginPolicy } from '../electron/core/net/url-policy.js';
import { mountUploads } from '../electron/core/uploads/upload-route.js';
import { WebhookReceiver } from '../electron/core/webhook/receiver.js';
import { TokenStore } from '../electron/core/webhook/token.js';
import { hasCommand, runCommand, type Benchmark, type BenchContext } from './lib/harness.js';

const MiB = 1024 * 1024;

/** Writes a file of `size` bytes from one random-looking MiB repeated (no memory spike while creating it). */
async function makeFile(path: string, size: number): Promise<void> {
  const chunk = Buffer.alloc(MiB);
  for (let i = 0; i < chunk.length; i += 1) chunk[i] = (i * 2654435761) >>> 24;
  const handle = await open(path, 'w');
  try {
    for (let written = 0; written < size; written += MiB) await handle.write(chunk, 0, Math.min(MiB, size - written));
  } finally {
    await handle.close();
  }
}

interface Run {
  mibPerSec: number;
  peakRssGrowthMb: number;
}

/** Runs curl against `url` while sampling this process's RSS; throws unless the answer is 2xx. */
async function measure(url: string, file: string, size: number): Promise<Run> {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  try {
    // -T streams the file (--data-binary @file would first read all of it into curl's memory).
    const r = await runCommand('curl', [
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code} %{time_total}',
      '-X',
      'POST',
      '-T',
      file,
      '-H',
      'Content-Type: audio/webm',
      '-H',
      'X-FILENAME: bench.webm',
      '-H',
      'Expect:',
      url,
    ]);
    const [code, seconds] = r.stdout.trim().split(' ');
    if (r.code !== 0 || !code?.startsWith('2')) throw new Error(`upload failed: ${r.stdout} ${r.stderr}`);
    return { mibPerSec: size / MiB / Number(seconds), peakRssGrowthMb: (peak - baseline) / 1e6 };
  } finally {
    clearInterval(sampler);
  }
}

async function ours(ctx: BenchContext, file: string, size: number): Promise<Run> {
  const state = join(ctx.tmpDir, 'state');
  const folder = join(ctx.tmpDir, 'ours');
  const receiver = new WebhookReceiver({
    inbox: { add: () => Promise.reject(new Error('no webhooks in this bench')) },
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
    tokens: await TokenStore.open(state),
    timeouts: { requestMs: 0 },
  });
  await mountUploads(receiver, { folder, maxBytes: 4 * 1024 * MiB, allowedOrigins: () => [] });
  await receiver.start();
  try {
    return await measure(`${receiver.origin}${receiver.routePath('uploads')}`, file, size);
  } finally {
    await receiver.stop();
    await rm(folder, { recursive: true, force: true });
  }
}

async function bareSink(ctx: BenchContext, file: string, size: number): Promise<Run> {
  const folder = join(ctx.tmpDir, 'peer');
  await mkdir(folder, { recursive: true });
  const server = createServer((req, res) => {
    const target = join(folder, 'upload.bin');
    void (async () => {
      await pipeline(req, createWriteStream(target));
      const handle = await open(target, 'r+');
      await handle.sync();
      await handle.close();
      res.writeHead(201).end();
    })().catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  try {
    return await measure(`http://127.0.0.1:${port}/`, file, size);
  } finally {
    server.close();
    await rm(folder, { recursive: true, force: true });
  }
}

const bench: Benchmark = async (ctx) => {
  if (!(await hasCommand('curl'))) throw new Error('curl is needed for this benchmark');
  const size = (ctx.quick ? 256 : 1024) * MiB;
  const file = join(ctx.tmpDir, 'recording.webm');
  await makeFile(file, size);
  ctx.log(`uploading ${size / MiB} MiB with curl`);
  const peer = await bareSink(ctx, file, size);
  const tally = await ours(ctx, file, size);
  await rm(file, { force: true });
  return [
    {
      bench: 'uploads',
      metric: `upload ${size / MiB} MiB (throughput)`,
      ours: tally.mibPerSec,
      peer: peer.mibPerSec,
      peerName: 'node:http → file',
      unit: 'MiB/s',
      higherIsBetter: true,
      target: '≥ 0.8x',
      note: 'Tally also hashes (sha256), checks CORS/type/size and fsyncs the file and its folder.',
    },
    {
      bench: 'uploads',
      metric: `peak RSS growth during ${size / MiB} MiB upload`,
      ours: tally.peakRssGrowthMb,
      peer: peer.peakRssGrowthMb,
      peerName: 'node:http → file',
      unit: 'MB',
      higherIsBetter: false,
      target: '< 50 MB',
    },
  ];
};
export default bench;
