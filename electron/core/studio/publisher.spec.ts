/**
 * Exactly once between receivers, against a real nats-server: two publishers with separate state folders
 * publish the same recording identity at the same moment (a studio that ran a second receiver by mistake, or
 * a receiver restored from a backup), and two members mirror what the team announces. One object, one
 * announcement, one file per member. A claim abandoned past the stale age is taken over by one receiver only
 * (compare-and-set on the KV revision); an announcement repeated past a lost claim is dropped by the stream's
 * message ID; and refused credentials are said once and fixed by new ones.
 *
 * The pipeline under each publisher is a stand-in for its `saved` event only (a real pipeline downloads from
 * the service: tests/studio.spec.ts runs that end to end); everything on the team side is real.
 */
import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { afterEach, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsServer } from '../../../tests/support/nats-server.js';
import { sinkLogger } from '../logger.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import { StudioFollower } from './follower.js';
import { StudioPublisher, type PublisherEvents } from './publisher.js';
import { CLAIMS_BUCKET, OBJECT_BUCKET, STUDIO_STREAM, TeamAuthError } from './team.js';

/** Stand-in for the recording pipeline: only the `saved` event the publisher listens to, and an empty inbox. */
class SavedEventsStandIn extends EventEmitter {
  /** The saved jobs a restart finds in the journal (empty unless a test puts some there). */
  jobs: Record<string, unknown>[] = [];
  readonly inbox = { where: () => this.jobs };
  readonly uploadLog = null;
  saved(key: string, channelId: string, file: string, bytes: number): void {
    this.emit('saved', { job: { key, channelId, updatedAt: new Date().toISOString() }, path: file, bytes });
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let root = '';
async function setup(args: string[] = []): Promise<NatsServer> {
  root = await mkdtemp(join(tmpdir(), 'tally-publisher-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const nats = await startNatsServer({ args });
  cleanups.push(() => nats.close());
  return nats;
}

function once<K extends keyof PublisherEvents>(p: StudioPublisher, event: K): Promise<PublisherEvents[K][0]> {
  return new Promise((resolve) => p.once(event, ((info: PublisherEvents[K][0]) => resolve(info)) as never));
}

/** A receiver: its own state folder and its own saved copy of the recording. */
async function receiver(
  nats: NatsServer,
  name: string,
  extra: Partial<ConstructorParameters<typeof StudioPublisher>[1]> = {},
) {
  const pipeline = new SavedEventsStandIn();
  const stateDir = join(root, `${name}-state`);
  await mkdir(stateDir, { recursive: true });
  const publisher = new StudioPublisher(pipeline as unknown as RecordingPipeline, {
    url: new URL(nats.url),
    credentials: null,
    store: { kind: 'nats' },
    stateDir,
    retry: { baseDelayMs: 50, maxDelayMs: 200 },
    ...extra,
  });
  const events: string[] = [];
  for (const e of ['published', 'alreadyShared', 'failed'] as const) publisher.on(e, () => events.push(e));
  cleanups.push(() => publisher.stop());
  return { pipeline, publisher, events, folder: join(root, `${name}-recordings`) };
}

async function member(nats: NatsServer, name: string) {
  const folder = join(root, `${name}-mirror`);
  const follower = new StudioFollower({
    url: new URL(nats.url),
    credentials: null,
    folder,
    name,
    stateDir: join(root, `${name}-state`),
  });
  const saved: string[] = [];
  follower.on('saved', (e) => saved.push(e.identity));
  cleanups.push(() => follower.stop());
  await follower.start();
  return { follower, saved, folder };
}

const savedOnce = (f: StudioFollower, identity: string) =>
  new Promise<void>((resolve) => {
    const on = (e: { identity: string }) => {
      if (e.identity !== identity) return;
      f.off('saved', on);
      resolve();
    };
    f.on('saved', on);
  });

async function recording(folder: string, name: string, size: number, fill: number): Promise<string> {
  await mkdir(folder, { recursive: true });
  const file = join(folder, name);
  await writeFile(file, Buffer.alloc(size, fill));
  return file;
}

async function teamState(nats: NatsServer): Promise<{ messages: number; objects: string[] }> {
  const nc: NatsConnection = await connect({ servers: nats.url.replace('nats://', '') });
  try {
    const messages = (await (await jetstreamManager(nc)).streams.info(STUDIO_STREAM)).state.messages;
    const os = await new Objm(nc).open(OBJECT_BUCKET).catch(() => null); // none until the first put
    const objects = os ? (await os.list()).filter((o) => !o.deleted).map((o) => o.name) : [];
    return { messages, objects };
  } finally {
    await nc.close();
  }
}

/** Both receivers settle the identity: one published it, the other found it published. */
async function settled(a: Awaited<ReturnType<typeof receiver>>, b: Awaited<ReturnType<typeof receiver>>) {
  const outcome = (r: typeof a) =>
    Promise.race([
      once(r.publisher, 'published').then(() => 'published'),
      once(r.publisher, 'alreadyShared').then(() => 'alreadyShared'),
    ]);
  return (await Promise.all([outcome(a), outcome(b)])).sort();
}

describe('two receivers publishing the same recording (real nats-server)', () => {
  it('gives one object, one announcement and one file per member when both publish at the same moment', async () => {
    const nats = await setup();
    const [a, b] = [await receiver(nats, 'recv-a'), await receiver(nats, 'recv-b')];
    const connected = Promise.all([once(a.publisher, 'connected'), once(b.publisher, 'connected')]);
    await Promise.all([a.publisher.start(), b.publisher.start()]);
    await connected;
    const [m1, m2] = [await member(nats, 'member-1'), await member(nats, 'member-2')];

    const fileA = await recording(a.folder, 'race-cam.mp4', 600_000, 7);
    const fileB = await recording(b.folder, 'race-cam.mp4', 600_000, 7);
    const outcome = settled(a, b);
    const mirrored = Promise.all([savedOnce(m1.follower, 'rec-race-key'), savedOnce(m2.follower, 'rec-race-key')]);
    // The same webhook reached both: the same inbox key, in the same tick.
    a.pipeline.saved('race-key', 'race-cam', fileA, 600_000);
    b.pipeline.saved('race-key', 'race-cam', fileB, 600_000);
    expect(await outcome).toEqual(['alreadyShared', 'published']);
    await mirrored;

    // A marker afterwards: once the members have it, a second copy of the first would have arrived before it.
    const marker = await recording(a.folder, 'marker.mp4', 50_000, 1);
    const markerSaved = Promise.all([savedOnce(m1.follower, 'rec-marker'), savedOnce(m2.follower, 'rec-marker')]);
    a.pipeline.saved('marker', 'marker', marker, 50_000);
    await markerSaved;

    expect([...a.events, ...b.events].filter((e) => e === 'published')).toHaveLength(2); // race-cam + marker
    expect(await teamState(nats)).toEqual({
      messages: 2,
      objects: expect.arrayContaining(['rec-race-key', 'rec-marker']),
    });
    expect((await teamState(nats)).objects).toHaveLength(2);
    for (const m of [m1, m2]) {
      expect(m.saved).toEqual(['rec-race-key', 'rec-marker']);
      expect((await readdir(m.folder)).sort()).toEqual(['marker.mp4', 'race-cam.mp4']);
    }
    expect(a.publisher.pending + b.publisher.pending).toBe(0);
  });

  it('publishes a recording sent in both webhook forms once after a restart: the twin saved by its file is not', async () => {
    const nats = await setup();
    const r = await receiver(nats, 'recv-twins');
    const file = await recording(r.folder, 'twin.mp4', 40_000, 3);
    const savedAt = new Date().toISOString();
    const job = { channelId: 'twin', state: 'saved', path: file, bytes: 40_000, updatedAt: savedAt };
    // What the journal holds after the genuine form's download saved both twins.
    r.pipeline.jobs = [
      { ...job, key: 'legacy-key', savedBy: 'genuine-key' },
      { ...job, key: 'genuine-key', twin: 'legacy-key' },
    ];
    const published = once(r.publisher, 'published');
    await r.publisher.start();
    expect(r.publisher.waiting().map((w) => w.identity)).toEqual([expect.stringContaining('genuine-key')]);
    await published;
    expect(await teamState(nats)).toEqual({ messages: 1, objects: ['rec-genuine-key'] });
    expect(r.events).toEqual(['published']);
  });

  it('leaves no orphan chunk when two receivers put the same recording at once (counted through the JetStream API)', async () => {
    const nats = await setup();
    // A stale age of 1 ms: the second receiver takes the first one's claim over at once, so both put the bytes.
    const [a, b] = [
      await receiver(nats, 'recv-a', { staleClaimMs: 1 }),
      await receiver(nats, 'recv-b', { staleClaimMs: 1 }),
    ];
    const connected = Promise.all([once(a.publisher, 'connected'), once(b.publisher, 'connected')]);
    await Promise.all([a.publisher.start(), b.publisher.start()]);
    await connected;
    const size = 6 * 1024 * 1024 + 17;
    const fileA = await recording(a.folder, 'big-cam.mp4', size, 9);
    const fileB = await recording(b.folder, 'big-cam.mp4', size, 9);
    const outcome = settled(a, b);
    a.pipeline.saved('big', 'big-cam', fileA, size);
    b.pipeline.saved('big', 'big-cam', fileB, size);
    expect(await outcome).toEqual(['alreadyShared', 'published']);

    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const chunks =
      (
        await (
          await jetstreamManager(nc)
        ).streams.info(`OBJ_${OBJECT_BUCKET}`, {
          subjects_filter: `$O.${OBJECT_BUCKET}.C.>`,
        })
      ).state.subjects ?? {};
    const object = await (await new Objm(nc).open(OBJECT_BUCKET)).info('rec-big');
    expect(chunks).toEqual({ [`$O.${OBJECT_BUCKET}.C.${object!.nuid}`]: object!.chunks });
    // Two 6 MiB puts racing, and the loser's retries: more than 30 s once with seven studio specs on two cores.
  }, 90_000);

  it('lets exactly one receiver take over a claim abandoned past the stale age (compare-and-set, not a blind put)', async () => {
    const nats = await setup();
    // A receiver that claimed the recording and was never seen again: its claim goes stale on the server's clock
    // (the stale age is 2 s here), whatever time its own clock wrote in it.
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    const kv = await new Kvm(nc).create(CLAIMS_BUCKET, { history: 1 });
    await kv.create('rec-orphan', JSON.stringify({ state: 'claimed', by: 'gone-host', at: new Date().toISOString() }));

    const stale = { staleClaimMs: 2_000 };
    const [a, b] = [await receiver(nats, 'recv-a', stale), await receiver(nats, 'recv-b', stale)];
    const connected = Promise.all([once(a.publisher, 'connected'), once(b.publisher, 'connected')]);
    await Promise.all([a.publisher.start(), b.publisher.start()]);
    await connected;
    const m = await member(nats, 'member-1');
    const mirrored = savedOnce(m.follower, 'rec-orphan');
    const outcome = settled(a, b);
    a.pipeline.saved('orphan', 'orphan-cam', await recording(a.folder, 'orphan-cam.mp4', 300_000, 5), 300_000);
    b.pipeline.saved('orphan', 'orphan-cam', await recording(b.folder, 'orphan-cam.mp4', 300_000, 5), 300_000);
    // With a blind put both would take it over and both would publish.
    expect(await outcome).toEqual(['alreadyShared', 'published']);
    await mirrored;
    expect([...a.events, ...b.events].filter((e) => e === 'published')).toHaveLength(1);
    expect(await teamState(nats)).toEqual({ messages: 1, objects: ['rec-orphan'] });
    const claim = (await kv.get('rec-orphan'))!.json<{ state: string; by: string }>();
    expect(claim.state).toBe('published');
    expect(claim.by).not.toBe('gone-host');
    await nc.close();
  });

  it('leaves a claim another receiver renewed recently alone: nothing is published twice', async () => {
    const nats = await setup();
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const kv = await new Kvm(nc).create(CLAIMS_BUCKET, { history: 1 });
    await kv.create('rec-busy', JSON.stringify({ state: 'claimed', by: 'busy-host', at: new Date().toISOString() }));
    const a = await receiver(nats, 'recv-a');
    await a.publisher.start();
    const failed = once(a.publisher, 'failed');
    a.pipeline.saved('busy', 'busy-cam', await recording(a.folder, 'busy-cam.mp4', 10_000, 2), 10_000);
    expect((await failed).message).toMatch(/another receiver is publishing it/);
    expect(await teamState(nats)).toEqual({ messages: 0, objects: [] });
    expect((await kv.get('rec-busy'))!.json<{ by: string }>().by).toBe('busy-host');
  });

  it('a download claim taken over, or renewed at a stop, leaves no renewal handle behind', async () => {
    const nats = await setup();
    const lines: string[] = [];
    const lineSaid = new EventEmitter();
    const log = sinkLogger((_level, _scope, line) => {
      lines.push(line);
      lineSaid.emit('line', line);
    });
    const a = await receiver(nats, 'recv-a', { staleClaimMs: 3_000, log });
    const connected = once(a.publisher, 'connected');
    await a.publisher.start();
    await connected;
    expect(await a.publisher.claimDownload('rec-taken')).toEqual({ state: 'mine' });
    expect(a.publisher.renewedClaims).toEqual(['rec-taken']);

    // Another receiver took the claim over (it found it stale): the next renewal is refused, and its handle goes
    // (it stayed in the map, cleared but never removed, for as long as the receiver ran).
    const notRenewed = new Promise<void>((resolve) => {
      const on = (line: string) => {
        if (!line.includes('download claim on rec-taken is no longer renewed')) return;
        lineSaid.off('line', on);
        resolve();
      };
      lineSaid.on('line', on);
    });
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const kv = await new Kvm(nc).open(CLAIMS_BUCKET);
    await kv.put('rec-taken', JSON.stringify({ state: 'claimed', by: 'other-host', at: new Date().toISOString() }));
    await notRenewed;
    expect(a.publisher.renewedClaims).toEqual([]);
    expect((await kv.get('rec-taken'))!.json<{ by: string }>().by).toBe('other-host');

    // Stopped while a claim is renewed: none is left.
    expect(await a.publisher.claimDownload('rec-held')).toEqual({ state: 'mine' });
    expect(a.publisher.renewedClaims).toEqual(['rec-held']);
    await a.publisher.stop();
    expect(a.publisher.renewedClaims).toEqual([]);
  });

  it("never takes a live claim of a receiver whose clock is 15 minutes behind (the server's clock judges)", async () => {
    const nats = await setup();
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const kv = await new Kvm(nc).create(CLAIMS_BUCKET, { history: 1 });
    // Written a moment ago by a receiver whose clock says it is 15 minutes earlier: judged by this computer's
    // clock, that claim was 15 minutes old, past the 10-minute stale age, and was taken over mid-upload.
    const behind = new Date(Date.now() - 15 * 60_000).toISOString();
    await kv.create('rec-live', JSON.stringify({ state: 'claimed', by: 'slow-clock-host', at: behind }));
    const a = await receiver(nats, 'recv-a');
    await a.publisher.start();
    const failed = once(a.publisher, 'failed');
    a.pipeline.saved('live', 'live-cam', await recording(a.folder, 'live-cam.mp4', 10_000, 2), 10_000);
    expect((await failed).message).toMatch(/another receiver is publishing it/);
    expect(await teamState(nats)).toEqual({ messages: 0, objects: [] });
    expect((await kv.get('rec-live'))!.json<{ by: string }>().by).toBe('slow-clock-host');
  });
});

describe('publishing runs several recordings at once (real nats-server)', () => {
  it('puts small recordings while a large one is still going up: none waits behind it', async () => {
    const nats = await setup();
    const a = await receiver(nats, 'recv-a');
    const order: string[] = [];
    a.publisher.on('published', (e) => order.push(e.channelId));
    const connected = once(a.publisher, 'connected');
    await a.publisher.start();
    await connected;
    const bigSize = 48 * 1024 * 1024;
    const big = await recording(a.folder, 'long-show.mp4', bigSize, 3);
    const smalls = await Promise.all([1, 2, 3, 4, 5].map((i) => recording(a.folder, `clip-${i}.mp4`, 100_000 + i, i)));
    const all = new Promise<void>((resolve) => a.publisher.on('published', () => order.length === 6 && resolve()));
    a.pipeline.saved('long', 'long-show', big, bigSize);
    smalls.forEach((file, i) => a.pipeline.saved(`clip-${i + 1}`, `clip-${i + 1}`, file, 100_001 + i));
    await all;
    expect(order.at(-1)).toBe('long-show');
    expect(await teamState(nats)).toMatchObject({ messages: 6 });
  });
});

describe('the announcement stream drops a repeated announcement by message ID (real nats-server)', () => {
  it('keeps one stream message when a receiver announces again what the claim no longer guards', async () => {
    const nats = await setup();
    const a = await receiver(nats, 'recv-a');
    await a.publisher.start();
    const first = once(a.publisher, 'published');
    a.pipeline.saved('dupe', 'dupe-cam', await recording(a.folder, 'dupe-cam.mp4', 40_000, 3), 40_000);
    await first;
    await a.publisher.stop();

    // The claim lost (purged by hand, or a bucket recreated) and a receiver without the ledger: nothing but the
    // stream's message ID stands between this second announcement and a second copy on every member.
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    await (await new Kvm(nc).open(CLAIMS_BUCKET)).purge('rec-dupe');
    const b = await receiver(nats, 'recv-b');
    await b.publisher.start();
    const again = once(b.publisher, 'published');
    b.pipeline.saved('dupe', 'dupe-cam', await recording(b.folder, 'dupe-cam.mp4', 40_000, 3), 40_000);
    await again;
    expect(await teamState(nats)).toEqual({ messages: 1, objects: ['rec-dupe'] });
    // The same message (ID and sequence), not a second one of the same subject.
    const stream = await (await jetstreamManager(nc)).streams.info(STUDIO_STREAM);
    expect(stream.state).toMatchObject({ first_seq: 1, last_seq: 1 });
  });
});

describe('retention (real nats-server)', () => {
  it('applies a changed retention to the stream, the claims bucket and the object store alike', async () => {
    const nats = await setup();
    const day = 24 * 60 * 60 * 1000;
    const a = await receiver(nats, 'recv-a', { retentionMs: 7 * day });
    await a.publisher.start();
    const published = once(a.publisher, 'published');
    a.pipeline.saved('kept', 'kept-cam', await recording(a.folder, 'kept-cam.mp4', 20_000, 4), 20_000);
    await published; // all three exist now, created with 7 days
    await a.publisher.stop();

    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    const maxAges = async () =>
      Promise.all(
        [STUDIO_STREAM, `KV_${CLAIMS_BUCKET}`, `OBJ_${OBJECT_BUCKET}`].map(
          async (s) => (await jsm.streams.info(s)).config.max_age / 1_000_000 / day,
        ),
      );
    expect(await maxAges()).toEqual([7, 7, 7]);

    // `tally listen --retention 14d` (or the app's retentionDays) on the next start.
    const b = await receiver(nats, 'recv-b', { retentionMs: 14 * day });
    const connected = once(b.publisher, 'connected');
    await b.publisher.start();
    await connected;
    expect(await maxAges()).toEqual([14, 14, 14]);
    // Nothing else changed: the recording is still there, its claim still says published.
    expect(await teamState(nats)).toEqual({ messages: 1, objects: ['rec-kept'] });
    const claims = await new Kvm(nc).open(CLAIMS_BUCKET);
    expect((await claims.get('rec-kept'))!.json<{ state: string }>().state).toBe('published');
  });
});

describe('uploads cut short by a crash (real nats-server)', () => {
  it('removes chunks no object refers to once they are older than the stale age, and nothing else', async () => {
    const nats = await setup();
    const a = await receiver(nats, 'recv-a');
    await a.publisher.start();
    const published = once(a.publisher, 'published');
    a.pipeline.saved('live', 'live-cam', await recording(a.folder, 'live-cam.mp4', 1_200_000, 6), 1_200_000);
    await published;
    await a.publisher.stop();
    // What a receiver killed with -9 mid-put leaves: chunks under a subject no object's metadata names.
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const js = jetstream(nc);
    for (let i = 0; i < 3; i += 1) await js.publish(`$O.${OBJECT_BUCKET}.C.cut-short`, Buffer.alloc(1000, i));
    const jsm = await jetstreamManager(nc);
    const chunkSubjects = async () =>
      Object.keys(
        (await jsm.streams.info(`OBJ_${OBJECT_BUCKET}`, { subjects_filter: `$O.${OBJECT_BUCKET}.C.>` })).state
          .subjects ?? {},
      );
    expect(await chunkSubjects()).toHaveLength(2);

    // Recent: it may be an upload in progress on another receiver, so it stays.
    const b = await receiver(nats, 'recv-b', { staleClaimMs: 60 * 60_000 });
    const bConnected = once(b.publisher, 'connected');
    await b.publisher.start();
    await bConnected;
    await b.publisher.stop();
    expect(await chunkSubjects()).toContain(`$O.${OBJECT_BUCKET}.C.cut-short`);

    // Past the stale age: removed; the recording's own chunks stay and a member still mirrors it whole.
    const c = await receiver(nats, 'recv-c', { staleClaimMs: 1 });
    const cConnected = once(c.publisher, 'connected');
    await c.publisher.start();
    await cConnected;
    expect(await chunkSubjects()).toHaveLength(1);
    expect(await chunkSubjects()).not.toContain(`$O.${OBJECT_BUCKET}.C.cut-short`);
    const m = await member(nats, 'member-1');
    if (!m.saved.includes('rec-live')) await savedOnce(m.follower, 'rec-live');
    expect(await readdir(m.folder)).toEqual(['live-cam.mp4']);
  });
});

describe('refused team credentials (real nats-server with a user and password)', () => {
  it('says so once, waits, and connects with the credentials as they are at the next try', async () => {
    const nats = await setup(['--user', 'studio', '--pass', 'right-pass']);
    const wrong = { user: 'studio', password: 'wrong-pass' };
    let reloads = 0;
    // Fixed (as by "tally login --team" in another terminal) only at the third reading: two more refused tries,
    // which must not be said again.
    const a = await receiver(nats, 'recv-a', {
      credentials: wrong,
      refusedDelayMs: 20,
      reloadCredentials: async () => (++reloads >= 3 ? { user: 'studio', password: 'right-pass' } : wrong),
    });
    const refusals: TeamAuthError[] = [];
    const waits: number[] = [];
    a.publisher.on('refused', ({ error, retryInMs }) => {
      refusals.push(error as TeamAuthError);
      waits.push(retryInMs);
    });
    const connected = once(a.publisher, 'connected');
    await a.publisher.start();
    await connected;
    expect(refusals).toHaveLength(1);
    // The wait said is the one the retry loop armed (the first refusal's: refusedDelayMs).
    expect(waits).toEqual([20]);
    expect(refusals[0]).toBeInstanceOf(TeamAuthError);
    expect(refusals[0]!.message).toMatch(
      /refused the credentials \(Authorization Violation\).*tally login --team nats:\/\/127\.0\.0\.1:\d+.*TALLY_TEAM_USER/,
    );
    expect(refusals[0]!.message).not.toContain('wrong-pass');
    expect(reloads).toBe(3);
    expect(nats.log().match(/authentication error/g)).toHaveLength(3);
  });
});

describe('an announced recording whose bytes the team store lost (real nats-server, chunks purged)', () => {
  /** Purges the object's chunks from the object store's stream: its name stays, its bytes are gone. */
  async function purgeChunks(nats: NatsServer, identity: string): Promise<number> {
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    try {
      const info = await (await new Objm(nc).open(OBJECT_BUCKET)).info(identity);
      const jsm = await jetstreamManager(nc);
      const filter = `$O.${OBJECT_BUCKET}.C.${info!.nuid}`;
      return (await jsm.streams.purge(`OBJ_${OBJECT_BUCKET}`, { filter })).purged;
    } finally {
      await nc.close();
    }
  }

  /** A receiver that shared `name` and has it in its journal as saved (where it finds the file to put again). */
  async function shared(nats: NatsServer, name: string, size: number) {
    const r = await receiver(nats, `recv-${name}`);
    const connected = once(r.publisher, 'connected');
    await r.publisher.start();
    await connected;
    const file = await recording(r.folder, `${name}.mp4`, size, 9);
    r.pipeline.jobs = [{ key: name, channelId: name, path: file, bytes: size, state: 'saved' }];
    const published = once(r.publisher, 'published');
    r.pipeline.saved(name, name, file, size);
    await published;
    expect(await purgeChunks(nats, `rec-${name}`)).toBeGreaterThan(0);
    return { r, file };
  }

  function memberOf(nats: NatsServer, name: string) {
    const follower = new StudioFollower({
      url: new URL(nats.url),
      credentials: null,
      folder: join(root, `${name}-mirror`),
      name,
      stateDir: join(root, `${name}-state`),
    });
    const failed: { identity: string; willRetry: boolean }[] = [];
    follower.on('failed', (f) => failed.push(f));
    cleanups.push(() => follower.stop());
    return { follower, failed, folder: join(root, `${name}-mirror`) };
  }

  it('is put again by the receiver that still has the file, and the member mirrors it byte for byte', async () => {
    const nats = await setup();
    const { file } = await shared(nats, 'restored', 300_000);
    const m = memberOf(nats, 'member-restored');
    const saved = savedOnce(m.follower, 'rec-restored');
    await m.follower.start();
    await saved;
    expect(await readFile(join(m.folder, 'restored.mp4'))).toEqual(await readFile(file));
    // It failed for want of bytes first (the store had only the name), and never for good.
    expect(m.failed.filter((f) => f.identity === 'rec-restored').every((f) => f.willRetry)).toBe(true);
    expect(m.failed.length).toBeGreaterThan(0);
  });

  it('is said gone once when no receiver has the file any more, and the member stops trying it', async () => {
    const nats = await setup();
    const { file } = await shared(nats, 'lost', 200_000);
    await rm(file);
    const m = memberOf(nats, 'member-lost');
    const settled = new Promise<void>((resolve) =>
      m.follower.on('failed', (f) => f.identity === 'rec-lost' && !f.willRetry && resolve()),
    );
    await m.follower.start();
    await settled;
    // The claim says gone (one write), the member's ledger says gone, and no further attempt follows.
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const claim = await (await new Kvm(nc).open(CLAIMS_BUCKET)).get('rec-lost');
    expect(claim?.json<{ state: string }>().state).toBe('gone');
    const failuresThen = m.failed.length;
    // A marker after it is mirrored: had the member gone on trying the lost one, its failures would come first.
    const marker = await recording(join(root, 'marker'), 'after-lost.mp4', 10_000, 2);
    const r2 = await receiver(nats, 'recv-marker');
    const connected = once(r2.publisher, 'connected');
    await r2.publisher.start();
    await connected;
    const markerSaved = savedOnce(m.follower, 'rec-after-lost');
    r2.pipeline.saved('after-lost', 'after-lost', marker, 10_000);
    await markerSaved;
    expect(m.follower.records().find((r) => r.identity === 'rec-lost')?.state).toBe('gone');
    expect(m.failed.filter((f) => f.identity === 'rec-lost' && !f.willRetry)).toHaveLength(1);
    expect(m.failed.slice(failuresThen).filter((f) => f.identity === 'rec-lost')).toEqual([]);
  });
});
