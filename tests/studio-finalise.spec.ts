/**
 * A member killed between placing a mirrored file under its final name and its cleanup (the ledger's "saved",
 * the removal of the `.part` and its `.resume`), against a real nats-server. The kill leaves exactly this on
 * disk: the final file, the part as a second link to it, the sidecar at its last checkpoint (an offset well
 * short of the end) and a ledger that says "started". The next start must never leave the final file shorter
 * than its recording, also when the object expired from the team store meanwhile, and must leave no leftovers.
 */
import { randomBytes } from 'node:crypto';
import { appendFile, link, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { Objm } from '@nats-io/obj';
import { afterEach, describe, expect, it } from 'vitest';
import type { Announcement } from '../electron/core/studio/announcement.js';
import { StudioFollower } from '../electron/core/studio/follower.js';
import { partPathsFor } from '../electron/core/studio/mirror-file.js';
import { OBJECT_BUCKET } from '../electron/core/studio/team.js';
import { startNatsServer, type NatsServer } from './support/nats-server.js';
import { sha256File } from './support/sandbox-files.js';
import { announceRecording } from './support/studio-announce.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const BYTES = 3 * 1024 * 1024 + 123;

async function setup() {
  const root = await mkdtemp(join(tmpdir(), 'tally-finalise-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const nats: NatsServer = await startNatsServer();
  cleanups.push(() => nats.close());
  const source = join(root, 'source.mp4');
  await writeFile(source, randomBytes(BYTES));
  const a = await announceRecording(nats.url, source, 'cam-final');
  return {
    root,
    nats,
    a,
    sha256: await sha256File(source),
    folder: join(root, 'mirror'),
    stateDir: join(root, 'home'),
  };
}

function follower(folder: string, stateDir: string, url: string) {
  const f = new StudioFollower({ url: new URL(url), credentials: null, folder, name: 'member', stateDir });
  cleanups.push(() => f.stop());
  return f;
}

/** Resolves when the follower settles the identity: saved, or given up on (gone from the store). */
const settled = (f: StudioFollower, identity: string) =>
  new Promise<string>((resolve) => {
    f.on('saved', (e) => e.identity === identity && resolve('saved'));
    f.on('failed', (e) => e.identity === identity && !e.willRetry && resolve(`gone: ${e.message}`));
  });

/** Mirrors once, then rebuilds what a kill -9 right after the link (before the cleanup) leaves behind. */
async function killedAfterLink(folder: string, stateDir: string, url: string, a: Announcement) {
  const first = follower(folder, stateDir, url);
  const done = settled(first, a.identity);
  await first.start();
  expect(await done).toBe('saved');
  await first.stop();
  const final = join(folder, 'cam-final.mp4');
  const { part, sidecar } = partPathsFor(folder, a);
  await link(final, part);
  // The last checkpoint before the end: 1 MiB in, as the sidecar said while the bytes still came.
  await writeFile(sidecar, JSON.stringify({ identity: a.identity, offset: 1024 * 1024, resume: null }));
  const ledger = join(StudioFollower.stateFolder(stateDir, 'member', folder), 'mirrored.jsonl');
  await appendFile(
    ledger,
    `${JSON.stringify({ identity: a.identity, state: 'started', at: new Date().toISOString(), announcement: a })}\n`,
  );
  return final;
}

describe('mirror finalisation survives a kill between the final name and the cleanup (real nats-server)', () => {
  it('keeps the final file whole when the object expired from the team store meanwhile; no leftovers', async () => {
    const { nats, a, sha256, folder, stateDir } = await setup();
    const final = await killedAfterLink(folder, stateDir, nats.url, a);
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    await (await new Objm(nc).open(OBJECT_BUCKET)).delete(a.identity);
    await nc.close();

    const second = follower(folder, stateDir, nats.url);
    const outcome = settled(second, a.identity);
    await second.start();
    expect(await outcome).toBe('saved');
    expect((await stat(final)).size).toBe(BYTES);
    expect(await sha256File(final)).toBe(sha256);
    expect(await readdir(folder)).toEqual(['cam-final.mp4']);
    expect(second.records().find((r) => r.identity === a.identity)?.state).toBe('saved');
  });

  it('verifies the file it has instead of fetching over it when the object is still there; no leftovers', async () => {
    const { nats, a, sha256, folder, stateDir } = await setup();
    const final = await killedAfterLink(folder, stateDir, nats.url, a);
    const second = follower(folder, stateDir, nats.url);
    const outcome = settled(second, a.identity);
    // Each byte fetched again was written over the finished file (the part is the same inode).
    let fetched = 0;
    second.on('progress', () => (fetched += 1));
    await second.start();
    expect(await outcome).toBe('saved');
    expect(fetched).toBe(0);
    expect(await sha256File(final)).toBe(sha256);
    expect(await readdir(folder)).toEqual(['cam-final.mp4']);
  });

  it('removes the part and sidecar a kill after the ledger said "saved" left beside the final file', async () => {
    const { nats, a, sha256, folder, stateDir } = await setup();
    const first = follower(folder, stateDir, nats.url);
    const done = settled(first, a.identity);
    await first.start();
    await done;
    await first.stop();
    const { part, sidecar } = partPathsFor(folder, a);
    await link(join(folder, 'cam-final.mp4'), part);
    await writeFile(sidecar, JSON.stringify({ identity: a.identity, offset: BYTES, resume: null, verified: true }));
    await mkdir(folder, { recursive: true });

    const second = follower(folder, stateDir, nats.url);
    await second.start();
    expect(await readdir(folder)).toEqual(['cam-final.mp4']);
    expect(await sha256File(join(folder, 'cam-final.mp4'))).toBe(sha256);
  });
});
