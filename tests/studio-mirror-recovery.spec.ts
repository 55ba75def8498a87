/**
 * A member's mirror after an outage of the team server (issue 30, item 6: no per-item pause carried over from the
 * outage). A real nats-server is stopped while a member mirrors a recording: every attempt meanwhile fails and the
 * mirror's pause grows (RetryLoop, 1 s doubling). Once the server is back, the NATS client reconnects by itself and
 * the mirror goes at once, instead of waiting out the pause it grew while nothing could answer.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StudioFollower } from '../electron/core/studio/follower.js';
import { systemClock } from '../electron/core/time.js';
import { startNatsServer } from './support/nats-server.js';
import { announceRecording } from './support/studio-announce.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Failed attempts before the server comes back (each waits out a request's timeout while the server is down): the
 * fifth pauses 8 to 16 s (1 s doubling, half of it random).
 */
const FAILURES = 5;

describe('a member after the team server was down', () => {
  it('mirrors at once when the client reconnects, not after the pause grown during the outage', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tally-mirror-recovery-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const file = join(root, 'rec.mp4');
    await writeFile(file, randomBytes(3 * 1024 * 1024));
    const member = new StudioFollower({
      url: new URL(nats.url),
      credentials: null,
      folder: join(root, 'Studio'),
      name: 'member',
      stateDir: join(root, 'home'),
      // Slow enough to be mid-transfer when the server stops; quick to notice a transfer that stalled.
      rateBytesPerSec: 256 * 1024,
      idleTimeoutMs: 500,
    });
    cleanups.push(() => member.stop());
    await member.start();
    const progressed = new Promise<void>((resolve) => member.on('progress', (p) => p.bytes > 0 && resolve()));
    await announceRecording(nats.url, file, 'recovery');
    await progressed;

    const failed = new Promise<void>((resolve) => {
      let count = 0;
      member.on('failed', (f) => {
        if (f.willRetry && ++count === FAILURES) resolve();
      });
    });
    await nats.stop(true);
    await failed;
    const reconnected = new Promise<number>((resolve) =>
      member.on('connection', (state) => state === 'reconnected' && resolve(systemClock.now())),
    );
    // The first bytes after the outage: the mirror's next attempt under way.
    const moving = reconnected.then(
      () => new Promise<number>((resolve) => member.on('progress', () => resolve(systemClock.now()))),
    );
    const saved = new Promise<void>((resolve) => member.on('saved', () => resolve()));
    await nats.start();
    const backAt = await reconnected;
    const movingAt = await moving;
    await saved;
    // At once, not after the 8 s or more that the fifth failure's pause would wait.
    expect(movingAt - backAt).toBeLessThan(5_000);
  }, 90_000);
});
