/**
 * A member mirrors small recordings a few at a time and a large one alone: the slots' rules with hand-held
 * transfers, then a real member against a real nats-server.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startNatsServer } from '../../../tests/support/nats-server.js';
import { announceRecording } from '../../../tests/support/studio-announce.js';
import { StudioFollower } from './follower.js';
import { LARGE_MIRROR_BYTES, MIRRORS_AT_ONCE, MirrorSlots } from './mirror-slots.js';

interface Held {
  key: string;
  bytes: number;
  finish: () => void;
  fail: (error: Error) => void;
}

/** Slots whose transfers run until the test finishes or fails them; `started` lists keys in start order. */
function heldSlots(limit = MIRRORS_AT_ONCE) {
  const started: string[] = [];
  const errors: unknown[] = [];
  const running = new Map<string, Held>();
  const slots = new MirrorSlots<{ key: string; bytes: number }>(
    limit,
    (item) =>
      new Promise<void>((resolve, reject) => {
        started.push(item.key);
        running.set(item.key, { ...item, finish: resolve, fail: reject });
      }),
    (item) => item,
    (error) => errors.push(error),
  );
  const finish = async (key: string) => {
    running.get(key)!.finish();
    running.delete(key);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { slots, started, errors, running, finish };
}

const small = (key: string) => ({ key, bytes: 1024 * 1024 });

describe('MirrorSlots', () => {
  it('starts up to three small recordings at once; the fourth waits for a place', async () => {
    const { slots, started, finish } = heldSlots();
    for (const key of ['a', 'b', 'c']) await slots.take(small(key));
    expect(started).toEqual(['a', 'b', 'c']);
    let fourthTaken = false;
    const fourth = slots.take(small('d')).then(() => (fourthTaken = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(fourthTaken).toBe(false);
    await finish('b');
    await fourth;
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('runs a large recording alone: after those in flight, and nothing beside it until it is done', async () => {
    const { slots, started, finish } = heldSlots();
    await slots.take(small('a'));
    let largeTaken = false;
    const large = slots.take({ key: 'big', bytes: LARGE_MIRROR_BYTES }).then(() => (largeTaken = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a']);
    await finish('a');
    expect(started).toEqual(['a', 'big']);
    expect(largeTaken).toBe(false); // the caller reads no further announcement meanwhile
    await finish('big');
    await large;
    await slots.take(small('b'));
    expect(started).toEqual(['a', 'big', 'b']);
  });

  it('never runs the same recording twice at once, and one failure does not stop the others', async () => {
    const { slots, started, errors, running, finish } = heldSlots();
    await slots.take(small('a'));
    const again = slots.take(small('a'));
    await slots.take(small('b'));
    expect(started).toEqual(['a', 'b']);
    running.get('a')!.fail(new Error('disk gone'));
    running.delete('a');
    await again;
    expect(started).toEqual(['a', 'b', 'a']);
    expect(errors).toEqual([new Error('disk gone')]);
    await finish('a');
    await finish('b');
    await slots.drain();
  });

  it('goes one at a time with a limit of 1 (a member capped by --max-rate)', async () => {
    const { slots, started, finish } = heldSlots(1);
    await slots.take(small('a'));
    const second = slots.take(small('b'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a']);
    await finish('a');
    await second;
    expect(started).toEqual(['a', 'b']);
  });
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a member catching up on small recordings (real nats-server)', () => {
  it('starts the next recordings before the first is saved, and saves every one whole', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tally-slots-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const channels = ['cam-1', 'cam-2', 'cam-3'];
    for (const channel of channels) {
      const file = join(root, `${channel}.mp4`);
      await writeFile(file, randomBytes(2 * 1024 * 1024 + 7));
      await announceRecording(nats.url, file, channel);
    }
    const follower = new StudioFollower({
      url: new URL(nats.url),
      credentials: null,
      folder: join(root, 'mirror'),
      name: 'member',
      stateDir: join(root, 'home'),
    });
    cleanups.push(() => follower.stop());
    const events: string[] = [];
    follower.on('started', (a) => events.push(`started ${a.channelId}`));
    const saved = new Promise<void>((resolve) => {
      let n = 0;
      follower.on('saved', (e) => {
        events.push(`saved ${e.channelId}`);
        if (++n === channels.length) resolve();
      });
    });
    await follower.start();
    await saved;
    // Mirrored one at a time, a recording started only once the one before it was saved.
    expect(events.indexOf('started cam-2')).toBeLessThan(events.indexOf('saved cam-1'));
    expect(events.filter((e) => e.startsWith('saved')).sort()).toEqual(channels.map((c) => `saved ${c}`));
  });
});
