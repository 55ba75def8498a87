/**
 * A receiver's publish retry through a step of its wall clock a day back (issue 30, "Why" 4 and "Must show" 1):
 * the retry time was `Date.now() + delay`, so a day back froze the recording's retry for a day. The receiver is
 * a real process of the built core under libfaketime (its wall clock read from a file on every call, so the test
 * steps it mid-run; its monotonic clock left real); the team server is a real nats-server. The recording's first
 * attempt fails because another receiver holds a live claim on it (written by the test); the clock steps back a
 * day while the retry waits, the claim goes, and the retry must come on time.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serverIdentity } from '../electron/core/studio/announcement.js';
import { CLAIMS_BUCKET } from '../electron/core/studio/team.js';
import { ROOT, ensureBuiltCli } from './support/built-cli.js';
import { startNatsServer } from './support/nats-server.js';

/** libfaketime's multi-threaded preload (Node runs threads), wherever the distribution put it. */
function libfaketime(): string | null {
  const dirs = ['/usr/lib/faketime', ...readdirSync('/usr/lib').map((d) => join('/usr/lib', d, 'faketime'))];
  return dirs.map((d) => join(d, 'libfaketimeMT.so.1')).find((p) => existsSync(p)) ?? null;
}
const LIBFAKETIME = libfaketime();
const DAY = 24 * 60 * 60_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => ensureBuiltCli(), 180_000);

/**
 * A receiver's studio publisher: on a line `save` on stdin, the recording FILE is saved (the pipeline's event);
 * one JSON line per `connected`, `failed` and `published`, each with the wall clock as this process reads it.
 */
const RECEIVER = `
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
const { StudioPublisher } = await import(process.env.PUBLISHER);
const pipeline = Object.assign(new EventEmitter(), { inbox: { where: () => [] }, uploadLog: null });
const log = { info: () => {}, warn: () => {}, error: () => {} };
const publisher = new StudioPublisher(pipeline, {
  url: new URL(process.env.TEAM), credentials: null, store: { kind: 'nats' }, stateDir: process.env.STATE, log,
});
const say = (type, e) => console.log(JSON.stringify({ type, wall: Date.now(), ...e }));
for (const type of ['connected', 'failed', 'published']) publisher.on(type, (e) => say(type, e));
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'save') return;
  pipeline.emit('saved', {
    job: { key: 'step-back', channelId: 'cam-1', updatedAt: new Date().toISOString() },
    path: process.env.FILE,
    bytes: Number(process.env.BYTES),
  });
});
process.once('SIGTERM', () => void publisher.stop().then(() => process.exit(0)));
await publisher.start();
`;

interface Said {
  type: string;
  wall: number;
  identity?: string;
  message?: string;
}

describe.skipIf(!LIBFAKETIME)('a receiver whose clock steps a day back during a publish retry (libfaketime)', () => {
  it('retries on time and publishes the recording', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tally-clock-back-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const server = await startNatsServer();
    cleanups.push(() => server.close());
    const clockFile = join(root, 'faketime');
    await writeFile(clockFile, '+0\n');
    const file = join(root, 'cam-1.mp4');
    const bytes = 20_000;
    await writeFile(file, Buffer.alloc(bytes, 7));

    const child = spawn(process.execPath, ['--input-type=module', '-e', RECEIVER], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LD_PRELOAD: LIBFAKETIME!,
        FAKETIME_TIMESTAMP_FILE: clockFile,
        FAKETIME_NO_CACHE: '1',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
        NODE_NO_WARNINGS: '1',
        PUBLISHER: join(ROOT, 'dist/electron/core/studio/publisher.js'),
        TEAM: server.url,
        STATE: join(root, 'receiver'),
        FILE: file,
        BYTES: String(bytes),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const said: Said[] = [];
    const lines = createInterface({ input: child.stdout });
    const next = (type: string) =>
      new Promise<Said>((resolve, reject) => {
        const seen = said.find((e) => e.type === type);
        if (seen) return resolve(seen);
        const onLine = () => {
          const e = said.find((x) => x.type === type);
          if (!e) return;
          lines.off('line', onLine);
          resolve(e);
        };
        lines.on('line', onLine);
        void exited.then(() => reject(new Error(`the receiver exited before "${type}": ${stderr}`)));
      });
    lines.on('line', (line) => said.push(JSON.parse(line) as Said));

    await next('connected');
    // Another receiver holds a live claim on the recording: the first attempt fails, a retry is set.
    const nc = await connect({ servers: server.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const claims = await new Kvm(nc).open(CLAIMS_BUCKET);
    const identity = serverIdentity('step-back');
    await claims.put(
      identity,
      JSON.stringify({ state: 'claimed', by: 'another-receiver', at: new Date().toISOString() }),
    );
    child.stdin.write('save\n');
    const failed = await next('failed');
    expect(failed.message).toMatch(/another receiver/);

    // A day back while the retry waits (its first pause is about half a second); then the claim goes.
    await writeFile(clockFile, '-1d\n');
    const steppedAt = performance.now();
    await claims.delete(identity);
    const published = await next('published');
    expect(published.identity).toBe(identity);
    // The retry came on time (a retry frozen for the day would never get here)...
    expect(performance.now() - steppedAt).toBeLessThan(10_000);
    // ...in a process whose wall clock did go back a day (libfaketime reached it).
    expect(Date.now() - published.wall).toBeGreaterThan(DAY - 60_000);
  }, 60_000);
});
