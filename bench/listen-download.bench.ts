/**
 * The whole product path downloading: the real `tally listen` (built CLI through bin/tally.js, its shebang's
 * Node flags, default settings) receives one webhook and saves the recording from nginx on loopback, timed from
 * the webhook's POST to its `saved` line (download, verification, fsync of file and folder). Three origins, each
 * against the peer a producer would otherwise use (issue 34):
 * - HTTP, unthrottled (1 GiB; quick 128 MiB) against `curl -s -o` (its own time_total), the reference client;
 * - HTTPS, the same file (the service serves recordings over HTTPS), from nginx with a certificate signed by a CA
 *   made at bench time (bench/lib/tls-ca.ts): Tally trusts it through NODE_EXTRA_CA_CERTS, curl through
 *   `--cacert`; nothing skips verification;
 * - nginx `limit_rate 24m` per connection (1 GiB; quick 96 MiB), like a CDN that throttles each connection,
 *   against `aria2c -x4 -s4 -k1M` (wall time of the process).
 * Beside each speed: CPU (user + system) per GiB of ours (/proc/<pid>/stat over the same span) and of the peer
 * (GNU time, whole process), and the peak RSS of both (VmHWM for ours; GNU time's maxrss for the peer). Over HTTP
 * and HTTPS a third reader gives Node's own floor on this machine, in the same turns: one GET on a `net`/`tls`
 * socket read into a reused buffer and written positionally (bench/lib/socket-floor.ts), what a transfer engine
 * on sockets can at best reach.
 * Runs are interleaved (the order rotates) and medians reported; the load average is in each note, since the
 * machine may be shared. Our file's SHA-256 is checked every run.
 */
import { mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { bundleHelper, runNodeChild } from './lib/child.js';
import { runListen } from './lib/cli-process.js';
import { MiB, fsyncMs, mbps, runAria2, runCurl, serveAgain, settle, startOrigin, type Origin } from './lib/download.js';
import { sha256File } from './lib/files.js';
import { hasCommand, median, type BenchContext, type BenchRow } from './lib/harness.js';
import { makeBenchTls } from './lib/tls-ca.js';

const GiB = 1024 * MiB;
const load = (): string => loadavg()[0]?.toFixed(2) ?? '?';

interface Sides {
  ours: { ms: number[]; rss: number[]; ready: number[]; cpu: number[]; connections: number[] };
  peer: { ms: number[]; rss: number[]; cpu: number[]; fsynced: number[] };
  /** Node's socket floor (unthrottled origins only). */
  floor: { ms: number[]; cpu: number[] };
  loads: string[];
}

interface FloorRun {
  ms: number;
  bytes: number;
  cpu: number;
  peakRssMb: number;
}

async function compare(
  ctx: BenchContext,
  origin: Origin,
  runs: number,
  peer: 'curl' | 'aria2c',
  floor?: string,
): Promise<Sides> {
  const result: Sides = {
    ours: { ms: [], rss: [], ready: [], cpu: [], connections: [] },
    peer: { ms: [], rss: [], cpu: [], fsynced: [] },
    floor: { ms: [], cpu: [] },
    loads: [load()],
  };
  const scheme = new URL(origin.url).protocol.replace(':', '');
  const peerOut = join(ctx.tmpDir, `${peer}-${scheme}.mp4`);
  const env = origin.caFile ? { NODE_EXTRA_CA_CERTS: origin.caFile } : {};
  for (let i = 0; i < runs; i += 1) {
    const order = i % 2 === 0 ? ['peer', 'ours', 'floor'] : ['floor', 'ours', 'peer'];
    for (const who of floor ? order : order.filter((w) => w !== 'floor')) {
      if (who === 'floor') {
        const out = join(ctx.tmpDir, `floor-${scheme}.mp4`);
        const run = await runNodeChild<FloorRun>(floor!, [origin.url, out], [], env);
        if ((await sha256File(out)) !== origin.sha256) throw new Error('the socket floor saved a different file');
        await settle(out);
        result.floor.ms.push(run.ms);
        result.floor.cpu.push(run.cpu);
        ctx.log(
          `node socket floor (${scheme}): ${mbps(origin.bytes, run.ms).toFixed(0)} MB/s, CPU ${run.cpu.toFixed(2)} s`,
        );
      } else if (who === 'ours') {
        const before = await origin.requests();
        const run = await runListen(origin.url, origin.bytes, join(ctx.tmpDir, `listen-${peer}-${scheme}-${i}`), env);
        if ((await sha256File(run.path)) !== origin.sha256) throw new Error('tally listen saved a different file');
        await settle(run.path);
        const connections = (await origin.requests()) - before;
        result.ours.ms.push(run.ms);
        result.ours.rss.push(run.peakRssMb);
        result.ours.ready.push(run.readyRssMb);
        result.ours.cpu.push(run.cpu);
        result.ours.connections.push(connections);
        ctx.log(
          `tally listen (${scheme}): ${mbps(origin.bytes, run.ms).toFixed(0)} MB/s, ${connections} request(s), ` +
            `CPU ${run.cpu.toFixed(2)} s, peak ${run.peakRssMb.toFixed(1)} MB (load ${load()})`,
        );
      } else {
        const run = peer === 'curl' ? await runCurl(origin, peerOut) : await runAria2(origin, peerOut);
        // Ours is timed to a file fsynced on disk; the same durability for the peer, as context.
        result.peer.fsynced.push(run.ms + (await fsyncMs(peerOut)));
        await settle(peerOut);
        result.peer.ms.push(run.ms);
        result.peer.rss.push(run.peakRssMb);
        result.peer.cpu.push(run.cpu);
        ctx.log(
          `${peer} (${scheme}): ${mbps(origin.bytes, run.ms).toFixed(0)} MB/s, CPU ${run.cpu.toFixed(2)} s, ` +
            `peak ${run.peakRssMb.toFixed(1)} MB (load ${load()})`,
        );
      }
    }
  }
  result.loads.push(load());
  return result;
}

/** Rows for one origin: speed against the peer, CPU per GiB of both, the peak RSS of both. */
function rows(
  label: string,
  bytes: number,
  r: Sides,
  peerName: string,
  speedTarget: string,
  cpuTarget: string,
): BenchRow[] {
  const perGiB = (cpu: number[]): number => median(cpu) / (bytes / GiB);
  const peerCpu = perGiB(r.peer.cpu);
  const worst = (values: number[]): number => Math.max(...values);
  const list = (values: number[], digits = 0): string => values.map((v) => v.toFixed(digits)).join('/');
  const loads = `load average ${r.loads.join(' -> ')}`;
  const floorRows: BenchRow[] =
    r.floor.ms.length === 0
      ? []
      : [
          {
            bench: 'listen-download',
            metric: `${label}: Node's socket floor (not Tally)`,
            ours: mbps(bytes, median(r.floor.ms)),
            peer: r.peer.ms.length > 0 ? mbps(bytes, median(r.peer.ms)) : null,
            peerName,
            unit: 'MB/s',
            higherIsBetter: true,
            target: 'floor',
            note:
              `median of ${r.floor.ms.length}, in the same turns; a net/tls socket read into one reused 4 MiB buffer, ` +
              `positional writeSync, fsync (bench/lib/socket-floor.ts); CPU per GiB ` +
              `${perGiB(r.floor.cpu).toFixed(2)} s`,
          },
        ];
  return [
    ...floorRows,
    {
      bench: 'listen-download',
      metric: `${label}, ${bytes / MiB} MiB`,
      ours: mbps(bytes, median(r.ours.ms)),
      peer: r.peer.ms.length > 0 ? mbps(bytes, median(r.peer.ms)) : null,
      peerName,
      unit: 'MB/s',
      higherIsBetter: true,
      target: speedTarget,
      note:
        `median of ${r.ours.ms.length}; webhook to saved (verified, fsynced); requests ` +
        `${r.ours.connections.join('/')}; the peer plus an fsync of its file (ours is timed to a durable file): ` +
        `${mbps(bytes, median(r.peer.fsynced)).toFixed(0)} MB/s; ${loads}`,
    },
    {
      bench: 'listen-download',
      metric: `${label}: CPU (user + sys) per GiB`,
      ours: perGiB(r.ours.cpu),
      peer: Number.isFinite(peerCpu) ? peerCpu : null,
      peerName: `${peerName} (GNU time)`,
      unit: 's',
      higherIsBetter: false,
      target: cpuTarget,
      note: `median of ${r.ours.cpu.length}; ours ${list(r.ours.cpu, 2)} s, ${peerName} ${list(r.peer.cpu, 2)} s per run`,
    },
    {
      bench: 'listen-download',
      metric: `${label}: peak RSS`,
      ours: worst(r.ours.rss),
      peer: r.peer.rss.every(Number.isFinite) ? worst(r.peer.rss) : null,
      peerName,
      unit: 'MB',
      higherIsBetter: false,
      target: '< 80 MB',
      note:
        `worst of ${r.ours.rss.length} (VmHWM; the peer's maxrss from GNU time); ours ${list(r.ours.rss)} MB, of ` +
        `which ${list(r.ours.ready)} MB at ready (before the webhook)`,
    },
  ];
}

export default async function bench(ctx: BenchContext): Promise<BenchRow[]> {
  const runs = ctx.quick ? 1 : 3;
  const out: BenchRow[] = [];

  const fastBytes = (ctx.quick ? 128 : 1024) * MiB;
  const fastDir = join(ctx.tmpDir, 'fast');
  const fast = await startOrigin({ ...ctx, tmpDir: fastDir }, fastBytes);
  const tlsDir = join(ctx.tmpDir, 'tls');
  await mkdir(tlsDir, { recursive: true });
  const secure = await serveAgain(fast, join(ctx.tmpDir, 'nginx-tls'), { tls: await makeBenchTls(tlsDir) });
  try {
    const floor = await bundleHelper('socket-floor.ts', ctx.tmpDir);
    const plain = await compare(ctx, fast, runs, 'curl', floor);
    out.push(...rows('HTTP, unthrottled', fastBytes, plain, 'curl', '>= 1.0x', 'context'));
    const tls = await compare(ctx, secure, runs, 'curl', floor);
    out.push(...rows('HTTPS, unthrottled', fastBytes, tls, 'curl', '>= 1.0x', "<= curl's (>= 1.0x)"));
  } finally {
    await fast.stop();
    await secure.stop();
    await settle(join(fastDir, 'www', 'recording.mp4'));
  }

  if (!(await hasCommand('aria2c'))) {
    ctx.log('aria2c is not installed (Debian package aria2): the throttled comparison is skipped');
    return out;
  }
  const slowBytes = (ctx.quick ? 96 : 1024) * MiB;
  const slow = await startOrigin({ ...ctx, tmpDir: join(ctx.tmpDir, 'slow') }, slowBytes, '24m');
  try {
    const result = await compare(ctx, slow, runs, 'aria2c');
    out.push(...rows('limit_rate 24m/conn', slowBytes, result, 'aria2c -x4 -s4', '>= 1.0x', 'context'));
  } finally {
    await slow.stop();
  }
  return out;
}
