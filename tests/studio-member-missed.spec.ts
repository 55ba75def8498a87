/**
 * A member learns of every recording it did not save (issue 31 item 3), also one whose mirror was still failing
 * when the member stopped: the member's handled mark (shared-index.ts) must stay below it, so that once it expired
 * from the team server the member, back, names it as missed. It was marked past it as soon as a later recording was
 * saved, and the member, back, retried the unreadable one for ever and never said it was missed.
 *
 * Real parts: a nats-server, the team's Object Store with the recording's chunks purged (its name stays, its bytes
 * are gone: the member keeps retrying, waiting for a receiver to put it again), the stream's retention played by
 * a purge of its oldest messages, the member's own state folder across three runs.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { afterEach, describe, expect, it } from 'vitest';
import type { Announcement } from '../electron/core/studio/announcement.js';
import { StudioFollower } from '../electron/core/studio/follower.js';
import { OBJECT_BUCKET, STUDIO_STREAM } from '../electron/core/studio/team.js';
import { startNatsServer, type NatsServer } from './support/nats-server.js';
import { announceRecording } from './support/studio-announce.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Purges a stored recording's chunks: its name stays in the store, its bytes are gone. */
async function purgeChunks(nats: NatsServer, identity: string): Promise<void> {
  const nc = await connect({ servers: nats.url.replace('nats://', '') });
  try {
    const info = await (await new Objm(nc).open(OBJECT_BUCKET)).info(identity);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.purge(`OBJ_${OBJECT_BUCKET}`, { filter: `$O.${OBJECT_BUCKET}.C.${info!.nuid}` });
  } finally {
    await nc.close();
  }
}

/** What the stream's retention does to a member away too long: every message before the last one is dropped. */
async function expireAllButLast(nats: NatsServer): Promise<void> {
  const nc = await connect({ servers: nats.url.replace('nats://', '') });
  try {
    const jsm = await jetstreamManager(nc);
    const last = (await jsm.streams.info(STUDIO_STREAM)).state.last_seq;
    await jsm.streams.purge(STUDIO_STREAM, { seq: last });
  } finally {
    await nc.close();
  }
}

function when<T>(f: StudioFollower, event: 'saved' | 'failed', test: (e: { identity: string }) => boolean) {
  return new Promise<T>((resolve) => {
    const on = (e: { identity: string }) => {
      if (!test(e)) return;
      f.off(event, on as never);
      resolve(e as T);
    };
    f.on(event, on as never);
  });
}

describe.each([
  ['a member from before', true],
  ['on its first run', false],
])('a member whose mirror was still failing when it stopped, %s (real nats-server)', (_label, memberBefore) => {
  it('names that recording as missed once it expired from the team server, and stops trying it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tally-missed-mark-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const source = join(root, 'source.mp4');
    await writeFile(source, Buffer.alloc(20_000, 4));
    const folder = join(root, 'mirror');
    const member = () => {
      const f = new StudioFollower({
        url: new URL(nats.url),
        credentials: null,
        folder,
        name: 'member',
        stateDir: join(root, 'home'),
      });
      cleanups.push(() => f.stop());
      return f;
    };

    // Run 1: a member already (its handled mark exists), or not (run 2 is its first, and the very first
    // recording of the stream is the one that fails: a mark of 0 once read back as "never a member").
    if (memberBefore) {
      const first = member();
      const before = when(first, 'saved', (e) => e.identity === 'rec-before');
      await first.start();
      await announceRecording(nats.url, source, 'before');
      await before;
      await first.stop();
    }

    // Run 2: one recording cannot be read (its bytes lost, no receiver to put it again): its mirror fails and
    // waits; a later one is saved meanwhile. The member stops with the first still failing.
    await announceRecording(nats.url, source, 'unreadable');
    await purgeChunks(nats, 'rec-unreadable');
    const second = member();
    const failing = when(second, 'failed', (e) => e.identity === 'rec-unreadable');
    await second.start();
    await failing;
    const later = when(second, 'saved', (e) => e.identity === 'rec-later');
    await announceRecording(nats.url, source, 'later');
    await later;
    await second.stop();

    // Away: both expire from the stream (one more recording is still there).
    await announceRecording(nats.url, source, 'still-there');
    await expireAllButLast(nats);

    // Run 3: the failing one is named as missed, before any new attempt at it.
    const third = member();
    const missed = new Promise<Announcement[]>((resolve) => third.once('missed', resolve));
    const outcome = Promise.race([
      missed.then((list) => list.map((a) => a.identity)),
      when(third, 'failed', (e) => e.identity === 'rec-unreadable').then(() => 'tried it again, nothing said'),
    ]);
    const stillThere = when(third, 'saved', (e) => e.identity === 'rec-still-there');
    await third.start();
    expect(await outcome).toEqual(['rec-unreadable']);
    await stillThere;
    expect(third.records().find((r) => r.identity === 'rec-unreadable')).toMatchObject({ state: 'gone', missed: true });
    // Saved ones are not named; nothing of the missed one is left in the folder.
    const kept = ['later.mp4', 'still-there.mp4'];
    expect((await readdir(folder)).sort()).toEqual(memberBefore ? ['before.mp4', ...kept] : kept);
  }, 60_000);
});
