/**
 * A member joining a studio waits in one retry loop (issue 35: no retry around a retry): the team server that
 * cannot be reached yet and then one that answers without JetStream are waited out by the same loop, so its count
 * of attempts (and the pause it grows) goes on across both kinds of failure instead of starting again inside
 * `connectTeam`'s own loop. Real nats-server, started late on the port the member dials, the
 * first node of a cluster whose others have not come yet.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { StudioFollower } from '../electron/core/studio/follower.js';
import type { TeamRetry } from '../electron/core/studio/team.js';
import { freePort, freePorts, startNatsServer } from './support/nats-server.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('counts the waits for an unreachable server and for JetStream in one loop', async () => {
  const root = await mkdtemp(join(tmpdir(), 'tally-join-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const port = await freePort();
  const follower = new StudioFollower({
    url: new URL(`nats://127.0.0.1:${port}`),
    credentials: null,
    folder: join(root, 'Studio'),
    name: 'early-laptop',
    stateDir: join(root, 'member'),
    retry: { baseDelayMs: 20, maxDelayMs: 100 },
  });
  const waits: TeamRetry[] = [];
  let seen: () => void = () => undefined;
  follower.on('waiting', (info: TeamRetry) => {
    waits.push(info);
    seen();
  });
  const waitsOf = (code: string, count: number) =>
    new Promise<void>((resolve) => {
      seen = () => {
        if (waits.filter((w) => w.note?.code === code).length >= count) resolve();
      };
      seen();
    });
  const started = follower.start().catch((error: unknown) => error);
  cleanups.push(async () => {
    await follower.stop();
    await started;
  });
  // Nothing listens yet: the connection is refused.
  await waitsOf('teamConnectionRefused', 2);
  // A server comes, the first of a cluster whose other two are still away: the member connects, and its JetStream
  // requests go unanswered (no leader can be elected without a majority).
  const [route, ...peers] = await freePorts(3);
  const nats = await startNatsServer({
    port,
    args: [
      ...['--server_name', 'first', '--cluster_name', 'studio', '--cluster', `nats://127.0.0.1:${route}`],
      ...['--routes', peers.map((peer) => `nats://127.0.0.1:${peer}`).join(',')],
    ],
  });
  cleanups.push(() => nats.close());
  await waitsOf('teamJetStreamBusy', 2);
  await follower.stop();
  expect(await started).toBeInstanceOf(Error);
  const attempts = waits.map((w) => w.attempt);
  // One loop: its attempts go on counting across both kinds of failure (a nested one started again at 1).
  expect(attempts).toEqual(attempts.map((_, i) => i + 1));
  expect(waits.map((w) => w.note?.code)).toEqual([
    ...waits.filter((w) => w.note?.code === 'teamConnectionRefused').map(() => 'teamConnectionRefused'),
    ...waits.filter((w) => w.note?.code === 'teamJetStreamBusy').map(() => 'teamJetStreamBusy'),
  ]);
}, 40_000);
