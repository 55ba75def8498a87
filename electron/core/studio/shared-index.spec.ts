import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsServer } from '../../../tests/support/nats-server.js';
import type { Announcement } from './announcement.js';
import { INDEX_BUCKET, announcementsBetween, indexAnnouncement } from './shared-index.js';

const announcement = (n: number): Announcement => ({
  v: 1,
  identity: `rec-index-${n}`,
  kind: 'server',
  channelId: `index-${n}`,
  fileName: `index-${n}.mp4`,
  bytes: 1,
  sha256: 'a'.repeat(64),
  savedAt: new Date(0).toISOString(),
  store: { kind: 'nats', bucket: 'tally-studio', name: `rec-index-${n}` },
});

describe('the team index on a real server', () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let watcher: NatsConnection;
  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connect({ servers: server.url });
    watcher = await connect({ servers: server.url });
  });
  afterAll(async () => {
    await nc?.close();
    await watcher?.close();
    await server?.close();
  });

  /** The JetStream API requests about the index's stream (its info, creation, update) seen from now on. */
  const setUpRequests = async (): Promise<{ seen: () => number; stop: () => void }> => {
    let seen = 0;
    const subs: Subscription[] = ['INFO', 'CREATE', 'UPDATE'].map((op) =>
      watcher.subscribe(`$JS.API.STREAM.${op}.KV_${INDEX_BUCKET}`, { callback: () => void (seen += 1) }),
    );
    await watcher.flush();
    return { seen: () => seen, stop: () => subs.forEach((s) => s.unsubscribe()) };
  };

  // Setting the bucket up is a round trip (or two) and the server's work: a receiver paid it on every
  // announcement (issue 34); once per connection is enough.
  it('sets the bucket up once for a run of announcements, and keeps each', async () => {
    const requests = await setUpRequests();
    for (let n = 1; n <= 6; n += 1) await indexAnnouncement(nc, n, announcement(n), 60 * 60_000);
    await watcher.flush();
    await nc.flush();
    requests.stop();
    expect(requests.seen()).toBeLessThanOrEqual(2);
    const found = await announcementsBetween(nc, 0, 7);
    expect(found.map((a) => a.identity)).toEqual([1, 2, 3, 4, 5, 6].map((n) => `rec-index-${n}`));
  });

  it('sets the bucket up again when it was removed since', async () => {
    await indexAnnouncement(nc, 10, announcement(10), 60 * 60_000);
    await (await jetstreamManager(nc)).streams.delete(`KV_${INDEX_BUCKET}`);
    await indexAnnouncement(nc, 11, announcement(11), 60 * 60_000);
    expect((await announcementsBetween(nc, 9, 12)).map((a) => a.identity)).toEqual(['rec-index-11']);
  });
});

describe('a member coming back', () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let watcher: NatsConnection;
  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connect({ servers: server.url });
    watcher = await connect({ servers: server.url });
  });
  afterAll(async () => {
    await nc?.close();
    await watcher?.close();
    await server?.close();
  });

  // One get per missed sequence, each waiting for the one before: a member away for a while paid a round trip
  // per sequence before it mirrored anything (issue 34). The gets go several at once, and the answer is the same:
  // the newest ones, oldest first, gaps skipped.
  it('asks for the missed sequences several at a time', async () => {
    for (const n of [2, 3, 5, 40, 41, 77]) await indexAnnouncement(nc, n, announcement(n), 60 * 60_000);
    // Every index request from the member's connection and every answer to it, as the server passes them on.
    let asked = 0;
    let answered = 0;
    let mostAtOnce = 0;
    const onRequest = () => {
      asked += 1;
      mostAtOnce = Math.max(mostAtOnce, asked - answered);
    };
    // A direct get (the subject named in the request's subject or in its body) or a stream message get.
    const requests = [
      `$JS.API.DIRECT.GET.KV_${INDEX_BUCKET}`,
      `$JS.API.DIRECT.GET.KV_${INDEX_BUCKET}.>`,
      `$JS.API.STREAM.MSG.GET.KV_${INDEX_BUCKET}`,
    ].map((subject) => watcher.subscribe(subject, { callback: onRequest }));
    const answers = watcher.subscribe('_INBOX.>', { callback: () => void (answered += 1) });
    await watcher.flush();
    const found = await announcementsBetween(nc, 1, 80);
    await nc.flush();
    await watcher.flush();
    requests.forEach((r) => r.unsubscribe());
    answers.unsubscribe();
    expect(found.map((a) => a.identity)).toEqual([2, 3, 5, 40, 41, 77].map((n) => `rec-index-${n}`));
    expect(asked).toBe(78);
    expect(mostAtOnce).toBeGreaterThan(4);
  });
});
