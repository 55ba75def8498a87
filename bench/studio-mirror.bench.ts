/**
 * Studio mode, the real commands on both sides, each against the floor of its own engine (issue 34):
 * - A member (`tally follow`, the built CLI through bin/tally.js with its shebang's Node flags) mirrors a
 *   recording from the team server. The recording is put into the JetStream Object Store and announced
 *   beforehand (as the receiver does, not timed). The member is timed from its `ready` line to its `saved` line
 *   (durable consumer, ordered chunk reads, sha256, fsync of file and folder), against a bare Object Store get
 *   of the same object with the same NATS client in its own process (bench/lib/nats-floor.ts: chunks written
 *   to a file in order, fsync), and, for context, `tally listen` downloading the same file from an nginx origin
 *   after one webhook (webhook's POST to its `saved` line).
 * - A receiver (`tally listen --team`) saves the same file from nginx and publishes it: its publish is timed
 *   from its `saved` line to its `published` line (claim, put, verification, announcement), against a bare
 *   Object Store put of the same file with the same client (same server, bucket and chunk size).
 * Saved files are checked against the source's SHA-256. Peak RSS is each process's VmHWM, read after the save.
 * Runs of ours and of the floor alternate (the order rotates); medians of the throughputs, worst of the peaks.
 */
import { mkdir, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { STUDIO_SUBJECT, DEFAULT_RETENTION_MS, ensureStudioStream } from '../electron/core/studio/team.js';
import { NatsTeamStore } from '../electron/core/studio/store.js';
import type { Announcement } from '../electron/core/studio/announcement.js';
import { bundleHelper, cliNodeFlags, runNodeChild } from './lib/child.js';
import { runListen, startCli } from './lib/cli-process.js';
import { MiB, mbps, settle, startOrigin } from './lib/download.js';
import { sha256File } from './lib/files.js';
import { hasCommand, median, type Benchmark, type BenchRow } from './lib/harness.js';
import { startNats, type NatsBench } from './lib/nats.js';
import type { FloorJob, FloorResult } from './lib/nats-floor.js';

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

/**
 * `tally listen --team` saving one recording from `url` and publishing it: the span from its `saved` line to its
 * `published` line, the CPU it used meanwhile and its peak RSS.
 */
async function runReceiver(nats: NatsBench, url: string, bytes: number, dir: string): Promise<MemberRun> {
  const folder = join(dir, 'recordings');
  const cli = await startCli(
    ['listen', '--ndjson', '--folder', folder, '--port', '0', '--tunnel', 'none', '--team', nats.url],
    dir,
    { TALLY_DOWNLOAD_ORIGINS: new URL(url).origin },
  );
  try {
    // Listened for at once: the team line may come before or after the ready line.
    const [ready] = await Promise.all([cli.next('ready'), cli.next('team')]);
    const saved = cli.next('saved');
    const published = cli.next('published');
    published.catch(() => undefined); // awaited below; a failure first is reported by `saved`
    const answer = await fetch(String(ready.localUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'bench-publish', url, filesize: String(bytes) }),
    });
    if (answer.status !== 200) throw new Error(`webhook answered ${answer.status}`);
    const event = await saved;
    const [cpu, natsCpu] = [await cli.cpuSeconds(), await nats.cpuSeconds()];
    const started = performance.now();
    const shared = await published;
    const ms = performance.now() - started;
    const used = { cpu: (await cli.cpuSeconds()) - cpu, natsCpu: (await nats.cpuSeconds()) - natsCpu };
    if (shared.bytes !== bytes) throw new Error(`tally listen --team published ${String(shared.bytes)} bytes`);
    return { ms, ...used, peakRssMb: await cli.peakRssMb(), readyRssMb: 0, path: String(event.path) };
  } finally {
    await cli.stop();
  }
}

const load = (): string => loadavg()[0]!.toFixed(1);

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
  const receiver = samples();
  const floorGet: FloorResult[] = [];
  const floorPut: FloorResult[] = [];
  const floor = await bundleHelper('nats-floor.ts', ctx.tmpDir, { cjsRequire: true });
  const bare = (job: Omit<FloorJob, 'server'>) =>
    runNodeChild<FloorResult>(floor, [JSON.stringify({ ...job, server: nats.url } satisfies FloorJob)]);
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
    const bareGet = async () => {
      const out = join(ctx.tmpDir, 'bare-get.mp4');
      const run = await bare({ op: 'get', name: 'rec-bench', out });
      if (run.bytes !== bytes || (await sha256File(out)) !== origin.sha256) throw new Error('the bare get differs');
      await settle(out);
      floorGet.push(run);
      ctx.log(`bare get: ${mbps(bytes, run.ms).toFixed(0)} MB/s, CPU ${run.cpu.toFixed(2)} s, load ${load()}`);
    };
    // Members first: a new member mirrors every recording announced, so the receivers' come after.
    for (let i = 0; i < runs; i += 1) {
      if (i % 2 === 0) await bareGet();
      const memberDir = join(ctx.tmpDir, `member-${i}`);
      await keep(member, 'tally follow', memberDir, await runFollow(nats, bytes, memberDir, `bench-${i}`));
      if (i % 2 === 1) await bareGet();
      const listenDir = join(ctx.tmpDir, `listen-${i}`);
      await keep(listen, 'tally listen ← nginx', listenDir, await runListen(origin.url, bytes, listenDir));
    }
    const barePut = async (i: number) => {
      const run = await bare({ op: 'put', name: `bench-floor-put-${i}`, file: source });
      if (run.bytes !== bytes) throw new Error(`the bare put stored ${run.bytes} bytes`);
      floorPut.push(run);
      ctx.log(`bare put: ${mbps(bytes, run.ms).toFixed(0)} MB/s, CPU ${run.cpu.toFixed(2)} s, load ${load()}`);
    };
    for (let i = 0; i < runs; i += 1) {
      if (i % 2 === 0) await barePut(i);
      const dir = join(ctx.tmpDir, `receiver-${i}`);
      // A distinct URL each run (nginx ignores the query): a receiver does not publish what the team has.
      await keep(
        receiver,
        'tally listen --team, publish',
        dir,
        await runReceiver(nats, `${origin.url}?p=${i}`, bytes, dir),
      );
      if (i % 2 === 1) await barePut(i);
    }
  } finally {
    await nats.stop();
    await origin.stop();
  }
  const size = `${bytes / MiB} MiB`;
  const floorNote = (runs: FloorResult[], what: string) =>
    `${what}; median of ${runs.length}, in turns with ours; floor CPU ${median(runs.map((r) => r.cpu)).toFixed(2)} s, ` +
    `peak ${Math.max(...runs.map((r) => r.peakRssMb)).toFixed(0)} MB`;
  return [
    {
      bench: 'studio-mirror',
      metric: `tally follow against a bare get, ${size}`,
      ours: mbps(bytes, median(member.ms)),
      peer: mbps(bytes, median(floorGet.map((r) => r.ms))),
      peerName: 'bare Object Store get',
      unit: 'MB/s',
      higherIsBetter: true,
      target: '>= 0.8x',
      note: floorNote(
        floorGet,
        `the same object, the same @nats-io client and server; the floor writes the chunks to a file and fsyncs it; ` +
          `member CPU ${median(member.cpu).toFixed(2)} s; load ${load()}`,
      ),
    },
    {
      bench: 'studio-mirror',
      metric: `tally listen --team publish against a bare put, ${size}`,
      ours: mbps(bytes, median(receiver.ms)),
      peer: mbps(bytes, median(floorPut.map((r) => r.ms))),
      peerName: 'bare Object Store put',
      unit: 'MB/s',
      higherIsBetter: true,
      target: '>= 0.8x',
      note: floorNote(
        floorPut,
        `ours from the receiver's saved line to its published line (claim, put, verification, announcement); the ` +
          `same file, client, server, bucket and 512 KiB chunks; receiver CPU ${median(receiver.cpu).toFixed(2)} s ` +
          `+ nats-server ${median(receiver.nats).toFixed(2)} s, peak ${Math.max(...receiver.rss).toFixed(0)} MB; load ${load()}`,
      ),
    },
    {
      bench: 'studio-mirror',
      metric: `tally follow throughput, ${size}`,
      ours: mbps(bytes, median(member.ms)),
      peer: mbps(bytes, median(listen.ms)),
      peerName: 'tally listen ← nginx',
      unit: 'MB/s',
      higherIsBetter: true,
      target: 'context',
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
