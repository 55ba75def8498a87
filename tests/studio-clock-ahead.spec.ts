/**
 * A second receiver whose clock is 5 minutes fast (issue 30, "Why" 3): its start-up sweep of uploads cut short
 * judged the server's stamp on another receiver's newest chunk against its own clock, found it 5 minutes old,
 * and removed the chunks of an upload still being written. The second receiver here is a real process of the
 * built core under libfaketime (`faketime -f +5m`, monotonic clock left real); the upload is a real Object Store
 * put held open by the test, on a real nats-server.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm, StorageType } from '@nats-io/obj';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OBJECT_BUCKET } from '../electron/core/studio/team.js';
import { ROOT, ensureBuiltCli } from './support/built-cli.js';
import { startNatsServer } from './support/nats-server.js';

const run = promisify(execFile);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => ensureBuiltCli(), 180_000);

/** A receiver's start (its sweep runs before it says it is connected), then its stop: the clock it read, printed. */
const RECEIVER = `
import { EventEmitter } from 'node:events';
const { StudioPublisher } = await import(process.env.PUBLISHER);
const pipeline = Object.assign(new EventEmitter(), { inbox: { where: () => [] }, uploadLog: null });
const lines = [];
const log = { info: (l) => lines.push(l), warn: (l) => lines.push(l), error: (l) => lines.push(l) };
const publisher = new StudioPublisher(pipeline, {
  url: new URL(process.env.TEAM), credentials: null, store: { kind: 'nats' }, stateDir: process.env.STATE, log,
});
publisher.once('connected', async () => {
  await publisher.stop();
  console.log(JSON.stringify({ wall: Date.now(), lines }));
});
await publisher.start();
`;

describe('a receiver whose clock is 5 minutes fast (libfaketime, real nats-server)', () => {
  it('starts during another receiver’s upload and removes no chunk of it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tally-clock-ahead-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const server = await startNatsServer();
    cleanups.push(() => server.close());
    const nc = await connect({ servers: server.url.replace('nats://', '') });
    cleanups.push(() => nc.close());

    // Another receiver's upload, held open: three chunks sent, the rest still to come.
    const os = await new Objm(nc).create(OBJECT_BUCKET, { storage: StorageType.File });
    const chunk = 64 * 1024;
    let feed!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) });
    const putting = os.put({ name: 'rec-in-progress', options: { max_chunk_size: chunk } }, body);
    putting.catch(() => undefined);
    for (let i = 0; i < 3; i++) feed.enqueue(new Uint8Array(chunk).fill(i + 1));
    const jsm = await jetstreamManager(nc);
    const chunksHeld = async () => {
      const info = await jsm.streams.info(`OBJ_${OBJECT_BUCKET}`, { subjects_filter: `$O.${OBJECT_BUCKET}.C.>` });
      return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
    };
    // The client sends a chunk once the next bytes come: two of the three are on the server when it says so.
    while ((await chunksHeld()) < 2) await nc.flush();
    const held = await chunksHeld();

    const { stdout } = await run('faketime', ['-f', '+5m', process.execPath, '--input-type=module', '-e', RECEIVER], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
        PUBLISHER: join(ROOT, 'dist/electron/core/studio/publisher.js'),
        TEAM: server.url,
        STATE: join(root, 'fast-receiver'),
      },
    });
    const fast = JSON.parse(stdout.trim().split('\n').at(-1)!) as { wall: number; lines: string[] };
    // It did run 5 minutes ahead (libfaketime reached it), and its sweep ran.
    expect(fast.wall - Date.now()).toBeGreaterThan(4 * 60_000);
    expect(fast.lines.join('\n')).not.toMatch(/removed \d+ chunks/);
    expect(await chunksHeld()).toBe(held);

    // The upload finishes whole.
    feed.enqueue(new Uint8Array(1000).fill(9));
    feed.close();
    const info = await putting;
    expect(info.size).toBe(3 * chunk + 1000);
    expect(await chunksHeld()).toBe(4);
  }, 60_000);
});
