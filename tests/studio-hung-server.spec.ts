/**
 * A studio on a real three-node nats-server cluster whose servers hang rather than die (issue 30, items 5 and
 * 6). A node SIGSTOPped keeps its sockets open and answers nothing: the clients on it must notice (pings), say
 * which server stopped answering, move to another, and go on publishing and mirroring. A lost majority keeps
 * the connection open while nothing can be stored: no face may look green then, and once the cluster answers
 * again every waiting recording goes within seconds, with no pause carried over from the outage.
 *
 * The receiver's pipeline is a stand-in for its `saved` event (tests/studio.spec.ts runs the real one);
 * everything on the team side is real. Durations are measured on the monotonic clock; waits are on events.
 */
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import type { RecordingPipeline } from '../electron/core/pipeline/pipeline.js';
import { StudioFollower } from '../electron/core/studio/follower.js';
import { StudioPublisher } from '../electron/core/studio/publisher.js';
import type { TeamAnswer } from '../electron/core/studio/team-link.js';
import { serverIdentity } from '../electron/core/studio/announcement.js';
import { CLAIMS_BUCKET, OBJECT_BUCKET, STUDIO_STREAM } from '../electron/core/studio/team.js';
import { startNatsCluster, type NatsCluster } from './support/nats-server.js';
import { emitSaved } from './support/receive-pipeline.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Resolves once `done()` is true, checked at every `event` of `emitter`. */
const when = (emitter: EventEmitter, event: string, done: () => boolean) =>
  new Promise<void>((resolve) => {
    const check = () => {
      if (!done()) return;
      emitter.off(event, check);
      resolve();
    };
    emitter.on(event, check);
    check();
  });

/**
 * A receiver and a member, both pointed at node 1 alone (`servers: [node 1]`): every client starts on it, and
 * knows the other two only as the cluster announces them, which is where it must move when node 1 hangs.
 */
async function studio(cluster: NatsCluster, root: string) {
  const first = new URL(cluster.urls[0]!);
  const pipeline = Object.assign(new EventEmitter(), { inbox: { where: () => [] }, uploadLog: null });
  const publisher = new StudioPublisher(pipeline as unknown as RecordingPipeline, {
    url: first,
    servers: [first],
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
  const receiverSaid: TeamAnswer[] = [];
  publisher.on('answering', (a) => receiverSaid.push(a));
  const connected = new Promise<{ url: string }>((resolve) => publisher.once('connected', resolve));
  await publisher.start();
  const receiverUrl = (await connected).url;

  const member = new StudioFollower({
    url: first,
    servers: [first],
    credentials: null,
    folder: join(root, 'member'),
    name: 'edit-bay',
    stateDir: join(root, 'member-home'),
    idleTimeoutMs: 3_000,
    retry: { baseDelayMs: 50, maxDelayMs: 500 },
  });
  cleanups.push(() => member.stop());
  const mirrored = new Set<string>();
  member.on('saved', (e) => mirrored.add(e.identity));
  const memberSaid: TeamAnswer[] = [];
  member.on('answering', (a) => memberSaid.push(a));
  const ready = new Promise<{ url: string }>((resolve) => member.once('ready', resolve));
  await member.start();
  const memberUrl = (await ready).url;

  // What each side said when (ms on the monotonic clock), printed should a case fail.
  const began = performance.now();
  const trail: string[] = [];
  const at = (what: string) => trail.push(`${Math.round(performance.now() - began)} ms ${what}`);
  for (const e of ['connection', 'answering', 'failed', 'published'] as const) {
    publisher.on(e, (x: unknown) => at(`receiver ${e} ${JSON.stringify(x)}`));
  }
  for (const e of ['connection', 'answering', 'started', 'saved', 'failed'] as const) {
    member.on(e, (x: unknown) => at(`member ${e} ${JSON.stringify(x)}`));
  }
  onTestFailed(() => console.error(trail.join('\n')));

  const expected = new Map<string, string>();
  await mkdir(join(root, 'saved'));
  let n = 0;
  /** One recording saved at the receiver; resolves with its identity once the member has it. */
  const share = async () => {
    n += 1;
    const data = randomBytes(30_000 + n * 101);
    const file = join(root, 'saved', `cam-${n}.mp4`);
    await writeFile(file, data);
    expected.set(`cam-${n}.mp4`, sha256(data));
    const identity = serverIdentity(`day-${n}`);
    at(`shared ${identity}`);
    emitSaved(pipeline, file, { key: `day-${n}`, channelId: `cam-${n}`, bytes: data.length });
    return identity;
  };
  const checkFiles = async () => {
    for (const [file, hash] of expected) expect(sha256(await readFile(join(root, 'member', file))), file).toBe(hash);
  };
  return {
    publisher,
    member,
    published,
    mirrored,
    receiverSaid,
    memberSaid,
    urls: { receiver: receiverUrl, member: memberUrl },
    share,
    checkFiles,
    at,
  };
}

/**
 * The moment (monotonic) the cluster first takes again the writes a publisher makes, asked from a connection of
 * its own: a claim put into the claims bucket, an object put into the team's object store (its name looked up,
 * its chunk and its name written), and the studio stream answering with a leader named. Each of these replicated
 * streams elects its own leader once the majority is back, so a stream that answers is not yet a cluster that
 * stores. A refused attempt is made again at the next leader elected, or after PROBE_PACE_MS when none comes (a
 * refusal takes a millisecond: without a pace this loop alone would keep a loaded machine's cores busy).
 */
async function writableAgain(nc: NatsConnection): Promise<number> {
  const PROBE_PACE_MS = 200;
  let elected: () => void = () => undefined;
  const sub = nc.subscribe('$JS.EVENT.ADVISORY.*.LEADER_ELECTED.>', { callback: () => elected() });
  try {
    for (;;) {
      const wrote = await (async () => {
        const js = jetstream(nc, { timeout: 2_000 });
        const claims = await new Kvm(js).open(CLAIMS_BUCKET);
        await claims.put('writable-probe', 'probe');
        const objects = await new Objm(js).open(OBJECT_BUCKET);
        await objects.putBlob({ name: 'writable-probe' }, randomBytes(64));
        const jsm = await jetstreamManager(nc, { timeout: 2_000 });
        return Boolean((await jsm.streams.info(STUDIO_STREAM)).cluster?.leader);
      })().catch(() => false);
      if (wrote) return performance.now();
      await new Promise<void>((resolve) => {
        const paced = setTimeout(resolve, PROBE_PACE_MS);
        elected = () => {
          clearTimeout(paced);
          resolve();
        };
      });
    }
  } finally {
    sub.unsubscribe();
  }
}

describe('a studio whose team servers hang (real three-node nats-server cluster)', () => {
  it('keeps publishing and mirroring through a node SIGSTOPped for 60 s, and names it', async () => {
    let step = 'starting';
    onTestFailed(() => console.error(`studio-hung-server stopped at "${step}"`));
    const root = await mkdtemp(join(tmpdir(), 'tally-hung-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    // The servers leave a hung peer as the clients do (pings every 2 s, two unanswered): with nats-server's
    // default of 2 minutes, the other two kept routing requests to the hung node for minutes (docs/studio.md).
    const cluster = await startNatsCluster(3, { config: 'ping_interval: "2s"\nping_max: 2\n' });
    cleanups.push(() => cluster.close());
    const hung = cluster.nodes[0]!;
    onTestFailed(() => {
      for (const i of [1, 2]) {
        const said = cluster.nodes[i]!.log()
          .split('\n')
          .filter((l) => /leader|Route|Stale|stale|Slow/.test(l));
        console.error(`node ${i + 1}:\n${said.slice(-25).join('\n')}`);
      }
    });
    const s = await studio(cluster, root);
    // Every client is on node 1.
    expect(s.urls.receiver).toBe(hung.url);
    expect(s.urls.member).toBe(hung.url);
    step = 'first recording';
    const first = await s.share();
    await when(s.member, 'saved', () => s.mirrored.has(first));

    // Where the streams' and the member's consumer's leaders sit, for the trail (the hung node may hold any).
    const look = await connect({ servers: cluster.urls.map((u) => u.replace('nats://', '')) });
    const jsm = await jetstreamManager(look);
    for await (const si of jsm.streams.list()) s.at(`stream ${si.config.name} leader ${si.cluster?.leader}`);
    for await (const ci of jsm.consumers.list(STUDIO_STREAM)) s.at(`consumer ${ci.name} leader ${ci.cluster?.leader}`);
    await look.close();
    step = 'hang';
    hung.pause();
    s.at('node 1 hung');
    cleanups.push(async () => hung.resume());
    const hangAt = performance.now();
    const during = await s.share();
    const publishedIn = when(s.publisher, 'published', () => s.published.has(during)).then(
      () => performance.now() - hangAt,
    );
    await when(s.member, 'saved', () => s.mirrored.has(during));
    const firstThrough = performance.now() - hangAt;
    // Both sides said which server stopped answering, before or while they moved on.
    const port = `:${hung.port}`;
    const named = (said: TeamAnswer[]) => said.some((a) => !a.answering && (a.message ?? '').includes(port));
    expect(named(s.receiverSaid), JSON.stringify(s.receiverSaid)).toBe(true);
    expect(named(s.memberSaid), JSON.stringify(s.memberSaid)).toBe(true);
    // Published and mirrored within 20 s of the hang's start (both measured 10-17 s beside three busy loops: the
    // member saves it within a second of its announcement). Before issue 30 nothing was mirrored for the whole
    // hang; before the member read chunks without a consumer, one read in three waited 5 s on a consumer the
    // cluster had placed on the hung node, and the first mirror took up to 27 s (docs/studio.md).
    expect(await publishedIn).toBeLessThan(20_000);
    expect(firstThrough).toBeLessThan(20_000);

    // Recordings keep going through for the rest of the minute, one after the other.
    step = 'the rest of the hang';
    while (performance.now() - hangAt < 60_000) {
      const id = await s.share();
      await when(s.member, 'saved', () => s.mirrored.has(id));
    }
    step = 'resumed';
    hung.resume();
    const after = await s.share();
    await when(s.member, 'saved', () => s.mirrored.has(after));
    // The member may save it before the receiver has marked its claim published (the announcement comes first).
    await when(s.publisher, 'published', () => s.published.has(after));
    expect(s.publisher.pending).toBe(0);
    expect(s.mirrored.size).toBe(s.published.size);
    await s.checkFiles();
  }, 120_000);

  it('is not green while the cluster lost its majority, and publishes every waiting recording within 10 s of its return', async () => {
    let step = 'starting';
    onTestFailed(() => console.error(`studio-hung-server (majority) stopped at "${step}"`));
    const root = await mkdtemp(join(tmpdir(), 'tally-majority-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const cluster = await startNatsCluster(3);
    cleanups.push(() => cluster.close());
    const s = await studio(cluster, root);
    const first = await s.share();
    await when(s.member, 'saved', () => s.mirrored.has(first));

    step = 'majority lost';
    await cluster.nodes[1]!.stop(true);
    await cluster.nodes[2]!.stop(true);
    const waiting = [await s.share(), await s.share(), await s.share()];
    // Neither face is green while nothing can be stored or announced.
    // Both at once: in the first seconds the node left alone may still answer from what it last knew (it took a
    // few seconds to learn it had no majority), and either face may say "answering" once more meanwhile.
    const silent = (said: TeamAnswer[]) => said.at(-1)?.answering === false;
    const bothSilent = () => silent(s.receiverSaid) && silent(s.memberSaid);
    await Promise.race([when(s.publisher, 'answering', bothSilent), when(s.member, 'answering', bothSilent)]);
    expect(s.receiverSaid.at(-1)!.message).toMatch(/cannot store or announce/);
    // Long enough that each has failed twice (before issue 30 each failure grew a pause of the recording's own,
    // which it waited out after the cluster was back).
    let failures = 0;
    s.publisher.on('failed', () => (failures += 1));
    await when(s.publisher, 'failed', () => failures >= 2 * waiting.length);

    step = 'majority back';
    await cluster.nodes[1]!.start();
    await cluster.nodes[2]!.start();
    // Writable again: what the publisher writes is written (asked from a connection of the test's own).
    const nc = await connect({ servers: cluster.urls.map((u) => u.replace('nats://', '')) });
    cleanups.push(() => nc.close());
    const writableAt = await writableAgain(nc);
    await when(s.publisher, 'published', () => waiting.every((id) => s.published.has(id)));
    expect(performance.now() - writableAt).toBeLessThan(10_000);
    await when(s.member, 'saved', () => waiting.every((id) => s.mirrored.has(id)));
    await when(s.member, 'answering', () => s.memberSaid.at(-1)?.answering === true);
    await s.checkFiles();
  }, 120_000);
});
