/**
 * Studio mode: how fast and how lean a member mirrors a recording from the team server, against `tally listen`
 * downloading the same file from an nginx origin. The recording is put into the JetStream Object Store and
 * announced beforehand (as the receiver does, not timed); then a `StudioFollower` in a child process mirrors it
 * (durable consumer, ordered chunk reads, sha256, fsync), and our download engine in a child fetches it from
 * nginx the way `tally listen` does (4 ranges above 32 MiB, MD5/size checks, fsync). Both outputs are checked
 * against the source's SHA-256. Throughput and peak RSS, medians / worst of the runs.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { STUDIO_SUBJECT, DEFAULT_RETENTION_MS, ensureStudioStream } from '../electron/core/studio/team.js';
import { NatsTeamStore } from '../electron/core/studio/store.js';
import type { Announcement } from '../electron/core/studio/announcement.js';
import { bundleHelper, runNodeChild } from './lib/child.js';
import { MiB, mbps, runOurs, settle, startOrigin } from './lib/download.js';
import { sha256File } from './lib/files.js';
import { hasCommand, median, type Benchmark, type BenchRow } from './lib/harness.js';
import type { MirrorRun } from './lib/mirror-runner.js';
import { startNats } from './lib/nats.js';

const bench: Benchmark = async (ctx) => {
  if (!(await hasCommand('nats-server'))) {
    ctx.log('nats-server is not installed (Debian package nats-server): skipped');
    return [];
  }
  const bytes = (ctx.quick ? 64 : 1024) * MiB;
  const runs = ctx.quick ? 1 : 3;
  const origin = await startOrigin(ctx, bytes);
  const nats = await startNats(ctx.tmpDir);
  const runner = await bundleHelper('mirror-runner.ts', ctx.tmpDir, { cjsRequire: true });
  const source = join(origin.dir, 'www', 'recording.mp4');
  const out = join(ctx.tmpDir, 'out.mp4');
  const mirror = { ms: [] as number[], rss: [] as number[] };
  const listen = { ms: [] as number[], rss: [] as number[] };
  try {
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    await ensureStudioStream(nc, { retentionMs: DEFAULT_RETENTION_MS, owner: true });
    const put = await new NatsTeamStore(nc, { retentionMs: DEFAULT_RETENTION_MS }).put({
      identity: 'rec-bench',
      path: source,
      bytes,
    });
    const announcement: Announcement = {
      v: 1,
      identity: 'rec-bench',
      kind: 'server',
      channelId: 'bench',
      fileName: 'bench.mp4',
      bytes,
      sha256: put.sha256,
      savedAt: new Date().toISOString(),
      store: put.ref,
    };
    await jetstream(nc).publish(STUDIO_SUBJECT, JSON.stringify(announcement), { msgID: 'rec-bench' });
    await nc.close();
    for (let i = 0; i < runs; i += 1) {
      // A new member each run (its own name and state), so each one mirrors the recording from scratch.
      const folder = join(ctx.tmpDir, `member-${i}`);
      await mkdir(folder, { recursive: true });
      const run = await runNodeChild<MirrorRun>(runner, [
        JSON.stringify({ url: nats.url, folder, stateDir: join(ctx.tmpDir, `state-${i}`), name: `bench-${i}` }),
      ]);
      if (run.bytes !== bytes || (await sha256File(run.path)) !== origin.sha256) {
        throw new Error('the mirrored file is not the source byte for byte');
      }
      mirror.ms.push(run.ms);
      mirror.rss.push(run.peakRssMb);
      ctx.log(`member: ${mbps(bytes, run.ms).toFixed(0)} MB/s, peak ${run.peakRssMb.toFixed(0)} MB (sha256 ok)`);
      await rm(folder, { recursive: true, force: true });

      await settle(out);
      const dl = await runOurs(origin, out, { segments: 4, thresholdBytes: 32 * MiB });
      listen.ms.push(dl.ms);
      listen.rss.push(dl.peakRssMb);
      ctx.log(
        `listen from nginx: ${mbps(bytes, dl.ms).toFixed(0)} MB/s, peak ${dl.peakRssMb.toFixed(0)} MB (sha256 ok)`,
      );
    }
  } finally {
    await settle(out);
    await nats.stop();
    await origin.stop();
  }
  const size = `${bytes / MiB} MiB`;
  return [
    {
      bench: 'studio-mirror',
      metric: `member mirror throughput, ${size}`,
      ours: mbps(bytes, median(mirror.ms)),
      peer: mbps(bytes, median(listen.ms)),
      peerName: 'tally listen ← nginx',
      unit: 'MB/s',
      higherIsBetter: true,
      note: `median of ${runs}; both verified by sha256 and fsync'd; the member reads 512 KiB chunks from JetStream`,
    },
    {
      bench: 'studio-mirror',
      metric: `member peak RSS, ${size}`,
      ours: Math.max(...mirror.rss),
      peer: Math.max(...listen.rss),
      peerName: 'tally listen ← nginx',
      unit: 'MB',
      higherIsBetter: false,
    },
  ] satisfies BenchRow[];
};
export default bench;
