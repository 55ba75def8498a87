/**
 * A studio receiver whose team-server node is killed -9 right after the last write of a recording's put (the
 * object's name) reached the cluster, before its answer came back: the put times out and the NATS client
 * purges the chunks it sent, so the name stays over no bytes. The recording must still reach the members
 * whole (a repeat that trusted the name alone announced an object nobody could read: the members waited on
 * it forever, tests/studio-cluster.spec.ts stopped at 99 of 100). Real three-node cluster; a TCP proxy in
 * front of the receiver's node loses the server's answers from that write on.
 */
import { lineLogger } from '../electron/core/logger.js';
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import type { RecordingPipeline } from '../electron/core/pipeline/pipeline.js';
import { StudioFollower } from '../electron/core/studio/follower.js';
import { StudioPublisher } from '../electron/core/studio/publisher.js';
import { OBJECT_BUCKET } from '../electron/core/studio/team.js';
import { startNatsCluster, type NatsServer } from './support/nats-server.js';
import { emitSaved } from './support/receive-pipeline.js';
import { startTcpHoldProxy } from './support/tcp-hold-proxy.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const OBJECT_STREAM = `OBJ_${OBJECT_BUCKET}`;

describe('a put whose answer is lost with the node the receiver was connected to (real nats-servers)', () => {
  it('is put again whole, never announced as a name over purged chunks, and the member saves it', async () => {
    let step = 'starting';
    const said: string[] = [];
    onTestFailed(() => console.error(`studio-lost-answer stopped at "${step}":\n${said.join('\n')}`));
    const root = await mkdtemp(join(tmpdir(), 'tally-lost-answer-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const cluster = await startNatsCluster(3);
    cleanups.push(() => cluster.close());
    const [a, b, c] = cluster.nodes as [NatsServer, NatsServer, NatsServer];
    const proxy = await startTcpHoldProxy(a.port);
    cleanups.push(() => proxy.close());

    // The receiver knows only node 1 (through the proxy); it learns the others from the cluster.
    const pipeline = Object.assign(new EventEmitter(), { inbox: { where: () => [] }, uploadLog: null });
    const publisher = new StudioPublisher(pipeline as unknown as RecordingPipeline, {
      url: new URL(proxy.url),
      servers: [new URL(proxy.url)],
      replicas: 3,
      credentials: null,
      store: { kind: 'nats' },
      stateDir: join(root, 'receiver'),
      retry: { baseDelayMs: 50, maxDelayMs: 500 },
      log: lineLogger((line) => said.push(`receiver: ${line}`)),
    });
    cleanups.push(() => publisher.stop());
    const connected = new Promise((resolve) => publisher.once('connected', resolve));
    await publisher.start();
    await connected;

    // The object store's leader on another node, so the write is stored there while node 1 dies.
    step = 'moving the object store off node 1';
    const nc = await connect({ servers: [b.url, c.url].map((u) => u.replace('nats://', '')) });
    cleanups.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    if ((await jsm.streams.info(OBJECT_STREAM)).cluster?.leader === 'studio-1') {
      const elected = Promise.race(
        [b, c].map((n) => n.logged(new RegExp(`new stream leader for '\\$G > ${OBJECT_STREAM}'`))),
      );
      await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${OBJECT_STREAM}`);
      await elected;
    }
    expect((await jsm.streams.info(OBJECT_STREAM)).cluster?.leader).toMatch(/^studio-[23]$/);

    const member = new StudioFollower({
      url: new URL(b.url),
      servers: [b, c].map((n) => new URL(n.url)),
      credentials: null,
      folder: join(root, 'edit-bay'),
      name: 'edit-bay',
      stateDir: join(root, 'edit-bay-home'),
      idleTimeoutMs: 3_000,
      retry: { baseDelayMs: 50, maxDelayMs: 500 },
      log: lineLogger((line) => said.push(`member: ${line}`)),
    });
    cleanups.push(() => member.stop());
    const memberSaved = new Promise<{ path: string }>((resolve) => member.once('saved', resolve));
    await member.start();

    // Watched from nodes 2 and 3: the object's name is stored (the put's last write) while its answer is lost.
    const os = await new Objm(nc).open(OBJECT_BUCKET);
    const watch = await os.watch({ includeHistory: false });
    const named = (async () => {
      for await (const e of watch) if (e.name === 'rec-day-1') return;
    })();
    const answersLost = proxy.loseAnswersAfter(new RegExp(`HPUB \\$O\\.${OBJECT_BUCKET}\\.M\\.`));
    const failed = new Promise((resolve) => publisher.once('failed', resolve));
    // Shared either way (found already published when a later answer is lost too, in the cluster's first moments).
    const shared = new Promise((resolve) => {
      publisher.once('published', resolve);
      publisher.once('alreadyShared', resolve);
    });

    step = 'putting the recording';
    const data = randomBytes(700_000); // two chunks
    const file = join(root, 'cam-1.mp4');
    await writeFile(file, data);
    emitSaved(pipeline, file, { key: 'day-1', channelId: 'cam-1', bytes: data.length });
    await answersLost;
    await named;
    watch.stop();
    step = 'node 1 killed with the answer on its way';
    await a.stop(true);
    step = 'the put timing out';
    await failed;
    step = 'put again';
    await shared;

    // What the members are told of is all there.
    const info = await os.info('rec-day-1');
    const chunks = `$O.${OBJECT_BUCKET}.C.${info!.nuid}`;
    const stored = (await jsm.streams.info(OBJECT_STREAM, { subjects_filter: chunks })).state.subjects?.[chunks] ?? 0;
    expect(stored, 'chunks of the announced object').toBe(info!.chunks);
    step = 'the member saving it';
    const saved = await memberSaved;
    expect(sha256(await readFile(saved.path))).toBe(sha256(data));
  }, 120_000);
});
