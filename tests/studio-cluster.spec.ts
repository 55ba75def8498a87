/**
 * A studio on a three-node NATS cluster (loopback ports, JetStream, the studio's stream, claims bucket and object
 * store at three replicas), through a studio day of 100 recordings: one node is killed with -9 while recordings
 * are shared, comes back, then another is killed. The receiver and both members know all three servers
 * (`--team a,b,c`). Every member ends with every recording exactly once, byte-identical.
 *
 * The pipeline under the publisher is a stand-in for its `saved` event (tests/studio.spec.ts runs the real one);
 * everything on the team side is real. Every wait is on an event or a server's log line.
 */
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import type { RecordingPipeline } from '../electron/core/pipeline/pipeline.js';
import { StudioFollower } from '../electron/core/studio/follower.js';
import { StudioPublisher } from '../electron/core/studio/publisher.js';
import { CLAIMS_BUCKET, OBJECT_BUCKET, STUDIO_STREAM } from '../electron/core/studio/team.js';
import { startNatsCluster } from './support/nats-server.js';
import { emitSaved } from './support/receive-pipeline.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Resolves once `count()` reaches `n`, checked at every event of `emitter`. */
const reach = (emitter: EventEmitter, event: string, count: () => number, n: number) =>
  new Promise<void>((resolve) => {
    const check = () => {
      if (count() < n) return;
      emitter.off(event, check);
      resolve();
    };
    emitter.on(event, check);
    check();
  });

describe('a studio on a three-node cluster loses no recording when nodes are killed (real nats-servers)', () => {
  it('gives both members all 100 recordings of the day once, byte-identical, across two kill -9s', async () => {
    // Where the day was, should it not finish (a timeout says nothing else): the step and every count.
    let step = 'starting';
    const counts = () => {
      try {
        return JSON.stringify({ published: published.size, members: members.map((m) => [m.name, m.saved.length]) });
      } catch {
        return '(before the day began)';
      }
    };
    onTestFailed(() => console.error(`studio-cluster stopped at "${step}": ${counts()}`));
    const root = await mkdtemp(join(tmpdir(), 'tally-cluster-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const cluster = await startNatsCluster(3);
    cleanups.push(() => cluster.close());
    const servers = cluster.urls.map((u) => new URL(u));

    const pipeline = Object.assign(new EventEmitter(), { inbox: { where: () => [] }, uploadLog: null });
    const publisher = new StudioPublisher(pipeline as unknown as RecordingPipeline, {
      url: servers[0]!,
      servers,
      replicas: 3,
      credentials: null,
      store: { kind: 'nats' },
      stateDir: join(root, 'receiver'),
      retry: { baseDelayMs: 50, maxDelayMs: 500 },
    });
    cleanups.push(() => publisher.stop());
    const published = new Set<string>();
    publisher.on('published', (e) => published.add(e.identity));
    publisher.on('alreadyShared', (e) => published.add(e.identity));
    const connected = new Promise((resolve) => publisher.once('connected', resolve));
    await publisher.start();
    await connected;

    const members = ['edit-bay', 'laptop'].map((name) => {
      const f = new StudioFollower({
        url: servers[1]!,
        servers,
        credentials: null,
        folder: join(root, name),
        name,
        stateDir: join(root, `${name}-home`),
        idleTimeoutMs: 3_000,
        retry: { baseDelayMs: 50, maxDelayMs: 500 },
      });
      const saved: string[] = [];
      f.on('saved', (e) => saved.push(e.identity));
      cleanups.push(() => f.stop());
      return { name, f, saved };
    });
    for (const m of members) await m.f.start();

    const expected = new Map<string, string>();
    await mkdir(join(root, 'saved'));
    const share = async (from: number, to: number) => {
      for (let i = from; i < to; i += 1) {
        const data = randomBytes(20_000 + ((i * 7919) % 60_000));
        const file = join(root, 'saved', `cam-${i}.mp4`);
        await writeFile(file, data);
        expected.set(`cam-${i}.mp4`, sha256(data));
        emitSaved(pipeline, file, { key: `day-${i}`, channelId: `cam-${i}`, bytes: data.length });
      }
    };

    step = 'sharing 0-30';
    await share(0, 30);
    await reach(publisher, 'published', () => published.size, 20);
    step = 'node 1 killed, sharing 30-60';
    await cluster.nodes[0]!.stop(true); // kill -9 with recordings in flight
    await share(30, 60);
    await reach(publisher, 'published', () => published.size, 50);
    step = 'node 1 back';
    await cluster.nodes[0]!.start();
    await cluster.nodes[0]!.logged(
      /JetStream cluster new metadata leader|Self is new JetStream cluster metadata leader/,
    );
    step = 'node 2 killed, sharing 60-100';
    await cluster.nodes[1]!.stop(true); // the second one, after the first returned
    await share(60, 100);
    await reach(publisher, 'published', () => published.size, 100);
    step = 'node 2 back, members catching up';
    await cluster.nodes[1]!.start();
    await Promise.all(members.map((m) => reach(m.f, 'saved', () => m.saved.length, 100)));

    step = 'checking';
    for (const m of members) {
      expect(new Set(m.saved).size, m.name).toBe(100);
      expect(m.saved, m.name).toHaveLength(100);
      const files = (await readdir(join(root, m.name))).sort();
      expect(files, m.name).toEqual([...expected.keys()].sort());
      for (const file of files) {
        expect(sha256(await readFile(join(root, m.name, file))), `${m.name}/${file}`).toBe(expected.get(file));
      }
    }
    // The studio's assets really are kept by all three servers.
    const nc = await connect({ servers: cluster.urls.map((u) => u.replace('nats://', '')) });
    cleanups.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    for (const stream of [STUDIO_STREAM, `KV_${CLAIMS_BUCKET}`, `OBJ_${OBJECT_BUCKET}`]) {
      expect((await jsm.streams.info(stream)).config.num_replicas, stream).toBe(3);
    }
    expect((await jsm.streams.info(STUDIO_STREAM)).state.messages).toBe(100);
  }, 360_000);
});
