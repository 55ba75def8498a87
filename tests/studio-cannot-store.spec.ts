/**
 * A team server that answers every question and stores nothing for a while (issue 30, item 6): what a cluster is
 * between a lost majority's return and its streams' new leaders, and what a server whose JetStream storage is
 * full is, which is how this real nats-server is made to do it (`max_file_store`, filled by a stream of the
 * test's own, then purged). The account's JetStream info and the studio stream's info answer throughout, so the
 * receiver's link says "answering" all along and never says it again: recordings that failed then used to wait
 * out pauses of their own, grown with each failure (16 s and more after six), after the server stored again. A
 * recording that failed for want of the cluster now waits on the cluster, tried once a second.
 *
 * The receiver's pipeline is a stand-in for its `saved` event; everything on the team side is real. Durations
 * are on the monotonic clock; waits are on events.
 */
import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordingPipeline } from '../electron/core/pipeline/pipeline.js';
import { StudioPublisher } from '../electron/core/studio/publisher.js';
import { startNatsServer } from './support/nats-server.js';
import { emitSaved } from './support/receive-pipeline.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a team server that answers and cannot store for a while (real nats-server, its storage full)', () => {
  it('publishes a recording that failed six times within 4 s of the server storing again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tally-cannot-store-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const nats = await startNatsServer({ config: 'jetstream { max_file_store: 4MB }\n' });
    cleanups.push(() => nats.close());
    const pipeline = Object.assign(new EventEmitter(), { inbox: { where: () => [] }, uploadLog: null });
    const publisher = new StudioPublisher(pipeline as unknown as RecordingPipeline, {
      url: new URL(nats.url),
      credentials: null,
      store: { kind: 'nats' },
      stateDir: join(root, 'receiver'),
    });
    cleanups.push(() => publisher.stop());
    // Connected, and its link's first check said the server answers (after that it only says a change).
    const answering = new Promise((resolve) => publisher.once('answering', resolve));
    await publisher.start();
    expect(await answering).toMatchObject({ answering: true });

    // The server's storage filled by a stream of the test's own: every write now answers "insufficient resources".
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'FILLER', subjects: ['filler'] });
    const js = jetstream(nc);
    for (;;) {
      const full = await js.publish('filler', new Uint8Array(256 * 1024)).then(
        () => false,
        (error: unknown) => /insufficient resources/i.test(String(error)),
      );
      if (full) break;
    }

    const messages: string[] = [];
    publisher.on('failed', (f) => messages.push(f.message));
    const said: boolean[] = [];
    publisher.on('answering', (a) => said.push(a.answering));
    const published = new Promise<number>((resolve) => publisher.once('published', () => resolve(performance.now())));
    await mkdir(join(root, 'saved'));
    const file = join(root, 'saved', 'cam-1.mp4');
    await writeFile(file, Buffer.alloc(20_000, 7));
    emitSaved(pipeline, file, { key: 'day-1', channelId: 'cam-1', bytes: 20_000 });
    // Six failures: before issue 30 the next attempt then came 8-24 s later, however soon the server stored again.
    await new Promise<void>((resolve) => {
      const check = () => messages.length >= 6 && (publisher.off('failed', check), resolve());
      publisher.on('failed', check);
    });
    expect(messages.every((m) => /insufficient resources/i.test(m))).toBe(true);

    await jsm.streams.purge('FILLER');
    const storesAt = performance.now();
    expect((await published) - storesAt).toBeLessThan(4_000);
    // The link said nothing more: nothing but the recording's own attempts could find the server storing again.
    expect(said).toEqual([]);
  }, 60_000);
});
