/**
 * Peak RSS of the real `tally listen` process (the built CLI, started through bin/tally.js as a user starts it,
 * with the Node flags of its shebang) while it receives one webhook and downloads a 1 GiB recording (quick:
 * 256 MiB) from nginx on loopback: the whole app path (receiver, journal, queue, engine, progress output),
 * not the engine alone as `download-memory` measures. The figure is the kernel's high-water mark (VmHWM in
 * /proc/<pid>/status, read after the save and before the process stops); the saved file's SHA-256 is checked.
 * Peer: curl's peak RSS on the same file (GNU time). Target (issue 10): under 100 MB.
 */
import { spawn } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { cliNodeFlags } from './lib/child.js';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MiB, hasGnuTime, runCurl, settle, startOrigin } from './lib/download.js';
import { sha256File } from './lib/files.js';
import type { Benchmark } from './lib/harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/tally.js');

interface ListenRun {
  peakRssMb: number;
  readyRssMb: number;
  ms: number;
}

const statusKb = async (pid: number, field: string): Promise<number> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
};

async function runListen(url: string, bytes: number, dir: string, flags: string[]): Promise<ListenRun> {
  const folder = join(dir, 'recordings');
  const child = spawn(
    process.execPath,
    [...flags, BIN, 'listen', '--ndjson', '--folder', folder, '--port', '0', '--tunnel', 'none'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        TALLY_HOME: join(dir, 'home'),
        TALLY_DOWNLOAD_ORIGINS: new URL(url).origin,
      },
    },
  );
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout });
  const waitFor = (type: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      lines.on('line', (line) => {
        const event = JSON.parse(line) as Record<string, unknown>;
        if (event.type === type) resolve(event);
        if (event.type === 'failed' || event.type === 'expired') reject(new Error(`tally listen: ${line}`));
      });
      void exited.then((code) => reject(new Error(`tally listen exited (${code}) before ${type}: ${stderr}`)));
    });
  try {
    const ready = await waitFor('ready');
    const pid = child.pid as number;
    const readyRssMb = (await statusKb(pid, 'VmRSS')) / 1024;
    const saved = waitFor('saved');
    const started = performance.now();
    const answer = await fetch(String(ready.localUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'bench-1gib', url, filesize: String(bytes) }),
    });
    if (answer.status !== 200) throw new Error(`webhook answered ${answer.status}`);
    const event = await saved;
    const ms = performance.now() - started;
    const peakRssMb = (await statusKb(pid, 'VmHWM')) / 1024;
    if (event.bytes !== bytes) throw new Error(`saved ${String(event.bytes)} bytes, expected ${bytes}`);
    return { peakRssMb, readyRssMb, ms };
  } finally {
    child.kill('SIGTERM');
    await exited;
    lines.close();
  }
}

const bench: Benchmark = async (ctx) => {
  const bytes = (ctx.quick ? 256 : 1024) * MiB;
  const runs = ctx.quick ? 1 : 2;
  const origin = await startOrigin(ctx, bytes);
  const flags = await cliNodeFlags();
  const ours: ListenRun[] = [];
  const curl: number[] = [];
  try {
    for (let i = 0; i < runs; i += 1) {
      const dir = join(ctx.tmpDir, `listen-${i}`);
      const run = await runListen(origin.url, bytes, dir, flags);
      const [name] = (await readdir(join(dir, 'recordings'))).filter((f) => f.endsWith('.mp4'));
      const saved = join(dir, 'recordings', name ?? '');
      if ((await sha256File(saved)) !== origin.sha256) throw new Error('tally listen saved a different file');
      await settle(saved);
      ours.push(run);
      ctx.log(`tally listen: peak ${run.peakRssMb.toFixed(1)} MB (ready: ${run.readyRssMb.toFixed(1)} MB)`);
      const out = join(ctx.tmpDir, 'curl.mp4');
      curl.push((await runCurl(origin, out)).peakRssMb);
      await settle(out);
    }
  } finally {
    await origin.stop();
  }
  const worst = Math.max(...ours.map((r) => r.peakRssMb));
  const speed = (bytes / MiB / (Math.min(...ours.map((r) => r.ms)) / 1000)).toFixed(0);
  return [
    {
      bench: 'listen-memory',
      metric: `tally listen peak RSS, ${bytes / MiB} MiB recording`,
      ours: worst,
      peer: hasGnuTime() ? Math.max(...curl) : null,
      peerName: 'curl',
      unit: 'MB',
      higherIsBetter: false,
      target: '< 100 MB',
      note:
        `worst of ${runs}; node flags ${flags.join(' ') || '(none)'}; RSS at ready ` +
        `${Math.max(...ours.map((r) => r.readyRssMb)).toFixed(0)} MB; webhook to saved at ${speed} MiB/s`,
    },
  ];
};
export default bench;
