/**
 * Retention health against a real nats-server: a member that is away while recordings are shared falls behind;
 * the receiver reads every member's lag from the stream's consumers and warns, naming the member, when its
 * oldest pending recording is about to leave the team server; the member itself says so when it starts; both
 * warnings go once it has caught up. (The warning window here is the whole retention, so "about to expire"
 * needs no waiting; the arithmetic of the window is in lag.ts.)
 */
import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordingPipeline } from '../electron/core/pipeline/pipeline.js';
import { StudioFollower } from '../electron/core/studio/follower.js';
import { StudioPublisher } from '../electron/core/studio/publisher.js';
import type { StudioWarning } from '../electron/core/studio/warnings.js';
import { startNatsServer } from './support/nats-server.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const HOUR = 60 * 60 * 1000;

describe('members falling behind the retention (real nats-server)', () => {
  it('warns on the receiver and on the member while recordings wait, and clears once it caught up', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tally-lag-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const pipeline = Object.assign(new EventEmitter(), { inbox: { where: () => [] }, uploadLog: null });
    const publisher = new StudioPublisher(pipeline as unknown as RecordingPipeline, {
      url: new URL(nats.url),
      credentials: null,
      store: { kind: 'nats' },
      stateDir: join(root, 'receiver'),
      retentionMs: HOUR,
      lagWarnMs: HOUR,
      lagCheckMs: 100,
    });
    cleanups.push(() => publisher.stop());
    const connected = new Promise((resolve) => publisher.once('connected', resolve));
    await publisher.start();
    await connected;

    const memberOpts = {
      url: new URL(nats.url),
      credentials: null,
      folder: join(root, 'Studio'),
      name: 'late-laptop',
      stateDir: join(root, 'member'),
      lagWarnMs: HOUR,
    };
    const first = new StudioFollower(memberOpts);
    await first.start(); // its place on the server exists from now on
    await first.stop();

    const warned = new Promise<StudioWarning>((resolve) =>
      publisher.on('warning', (w) => w.kind.startsWith('lag:') && resolve(w)),
    );
    const published = new Promise<void>((resolve) => {
      let n = 0;
      publisher.on('published', () => ++n === 2 && resolve());
    });
    await mkdir(join(root, 'saved'), { recursive: true });
    for (const i of [1, 2]) {
      const file = join(root, 'saved', `cam-${i}.mp4`);
      await writeFile(file, Buffer.alloc(10_000, i));
      (pipeline as EventEmitter).emit('saved', {
        job: { key: `k${i}`, channelId: `cam-${i}`, updatedAt: new Date().toISOString() },
        path: file,
        bytes: 10_000,
      });
    }
    await published;
    await warned;
    // The warning may have come between the two publishes; the next reading counts both (the kind's text is
    // kept up to date in `warnings`, and said only once).
    await new Promise<void>((resolve) => publisher.once('lag', () => resolve()));
    const w = publisher.warnings.find((x) => x.kind.startsWith('lag:'))!;
    expect(w.message).toMatch(
      /The member late-laptop on .* has 2 recordings waiting, and the oldest leaves the team server in (59|60) min/,
    );
    expect(publisher.membersLag.find((l) => l.label.startsWith('late-laptop'))?.pending).toBe(2);

    const back = new StudioFollower(memberOpts);
    cleanups.push(() => back.stop());
    const own: StudioWarning[] = [];
    back.on('warning', (x) => own.push(x));
    const caughtUp = new Promise<void>((resolve) => back.on('warningCleared', (k) => k === 'lag' && resolve()));
    const receiverCleared = new Promise<void>((resolve) =>
      publisher.on('warningCleared', (k) => k === w.kind && resolve()),
    );
    await back.start();
    expect(own.map((x) => x.kind)).toEqual(['lag']);
    expect(own[0]!.message).toMatch(/This computer has 2 studio recordings still to fetch.*keep Tally following/);
    await caughtUp;
    await receiverCleared;
    expect(back.warnings).toEqual([]);
    expect(publisher.warnings).toEqual([]);
  });
});
