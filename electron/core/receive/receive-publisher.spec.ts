/**
 * The studio publisher belongs to the one receive service (issue 19): the face says which publisher it wants,
 * the service runs one beside every pipeline it opens (a rebuilt pipeline gets a new one, listening to it), and
 * judges the health's studio link from its events, the same way for `tally listen` and the app's faces. Against
 * a real nats-server, killed with -9 and started again.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { startNatsCluster, startNatsServer } from '../../../tests/support/nats-server.js';
import { emitSaved, openPaused } from '../../../tests/support/receive-pipeline.js';
import type { HealthView } from '../health-view.js';
import type { StudioPublisher } from '../studio/publisher.js';
import { STUDIO_STREAM } from '../studio/team.js';
import { ReceiveService, type PublisherSetup } from './receive-service.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

/**
 * Resolves with the first health view (now or announced later) that `ok` accepts. The view now is judged by
 * `refresh`, which announces it when it changed: read with `health()` instead, a state never announced (a studio
 * still connecting, between a close and a reopen) would leave the last announced one in place, and a return to
 * it (connected again) would not be announced either: the wait would never end.
 */
function healthWhen(service: ReceiveService, ok: (view: HealthView) => boolean): Promise<HealthView> {
  return new Promise((resolve, reject) => {
    const check = (view: HealthView) => {
      if (!ok(view)) return;
      service.off('health', check);
      resolve(view);
    };
    service.on('health', check);
    service.refresh().then(check, reject);
  });
}

const studioOf = (view: HealthView) => view.components.find((c) => c.id === 'studio');

describe.each(['listen', 'serve'] as const)('the receive service runs the studio publisher (%s)', (face) => {
  it('beside every pipeline it opens, and its link is the health: lost and back, then withdrawn', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-receive-studio-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const service = new ReceiveService({ face, home: join(dir, 'home'), log: () => undefined });
    cleanups.push(() => service.stop());
    await service.start();
    const handed: (StudioPublisher | null)[] = [];
    service.on('publisher', (p) => handed.push(p));

    const setup: PublisherSetup = {
      key: 'team',
      options: {
        url: new URL(nats.url),
        credentials: null,
        store: { kind: 'nats' },
        stateDir: join(dir, 'state'),
        retry: { baseDelayMs: 50, maxDelayMs: 200 },
      },
    };
    await service.publish(setup);
    expect(service.publisher, 'no pipeline yet, so no publisher').toBeNull();
    expect(studioOf(service.health())).toBeUndefined();

    await openPaused(service, dir);
    const first = service.publisher;
    expect(first).not.toBeNull();
    expect(handed).toEqual([first]);
    await healthWhen(service, (v) => studioOf(v)?.state === 'ok');

    // A settings change rebuilds the pipeline: the old publisher stops first, a new one listens to the new pipeline.
    await service.close();
    expect(service.publisher).toBeNull();
    expect(studioOf(service.health())).toBeUndefined();
    const { pipeline } = await openPaused(service, dir);
    const second = service.publisher as StudioPublisher;
    expect(handed).toEqual([first, null, second]);
    expect(second).not.toBe(first);
    await healthWhen(service, (v) => studioOf(v)?.state === 'ok');
    const published = new Promise((resolve) => second.once('published', resolve));
    const file = join(dir, 'cam-1.mp4');
    await writeFile(file, Buffer.alloc(40_000, 7));
    emitSaved(pipeline, file, { key: 'day-1', channelId: 'cam-1', bytes: 40_000 });
    await published;
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    const messages = (await (await jetstreamManager(nc)).streams.info(STUDIO_STREAM)).state.messages;
    await nc.close();
    expect(messages).toBe(1);

    // The team server dies: never green meanwhile, and green again once it is back.
    await nats.stop(true);
    const lost = await healthWhen(service, (v) => studioOf(v)?.state === 'warning');
    expect(studioOf(lost)?.reason).toMatch(/connection to the team server was lost/);
    await nats.start();
    await healthWhen(service, (v) => studioOf(v)?.state === 'ok');

    // Studio mode off: the publisher stops, the pipeline goes on, the studio leaves the health.
    await service.publish(null);
    expect(service.publisher).toBeNull();
    expect(handed.at(-1)).toBeNull();
    expect(service.pipeline).toBe(pipeline);
    expect(studioOf(service.health())).toBeUndefined();
  }, 120_000);
});

describe('publisher changes one at a time (real nats-server)', () => {
  it('overlapping publish() calls start one publisher; of two different setups the later runs, the earlier never', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-receive-overlap-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const service = new ReceiveService({ face: 'listen', home: join(dir, 'home'), log: () => undefined });
    cleanups.push(() => service.stop());
    await service.start();
    await openPaused(service, dir);
    const handed: (StudioPublisher | null)[] = [];
    service.on('publisher', (p) => handed.push(p));
    const setup = (key: string): PublisherSetup => ({
      key,
      options: {
        url: new URL(nats.url),
        credentials: null,
        store: { kind: 'nats' },
        stateDir: join(dir, `state-${key}`),
        retry: { baseDelayMs: 50, maxDelayMs: 200 },
      },
    });

    // Starting one awaits its modules: both calls once found none running and each started one (the first lost,
    // still connected and publishing beside the second).
    await Promise.all([service.publish(setup('a')), service.publish(setup('a'))]);
    expect(handed).toHaveLength(1);
    expect(service.publisher).toBe(handed[0]);

    await Promise.all([service.publish(setup('b')), service.publish(setup('c'))]);
    expect(handed).toEqual([handed[0], null, service.publisher]);
    await healthWhen(service, (v) => studioOf(v)?.state === 'ok');
  }, 60_000);
});

describe('a studio whose cluster lost its majority (real nats-servers)', () => {
  it('is never green while a saved recording cannot reach the team store, and ok once it is shared', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-receive-quorum-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const cluster = await startNatsCluster(3);
    cleanups.push(() => cluster.close());
    // It timed out once in a whole CI run (at 180 s; 10-22 s alone): a failure says where it stopped, what the
    // service logged and what the restarted nodes said.
    let step = 'starting';
    const logged: string[] = [];
    onTestFailed(() => {
      console.error(`receive-publisher quorum case stopped at "${step}"; the service logged:\n${logged.join('\n')}`);
      for (const i of [1, 2]) console.error(`node ${i}, last lines:\n${cluster.nodes[i]!.log().slice(-3000)}`);
    });
    const servers = cluster.urls.map((u) => new URL(u));
    const service = new ReceiveService({
      face: 'listen',
      home: join(dir, 'home'),
      log: (line) => logged.push(`${new Date().toISOString()} ${line}`),
      recheckMs: 200,
      shareStuckMs: 1_000,
    });
    cleanups.push(() => service.stop());
    await service.start();
    await service.publish({
      key: 'cluster',
      options: {
        url: servers[0]!,
        servers,
        replicas: 3,
        credentials: null,
        store: { kind: 'nats' },
        stateDir: join(dir, 'state'),
      },
    });
    const { pipeline } = await openPaused(service, dir);
    step = 'first ok';
    await healthWhen(service, (v) => studioOf(v)?.state === 'ok');
    const publisher = service.publisher as StudioPublisher;
    publisher.on('failed', (f) => logged.push(`${new Date().toISOString()} failed: ${f.message}`));

    // Two of three nodes gone: the connection holds (to the third), yet nothing can be stored.
    step = 'stopping two nodes';
    await cluster.nodes[1]!.stop(true);
    await cluster.nodes[2]!.stop(true);
    const file = join(dir, 'cam-9.mp4');
    await writeFile(file, Buffer.alloc(30_000, 9));
    const failed = new Promise((resolve) => publisher.once('failed', resolve));
    emitSaved(pipeline, file, { key: 'day-9', channelId: 'cam-9', bytes: 30_000 });
    step = 'first failure';
    await failed;
    step = 'warning';
    // The cluster's silence is said as soon as it is asked (team-link.ts), the waiting recording once it waited.
    const waitedOn = /1 saved recording has waited over 1 s to be shared with the team/;
    const stuck = await healthWhen(
      service,
      (v) => studioOf(v)?.state === 'warning' && waitedOn.test(studioOf(v)?.reason ?? ''),
    );
    expect(studioOf(stuck)?.reason).toMatch(waitedOn);

    // Shared either way: published, or found already published when the answer to the claim's last update was
    // lost in the cluster's first moments back (the update landed; the next attempt reads it). Waiting for
    // 'published' alone waited forever then.
    const shared = new Promise((resolve) => {
      publisher.once('published', resolve);
      publisher.once('alreadyShared', resolve);
    });
    step = 'restarting two nodes';
    await cluster.nodes[1]!.start();
    await cluster.nodes[2]!.start();
    step = 'shared';
    await shared;
    step = 'ok again';
    await healthWhen(service, (v) => studioOf(v)?.state === 'ok');
  }, 180_000);
});
