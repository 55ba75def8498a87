/**
 * Studio mode, the real commands on both sides: a member (`tally follow`, the built CLI through bin/tally.js
 * with its shebang's Node flags) mirrors a recording from the team server, against `tally listen` downloading
 * the same file from an nginx origin after one webhook. The recording is put into the JetStream Object Store
 * and announced beforehand (as the receiver does, not timed). The member is timed from its `ready` line to its
 * `saved` line (durable consumer, ordered chunk reads, sha256, fsync of file and folder), `tally listen` from
 * the webhook's POST to its `saved` line (ranges added above 32 MiB while they help, size checks, fsync). Both saved files are
 * checked against the source's SHA-256. Peak RSS is each process's VmHWM, read after the save. Medians of the
 * throughputs, worst of the peaks.
 */
import { mkdir, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { STUDIO_SUBJECT, DEFAULT_RETENTION_MS, ensureStudioStream } from '../electron/core/studio/team.js';
import { NatsTeamStore } from '../electron/core/studio/store.js';
import type { Announcement } from '../electron/core/studio/announcement.js';
import { cliNodeFlags } from './lib/child.js';
import { runListen, startCli } from './lib/cli-process.js';
import { MiB, mbps, settle, startOrigin } from './lib/download.js';
import { sha256File } from './lib/files.js';
import { hasCommand, median, type Benchmark, type BenchRow } from './lib/harness.js';
import { startNats, type NatsBench } from './lib/nats.js';

interface MemberRun {
  ms: number;
  /** CPU seconds of the member and of nats-server over the same span. */
  cpu: number;
  natsCpu?: number;
  peakRssMb: number;
  readyRssMb: number;
  path: string;
}

/** `tally follow` as a new member (its own name and state), until it saved the one announced recording. */
async function runFollow(nats: NatsBench, bytes: number, dir: string, name: string): Promise<MemberRun> {
  const url = nats.url;
  const folder = join(dir, 'mirror');
  await mkdir(folder, { recursive: true });
  const cli = await startCli(['follow', '--team', url, '--folder', folder, '--name', name, '--ndjson'], dir);
  try {
    const ready = cli.next('ready');
    const saved = cli.next('saved');
    saved.catch(() => undefined); // awaited below; a failure before `ready` is reported by `ready`
    await ready;
    const [cpu, natsCpu] = [await cli.cpuSeconds(), await nats.cpuSeconds()];
    const started = performance.now();
    const readyRssMb = await cli.rssMb();
    const event = await saved;
    const ms = performance.now() - started;
    const used = { cpu: (await cli.cpuSeconds()) - cpu, natsCpu: (await nats.cpuSeconds()) - natsCpu };
    const peakRssMb = await cli.peakRssMb();
    if (event.bytes !== bytes) throw new Error(`tally follow saved ${String(event.bytes)} bytes, expected ${bytes}`);
    return { ms, ...used, peakRssMb, readyRssMb, path: String(event.path) };
  } finally {
    await cli.stop();
  }
}

const bench: Benchmark = async (ctx) => {
  if (!(await hasCommand('nats-server'))) {
    ctx.log('nats-server is not installed (Debian package nats-server): skipped');
    return [];
  }
  const bytes = (ctx.quick ? 64 : 1024) * MiB;
  const runs = ctx.quick ? 1 : 3;
  const origin = await startOrigin(ctx, bytes);
  const nats = await startNats(ctx.tmpDir);
  const source = join(origin.dir, 'www', 'recording.mp4');
  const flags = await cliNodeFlags();
  /** Each run's time, peak and ready RSS, CPU of the process and of nats-server meanwhile. */
  const samples = () => ({
    ms: [] as number[],
    rss: [] as number[],
    ready: [] as number[],
    cpu: [] as number[],
    nats: [] as number[],
  });
  const member = samples();
  const listen = samples();
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
    /** Checks one command's saved file against the source, clears its folder and keeps its figures. */
    const keep = async (into: typeof member, label: string, dir: string, run: MemberRun) => {
      if ((await sha256File(run.path)) !== origin.sha256) throw new Error(`${label} saved a different file`);
      await settle(run.path);
      await rm(dir, { recursive: true, force: true });
      into.ms.push(run.ms);
      into.rss.push(run.peakRssMb);
      into.ready.push(run.readyRssMb);
      into.cpu.push(run.cpu);
      if (run.natsCpu !== undefined) into.nats.push(run.natsCpu);
      ctx.log(
        `${label}: ${mbps(bytes, run.ms).toFixed(0)} MB/s, peak ${run.peakRssMb.toFixed(0)} MB, CPU ` +
          `${run.cpu.toFixed(2)} s${run.natsCpu === undefined ? '' : ` (nats-server ${run.natsCpu.toFixed(2)} s)`}, ` +
          `load ${loadavg()[0]!.toFixed(1)} (sha256 ok)`,
      );
    };
    for (let i = 0; i < runs; i += 1) {
      const memberDir = join(ctx.tmpDir, `member-${i}`);
      await keep(member, 'tally follow', memberDir, await runFollow(nats, bytes, memberDir, `bench-${i}`));
      const listenDir = join(ctx.tmpDir, `listen-${i}`);
      await keep(listen, 'tally listen ← nginx', listenDir, await runListen(origin.url, bytes, listenDir));
    }
  } finally {
    await nats.stop();
    await origin.stop();
  }
  const size = `${bytes / MiB} MiB`;
  return [
    {
      bench: 'studio-mirror',
      metric: `tally follow throughput, ${size}`,
      ours: mbps(bytes, median(member.ms)),
      peer: mbps(bytes, median(listen.ms)),
      peerName: 'tally listen ← nginx',
      unit: 'MB/s',
      higherIsBetter: true,
      note:
        `median of ${runs}; both real processes (node flags ${flags.join(' ') || '(none)'}), verified by sha256 ` +
        `and fsync'd; the member reads 512 KiB chunks from JetStream; CPU (median): member ${median(member.cpu).toFixed(2)} s ` +
        `+ nats-server ${median(member.nats).toFixed(2)} s, listen ${median(listen.cpu).toFixed(2)} s; load ` +
        `${loadavg()[0]!.toFixed(1)} at the end`,
    },
    {
      bench: 'studio-mirror',
      metric: `tally follow peak RSS, ${size}`,
      ours: Math.max(...member.rss),
      peer: Math.max(...listen.rss),
      peerName: 'tally listen ← nginx',
      unit: 'MB',
      higherIsBetter: false,
      note:
        `worst of ${runs} (VmHWM); RSS at ready: tally follow ${Math.max(...member.ready).toFixed(0)} MB, ` +
        `tally listen ${Math.max(...listen.ready).toFixed(0)} MB`,
    },
  ] satisfies BenchRow[];
};
export default bench;
