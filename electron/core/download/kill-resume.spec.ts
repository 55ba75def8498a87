/**
 * Crash tests: a real child process downloads from the test server and is SIGKILLed mid-body; this process
 * then resumes from what the child left on disk. Also measures the child's peak RSS on a large download.
 *
 * How the child runs TypeScript without a loader (Node 24 strips types, but the sources import `./x.js` files that
 * exist only once compiled): before the tests, the engine's
 * sources (fetch-file.ts and everything it imports relatively) are transpiled file by file with TypeScript's
 * `transpileModule` into a fresh folder under node_modules/.cache, and the plain .mjs fixture imports that
 * copy. This needs only the `typescript` dev dependency, takes a fraction of a second, never reads a stale
 * `dist/`, and does not depend on the rest of the project compiling (other files may be mid-edit).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { downloadFile } from './fetch-file.js';
import type { DownloadPolicy } from './fetch-file.js';
import { statePathFor } from './part-state.js';
import { TestServer } from '../../../tests/support/download/file-server.js';

const MiB = 1024 * 1024;
const here = path.dirname(fileURLToPath(import.meta.url));
const electronRoot = path.resolve(here, '../..');
const repoRoot = path.resolve(electronRoot, '..');
const fixture = path.join(repoRoot, 'tests', 'support', 'download', 'download-child.mjs');
const openPolicy: DownloadPolicy = { checkRedirect: (from, location) => ({ ok: true, url: new URL(location, from) }) };

/** Transpiles `entry` and its relative imports into `outDir`, mirroring the folder layout; returns the entry's .js. */
async function transpileGraph(entry: string, outDir: string): Promise<string> {
  const pending = [entry];
  const done = new Set<string>();
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (done.has(file)) continue;
    done.add(file);
    const source = await fsp.readFile(file, 'utf8');
    const { outputText } = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
        sourceMap: false,
      },
    });
    const target = path.join(outDir, path.relative(electronRoot, file)).replace(/\.ts$/, '.js');
    await fsp.mkdir(path.dirname(target), { recursive: true });
    await fsp.writeFile(target, outputText);
    for (const match of source.matchAll(/from\s+['"](\.{1,2}\/[^'"]+)\.js['"]/g)) {
      pending.push(path.resolve(path.dirname(file), `${match[1]}.ts`));
    }
  }
  // Under node_modules, Node stops looking for the project's package.json: declare ESM here.
  await fsp.writeFile(path.join(outDir, 'package.json'), '{"type":"module"}\n');
  return path.join(outDir, path.relative(electronRoot, entry)).replace(/\.ts$/, '.js');
}

interface ChildEvent {
  type: 'progress' | 'done' | 'error';
  bytes?: number;
  maxRssBytes?: number;
  rssBeforeBytes?: number;
  message?: string;
  result?: { bytes: number; md5: string | null; connections: number };
}

function runChild(config: Record<string, unknown>): { child: ChildProcess; events: AsyncIterable<ChildEvent> } {
  const child = spawn(process.execPath, [fixture, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  async function* events(): AsyncGenerator<ChildEvent> {
    for await (const line of lines) yield JSON.parse(line) as ChildEvent;
  }
  return { child, events: events() };
}

/** Reads child events until one satisfies `predicate`. */
async function until(events: AsyncIterable<ChildEvent>, predicate: (e: ChildEvent) => boolean): Promise<ChildEvent> {
  for await (const event of events) {
    if (event.type === 'error') throw new Error(`child failed: ${event.message}`);
    if (predicate(event)) return event;
  }
  throw new Error('child exited before the expected event');
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

let engine: string;
let buildDir: string;
let server: TestServer;
let dir: string;

beforeAll(async () => {
  const cache = path.join(repoRoot, 'node_modules', '.cache', 'tally-download-tests');
  await fsp.mkdir(cache, { recursive: true });
  buildDir = await fsp.mkdtemp(path.join(cache, 'engine-'));
  engine = await transpileGraph(path.join(here, 'fetch-file.ts'), buildDir);
  server = await TestServer.start();
});
afterAll(async () => {
  await server?.close();
  await fsp.rm(buildDir, { recursive: true, force: true });
});
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-kill-'));
});
afterEach(async () => {
  server.setFaults(null);
  server.releasePaused();
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('kill -9 in the middle of a download', () => {
  it('sequential: the resumed request asks for exactly the missing bytes and the file is byte-identical', async () => {
    const file = server.addFile('/kill/seq.mp4', { size: 4 * MiB });
    const dest = path.join(dir, 'seq.mp4');
    const partPath = `${dest}.part`;
    const cut = 1_500_000;
    server.setFaults({ pauseAfterBytes: cut, rateBytesPerSec: 8 * MiB, times: 1 });
    const paused = once(server, 'paused');
    const { child, events } = runChild({
      engine,
      url: server.url('/kill/seq.mp4'),
      dest,
      partPath,
      reportProgress: true,
      progressIntervalMs: 0,
    });
    await paused;
    // The server has sent `cut` bytes; wait until the child says they are written, then kill it hard.
    await until(events, (e) => e.type === 'progress' && (e.bytes ?? 0) >= cut);
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    const [, signal] = await exited;
    expect(signal).toBe('SIGKILL');
    expect((await fsp.stat(partPath)).size).toBe(cut);
    expect(JSON.parse(await fsp.readFile(statePathFor(partPath), 'utf8'))).toMatchObject({
      mode: 'sequential',
      etag: file.etag,
    });

    server.setFaults(null);
    const before = server.fileRequests('/kill/seq.mp4').length;
    const result = await downloadFile({ url: server.url('/kill/seq.mp4'), dest, partPath, policy: openPolicy });
    const resumed = server.fileRequests('/kill/seq.mp4').slice(before);
    expect(resumed.map((r) => r.range)).toEqual([`bytes=${cut}-`]);
    expect(resumed[0]?.ifRange).toBe(file.etag);
    expect(result.resumedFrom).toBe(cut);
    expect(await sha256File(dest)).toBe(file.sha256());
  });

  it('segmented: each segment resumes from its last durable checkpoint', async () => {
    const size = 8 * MiB;
    const file = server.addFile('/kill/seg.mp4', { size });
    const dest = path.join(dir, 'seg.mp4');
    const partPath = `${dest}.part`;
    server.setFaults({ rateBytesPerSec: 4 * MiB });
    const { child, events } = runChild({
      engine,
      url: server.url('/kill/seg.mp4'),
      dest,
      partPath,
      segments: 4,
      segmentThresholdBytes: 1 * MiB,
      // Small pieces and a short ramp window: the 4 MiB/s throttle gets several connections before the kill.
      minSplitBytes: 512 * 1024,
      rampWindowMs: 100,
      checkpointIntervalMs: 20,
      reportProgress: true,
      progressIntervalMs: 0,
    });
    await until(events, (e) => e.type === 'progress' && (e.bytes ?? 0) >= 3 * MiB);
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    const sidecar = JSON.parse(await fsp.readFile(statePathFor(partPath), 'utf8')) as {
      mode: string;
      segments: Array<{ start: number; end: number; pos: number }>;
    };
    expect(sidecar.mode).toBe('segmented');
    expect(sidecar.segments.length).toBeGreaterThan(1);
    const durable = sidecar.segments.reduce((sum, s) => sum + s.pos - s.start, 0);
    expect(durable).toBeGreaterThan(0);

    server.setFaults(null);
    const before = server.fileRequests('/kill/seg.mp4').length;
    const result = await downloadFile({
      url: server.url('/kill/seg.mp4'),
      dest,
      partPath,
      policy: openPolicy,
      segmentThresholdBytes: 1 * MiB,
      minSplitBytes: 64 * MiB,
    });
    const resumed = server.fileRequests('/kill/seg.mp4').slice(before);
    const unfinished = sidecar.segments.filter((s) => s.pos < s.end);
    expect(resumed.map((r) => r.range).sort()).toEqual(unfinished.map((s) => `bytes=${s.pos}-${s.end - 1}`).sort());
    expect(resumed.reduce((sum, r) => sum + r.sent, 0)).toBe(size - durable);
    expect(result.resumedFrom).toBe(durable);
    expect(await sha256File(dest)).toBe(file.sha256());
  });
});

describe('memory', () => {
  it('keeps memory flat: a 256 MiB segmented download adds well under 96 MB to the peak RSS', async () => {
    const size = 256 * MiB;
    server.addFile('/big/one.mp4', { size, etag: null });
    const dest = path.join(dir, 'one.mp4');
    const { events } = runChild({
      engine,
      url: server.url('/big/one.mp4'),
      dest,
      partPath: `${dest}.part`,
      segments: 4,
      segmentThresholdBytes: 32 * MiB,
      // Ranges are added whatever one connection gets: this measures the memory of several at once.
      splitBelowBytesPerSec: Number.MAX_SAFE_INTEGER,
      rampWindowMs: 50,
    });
    const done = await until(events, (e) => e.type === 'done');
    expect(done.result).toMatchObject({ bytes: size });
    expect(done.result?.connections).toBeGreaterThan(1);
    expect((await fsp.stat(dest)).size).toBe(size);
    // Growth over the process as it was just before the download (Node itself and the engine's modules).
    // The bound is the V8 of Node 24 (and Electron 45): its larger young generation lets socket read buffers
    // already written to disk wait longer for a scavenge (about 35 MB of ArrayBuffers at peak on Node 20, 75 MB
    // on 24; with --max-semi-space-size=1 it is 37 MB again). What the engine itself holds stays ~2 MiB (4
    // connections x the sink's 512 KiB), so a leak of the file's size (256 MiB) still fails clearly.
    const growth = (done.maxRssBytes ?? Infinity) - (done.rssBeforeBytes ?? 0);
    expect(growth).toBeLessThan(96 * MiB);
  });
});
