/**
 * Issue 20 case 10: the legacy webhook form (`GET ?chid=X&url=…`, a URL without the random segment) is matched to
 * the current form so one recording announced both ways is downloaded once. A forged legacy webhook arriving
 * first used to make the genuine one a "duplicate", so the genuine recording was never downloaded while the
 * forged job retried a 403 until the deadline. Now the current form gets its own job unless the legacy one was saved
 * (the two are twins: see electron/core/pipeline/legacy-twins.spec.ts for how one save stands for both).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Inbox } from './inbox.js';
import type { NewRecording } from './types.js';

let dir: string;
let inbox: Inbox;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-alias-'));
  inbox = await Inbox.open(dir);
});
afterEach(async () => {
  await inbox.close();
  await rm(dir, { recursive: true, force: true });
});

const legacy: NewRecording = {
  channelId: 'ch-9',
  url: 'https://s3.amazonaws.com/svc/ch-9.mp4',
  announcedBytes: null,
  duration: null,
  thumbnail: null,
  shape: 'query',
};
const genuine: NewRecording = { ...legacy, url: 'https://s3.amazonaws.com/svc/Xy12z/ch-9.mp4', shape: 'json' };

describe('legacy-form webhooks', () => {
  it('never shadow a later genuine webhook while the legacy job is not saved', async () => {
    const first = await inbox.add(legacy);
    await inbox.update(first.job.key, {
      state: 'pending',
      error: 'The download server s3.amazonaws.com answered 403.',
    });
    const second = await inbox.add(genuine);
    expect(second.duplicate).toBe(false);
    expect(second.job.url).toBe(genuine.url);
    expect(inbox.pending().map((j) => j.url)).toEqual([legacy.url, genuine.url]);
  });

  it('a saved legacy job still makes the current form a duplicate, and the legacy form after the current one too', async () => {
    const first = await inbox.add(legacy);
    await inbox.update(first.job.key, { state: 'saved', path: '/rec/ch-9.mp4' });
    expect((await inbox.add(genuine)).duplicate).toBe(true);

    const other = { ...genuine, channelId: 'ch-10', url: 'https://s3.amazonaws.com/svc/Ab34c/ch-10.mp4' };
    await inbox.add(other);
    expect(
      (await inbox.add({ ...other, url: 'https://s3.amazonaws.com/svc/ch-10.mp4', shape: 'query' })).duplicate,
    ).toBe(true);
  });

  it('the two forms arriving at the same moment are still twins (or a duplicate), never two strangers', async () => {
    const [first, second] = await Promise.all([inbox.add(legacy), inbox.add(genuine)]);
    expect(first.duplicate).toBe(false);
    expect(second).toMatchObject({ duplicate: false, job: { twin: first.job.key } });
    expect(inbox.twinOf(first.job.key)).toBe(second.job.key);

    const other = { ...genuine, channelId: 'ch-11', url: 'https://s3.amazonaws.com/svc/Cd56e/ch-11.mp4' };
    const [current, old] = await Promise.all([
      inbox.add(other),
      inbox.add({ ...other, url: 'https://s3.amazonaws.com/svc/ch-11.mp4', shape: 'query' }),
    ]);
    expect(current.duplicate).toBe(false);
    expect(old).toMatchObject({ duplicate: true, job: { key: current.job.key } });
  });
});
