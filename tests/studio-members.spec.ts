/**
 * Member identity against a real nats-server: two members that carry the same name on two computers (two
 * state folders) each get every recording, with a warning; a state folder copied to a second computer (the
 * same member ID, live twice) is refused at start with one line; a member that restarts after a kill -9 is not
 * taken for its own twin.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { AckPolicy, jetstreamManager } from '@nats-io/jetstream';
import { DEFAULT_RETENTION_MS, STUDIO_STREAM, ensureStudioStream } from '../electron/core/studio/team.js';
import { afterEach, describe, expect, it } from 'vitest';
import { StudioFollower } from '../electron/core/studio/follower.js';
import type { StudioWarning } from '../electron/core/studio/warnings.js';
import { MEMBERS_BUCKET, MemberConflictError, memberId, memberPlace } from '../electron/core/studio/member-identity.js';
import { startNatsServer, type NatsServer } from './support/nats-server.js';
import { announceRecording } from './support/studio-announce.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const root = await mkdtemp(join(tmpdir(), 'tally-members-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const nats: NatsServer = await startNatsServer();
  cleanups.push(() => nats.close());
  return { root, nats };
}

function member(url: string, folder: string, stateDir: string, name = 'twin') {
  const f = new StudioFollower({ url: new URL(url), credentials: null, folder, name, stateDir });
  const saved: string[] = [];
  const warnings: StudioWarning[] = [];
  f.on('saved', (e) => saved.push(e.identity));
  f.on('warning', (w) => warnings.push(w));
  cleanups.push(() => f.stop());
  return { f, saved, warnings };
}

const allSaved = (m: ReturnType<typeof member>, count: number) =>
  new Promise<void>((resolve) => {
    const check = () => m.saved.length >= count && resolve();
    m.f.on('saved', check);
    check();
  });

describe('studio member identity (real nats-server)', () => {
  it('gives every recording to each of two members of the same name on two computers, and warns', async () => {
    const { root, nats } = await setup();
    // The same folder path, the same name: only the state folder (the computer) differs.
    const one = member(nats.url, join(root, 'one', 'Studio'), join(root, 'one', 'home'));
    const two = member(nats.url, join(root, 'two', 'Studio'), join(root, 'two', 'home'));
    await one.f.start();
    await two.f.start();
    expect(two.warnings.map((w) => w.kind)).toEqual(['namesake']);
    expect(two.warnings[0]!.message).toMatch(/also calls itself twin .*both get every recording.*--name/);
    expect(two.f.warnings.map((w) => w.kind)).toEqual(['namesake']);

    const count = 20;
    const everything = Promise.all([allSaved(one, count), allSaved(two, count)]);
    for (let i = 0; i < count; i += 1) {
      const file = join(root, `cam-${i}.mp4`);
      await writeFile(file, randomBytes(20_000 + i));
      await announceRecording(nats.url, file, `cam-${i}`);
    }
    await everything;
    expect(one.saved).toHaveLength(count);
    expect(two.saved).toHaveLength(count);
    expect(await readdir(join(root, 'one', 'Studio'))).toHaveLength(count);
    expect(await readdir(join(root, 'two', 'Studio'))).toHaveLength(count);
  });

  it('refuses a second live member with the same ID (a copied state folder) in one line', async () => {
    const { root, nats } = await setup();
    const original = member(nats.url, join(root, 'Studio'), join(root, 'home-a'));
    await original.f.start();
    // The state folder copied to a second computer while the first runs (its lock is the first's, left out).
    await cp(join(root, 'home-a'), join(root, 'home-b'), { recursive: true, filter: (src) => !/lock/.test(src) });
    const copy = member(nats.url, join(root, 'Studio'), join(root, 'home-b')); // the same path there
    const refused = await copy.f.start().then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(MemberConflictError);
    expect((refused as Error).message.split('\n')).toHaveLength(1);
    expect((refused as Error).message).toMatch(/follows the studio as this very member right now.*TALLY_HOME/);
    expect(copy.saved).toEqual([]);
  });

  it('takes its own entry back after a kill (no clean stop), without calling itself a twin', async () => {
    const { root, nats } = await setup();
    const folder = join(root, 'Studio');
    const home = join(root, 'home');
    const first = member(nats.url, folder, home);
    await first.f.start();
    await first.f.stop();
    // What a kill -9 leaves: the entry of the member's earlier run, still live in the bucket.
    const state = StudioFollower.stateFolder(home, 'twin', folder);
    const id = await memberId(state);
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const kv = await new Kvm(nc).open(MEMBERS_BUCKET);
    const left = {
      name: 'twin',
      host: 'here',
      instance: 'killed',
      place: await memberPlace(state),
      at: new Date().toISOString(),
    };
    await kv.put(id, JSON.stringify(left));
    const again = member(nats.url, folder, home);
    await again.f.start();
    expect(again.warnings).toEqual([]);
  });

  it("replaces the member's place from before member IDs (follow-<name>), so it does not lag for ever", async () => {
    const { root, nats } = await setup();
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    await ensureStudioStream(nc, { retentionMs: DEFAULT_RETENTION_MS, owner: true });
    await jsm.consumers.add(STUDIO_STREAM, { durable_name: 'follow-twin', ack_policy: AckPolicy.Explicit });
    const m = member(nats.url, join(root, 'Studio'), join(root, 'home'));
    await m.f.start();
    const names: { name: string; description?: string }[] = [];
    for await (const ci of jsm.consumers.list(STUDIO_STREAM)) {
      names.push({ name: ci.name, description: ci.config.description });
    }
    expect(names).toEqual([
      { name: expect.stringMatching(/^member-[0-9a-f]{16}$/), description: expect.stringMatching(/^twin on /) },
    ]);
  });
});

describe('a member with a list of servers (real nats-server)', () => {
  it('names the server it reached, not the first of its list when that one is down', async () => {
    const { root, nats } = await setup();
    const down = await startNatsServer();
    await down.close(); // a port nothing answers on any more
    const live = new URL(nats.url);
    const f = new StudioFollower({
      url: new URL(down.url),
      servers: [new URL(down.url), live],
      credentials: null,
      folder: join(root, 'Studio'),
      name: 'listed',
      stateDir: join(root, 'home'),
    });
    cleanups.push(() => f.stop());
    const ready = new Promise<{ url: string }>((resolve) => f.once('ready', resolve));
    await f.start();
    expect((await ready).url).toBe(`nats://${live.host}`);
  });
});
