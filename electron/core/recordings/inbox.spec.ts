import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { constants } from 'node:fs';
import { appendFile, mkdtemp, readFile, readdir, readlink, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flushes } from '../flush-priority.js';
import { Inbox, JOURNAL_FILE, JournalWriteError, UnknownJobError, recordingKey } from './inbox.js';
import type { JournalFile } from './inbox.js';
import { RETENTION_MS } from './types.js';
import type { NewRecording, RecordingJob } from './types.js';

let dir: string;
const open: Inbox[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-inbox-'));
});

afterEach(async () => {
  for (const inbox of open.splice(0)) await inbox.close();
  await rm(dir, { recursive: true, force: true });
});

async function openInbox(options?: Parameters<typeof Inbox.open>[1]): Promise<Inbox> {
  const inbox = await Inbox.open(dir, options);
  open.push(inbox);
  return inbox;
}

function rec(channelId: string, url = `https://s3.amazonaws.com/svc/r4nd/${channelId}.mp4`): NewRecording {
  return { channelId, url, announcedBytes: 1000, duration: '12', thumbnail: null, shape: 'json' };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function journalLines(): Promise<string[]> {
  return (await readFile(join(dir, JOURNAL_FILE), 'utf8')).split('\n').filter((line) => line !== '');
}

describe('Inbox.add', () => {
  it('creates a pending job with a 6 hour deadline and emits added after the write', async () => {
    const inbox = await openInbox();
    const added: RecordingJob[] = [];
    inbox.on('added', (job) => added.push(job));
    const now = new Date('2024-05-01T10:00:00.000Z');
    const { job, duplicate } = await inbox.add(rec('ch1'), now);
    expect(duplicate).toBe(false);
    expect(job).toMatchObject({
      channelId: 'ch1',
      state: 'pending',
      attempts: 0,
      receivedAt: '2024-05-01T10:00:00.000Z',
      deadline: new Date(now.getTime() + RETENTION_MS).toISOString(),
      announcedBytes: 1000,
      totalBytes: 1000,
      path: null,
      bytes: null,
      error: null,
      updatedAt: '2024-05-01T10:00:00.000Z',
    });
    expect(job.key).toBe(recordingKey(job.url));
    expect(added).toEqual([job]);
    expect(inbox.get(job.key)).toEqual(job);
    expect(await journalLines()).toHaveLength(1);
  });

  it('returns copies, so callers cannot change the stored job', async () => {
    const inbox = await openInbox();
    const { job } = await inbox.add(rec('ch1'));
    job.state = 'saved';
    (inbox.list()[0] as RecordingJob).state = 'failed';
    expect(inbox.get(job.key)?.state).toBe('pending');
  });

  it('detects the same URL as a duplicate, whatever the host case, default port or query order', async () => {
    const inbox = await openInbox();
    const base = 'https://s3.amazonaws.com/svc/r/ch.mp4?X-Amz-Date=1&X-Amz-Signature=abc';
    const first = await inbox.add(rec('ch', base));
    for (const url of [
      'HTTPS://S3.AmazonAWS.com:443/svc/r/ch.mp4?X-Amz-Date=1&X-Amz-Signature=abc',
      'https://s3.amazonaws.com/svc/r/ch.mp4?X-Amz-Signature=abc&X-Amz-Date=1',
      'https://s3.amazonaws.com/svc/r/ch.mp4?X-Amz-Date=1&X-Amz-Signature=abc#t=10',
    ]) {
      const again = await inbox.add({ ...rec('other-shape', url), shape: 'spec' });
      expect(again.duplicate, url).toBe(true);
      expect(again.job.key).toBe(first.job.key);
    }
    const signedAgain = await inbox.add(rec('ch', 'https://s3.amazonaws.com/svc/r/ch.mp4?X-Amz-Signature=zzz'));
    expect(signedAgain.duplicate).toBe(false);
    expect(inbox.list()).toHaveLength(2);
    expect(await journalLines()).toHaveLength(2);
  });

  it('writes once for concurrent adds of one recording and marks all but one duplicate', async () => {
    const inbox = await openInbox();
    const results = await Promise.all(Array.from({ length: 5 }, () => inbox.add(rec('same'))));
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.job.key)).size).toBe(1);
    expect(await journalLines()).toHaveLength(1);
  });

  it('treats an old-shape URL without the random segment as the same recording, within the retention window', async () => {
    const inbox = await openInbox();
    const now = new Date('2024-05-01T10:00:00Z');
    const first = await inbox.add(rec('show', 'https://s3.amazonaws.com/svc/Xy12/show.mp4'), now);
    const old = await inbox.add({ ...rec('show', 'https://s3.amazonaws.com/svc/show.mp4'), shape: 'get' }, now);
    expect(old).toMatchObject({ duplicate: true, job: { key: first.job.key } });
    const later = new Date(now.getTime() + RETENTION_MS + 1000);
    expect((await inbox.add(rec('show', 'https://s3.amazonaws.com/svc/show.mp4'), later)).duplicate).toBe(false);
  });

  it('keeps two recordings of a reused channel ID apart when both carry a random segment', async () => {
    const inbox = await openInbox();
    await inbox.add(rec('daily', 'https://s3.amazonaws.com/svc/aaa/daily.mp4'));
    const second = await inbox.add(rec('daily', 'https://s3.amazonaws.com/svc/bbb/daily.mp4'));
    expect(second.duplicate).toBe(false);
    const otherChannel = await inbox.add(rec('other', 'https://s3.amazonaws.com/svc/daily.mp4'));
    expect(otherChannel.duplicate).toBe(false);
    expect(inbox.list()).toHaveLength(3);
  });

  it("marks its commit urgent: downloads' flushes wait for it (issue 22)", async () => {
    const held = deferred();
    let writing = false;
    const inbox = await openInbox({
      wrapJournal: (file) => ({
        write: async (b, o, l) => {
          writing = true;
          await held.promise;
          return file.write(b, o, l);
        },
        datasync: () => file.datasync(),
        truncate: (n) => file.truncate(n),
        close: () => file.close(),
      }),
    });
    expect(flushes.busy).toBe(false);
    const added = inbox.add(rec('urgent'));
    while (!writing) await new Promise((resolve) => setImmediate(resolve));
    expect(flushes.busy).toBe(true);
    held.resolve();
    await added;
    expect(flushes.busy).toBe(false);
  });

  it('group-commits 500 concurrent adds: all resolve, far fewer fsyncs, all survive a reopen', async () => {
    let syncs = 0;
    const inbox = await openInbox({
      wrapJournal: (file) => ({
        write: (b, o, l) => file.write(b, o, l),
        datasync: () => {
          syncs += 1;
          return file.datasync();
        },
        truncate: (n) => file.truncate(n),
        close: () => file.close(),
      }),
    });
    const results = await Promise.all(Array.from({ length: 500 }, (_, i) => inbox.add(rec(`ch-${i}`))));
    expect(results.every((r) => !r.duplicate)).toBe(true);
    expect(syncs).toBeGreaterThan(0);
    expect(syncs).toBeLessThan(100);
    await inbox.close();
    const reopened = await openInbox();
    expect(reopened.replay).toMatchObject({ jobs: 500, lines: 500, skippedLines: 0, truncatedBytes: 0 });
    expect(new Set(reopened.list().map((job) => job.channelId)).size).toBe(500);
    expect(reopened.pending()).toHaveLength(500);
  });

  // One system call per commit (see DSYNC_FLAGS in inbox.ts); also after a compaction reopened the file.
  it.runIf(process.platform === 'linux')(
    'appends through an O_DSYNC descriptor, before and after compaction',
    async () => {
      const dsyncWriters = async (): Promise<number> => {
        let count = 0;
        for (const fd of await readdir('/proc/self/fd')) {
          const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
          if (target !== join(dir, JOURNAL_FILE)) continue;
          const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '');
          const flags = parseInt(/^flags:\s+([0-7]+)/m.exec(info)?.[1] ?? '0', 8);
          // The low two bits are the access mode (O_ACCMODE, which fs.constants does not export).
          if ((flags & 3) === constants.O_WRONLY && (flags & constants.O_DSYNC) !== 0) count += 1;
        }
        return count;
      };
      const inbox = await openInbox();
      await inbox.add(rec('a'));
      expect(await dsyncWriters()).toBe(1);
      await inbox.compact();
      await inbox.add(rec('b'));
      expect(await dsyncWriters()).toBe(1);
      await inbox.close();
      expect((await Inbox.open(dir)).list().map((j) => j.channelId)).toEqual(['a', 'b']);
    },
  );

  it('does not resolve (or show the job) before the fsync completes', async () => {
    const gate = deferred();
    const syncing = deferred();
    let hold = true;
    const inbox = await openInbox({
      wrapJournal: (file) => ({
        write: (b, o, l) => file.write(b, o, l),
        datasync: async () => {
          if (hold) {
            syncing.resolve();
            await gate.promise;
          }
          return file.datasync();
        },
        truncate: (n) => file.truncate(n),
        close: () => file.close(),
      }),
    });
    let settled = false;
    const adding = inbox.add(rec('slow')).then((r) => {
      settled = true;
      return r;
    });
    await syncing.promise;
    // The fsync is now in flight: a second add queues behind it rather than being written alone.
    const queued = inbox.add(rec('queued'));
    expect(settled).toBe(false);
    expect(inbox.list()).toEqual([]);
    hold = false;
    gate.resolve();
    expect((await adding).duplicate).toBe(false);
    await queued;
    expect(inbox.list().map((j) => j.channelId)).toEqual(['slow', 'queued']);
  });
});

describe('Inbox write failures', () => {
  function failingDisk(state: { fail: boolean; partial?: boolean }): (file: JournalFile) => JournalFile {
    return (file) => ({
      write: async (b, o, l) => {
        if (!state.fail) return file.write(b, o, l);
        if (state.partial) await file.write(b, o, Math.max(1, Math.floor(l / 2)));
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
      datasync: () => file.datasync(),
      truncate: (n) => file.truncate(n),
      close: () => file.close(),
    });
  }

  it('rejects every add of the failed batch with a clear error and acknowledges nothing', async () => {
    const state = { fail: false, partial: true };
    const inbox = await openInbox({ wrapJournal: failingDisk(state) });
    await inbox.add(rec('before'));
    state.fail = true;
    const failures = await Promise.allSettled([inbox.add(rec('lost-1')), inbox.add(rec('lost-2'))]);
    for (const failure of failures) {
      expect(failure.status).toBe('rejected');
      const reason = (failure as PromiseRejectedResult).reason as Error;
      expect(reason).toBeInstanceOf(JournalWriteError);
      expect(reason.message).toMatch(/ENOSPC.*Free disk space/);
    }
    expect(inbox.list().map((j) => j.channelId)).toEqual(['before']);
    state.fail = false;
    await inbox.add(rec('after'));
    // The rejected recording can be announced again and is then a new job, not a duplicate.
    expect((await inbox.add(rec('lost-1'))).duplicate).toBe(false);
    await inbox.close();
    const reopened = await openInbox();
    expect(reopened.replay.skippedLines).toBe(0);
    expect(reopened.list().map((j) => j.channelId)).toEqual(['before', 'after', 'lost-1']);
  });

  it('rejects updates that cannot be written and keeps the previous state', async () => {
    const state = { fail: false };
    const inbox = await openInbox({ wrapJournal: failingDisk(state) });
    const { job } = await inbox.add(rec('u'));
    state.fail = true;
    await expect(inbox.update(job.key, { state: 'downloading' })).rejects.toBeInstanceOf(JournalWriteError);
    expect(inbox.get(job.key)?.state).toBe('pending');
  });

  it('fails an fsync error the same way', async () => {
    const inbox = await openInbox({
      wrapJournal: (file) => ({
        write: (b, o, l) => file.write(b, o, l),
        datasync: () => Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })),
        truncate: (n) => file.truncate(n),
        close: () => file.close(),
      }),
    });
    await expect(inbox.add(rec('x'))).rejects.toThrow(/EIO/);
    expect(inbox.list()).toEqual([]);
  });
});

describe('Inbox.update', () => {
  it('applies patches durably, in call order, ignoring identity fields', async () => {
    const inbox = await openInbox();
    const { job } = await inbox.add(rec('u'));
    const updates: string[] = [];
    inbox.on('updated', (j) => updates.push(j.state));
    const [a, b] = await Promise.all([
      inbox.update(job.key, { state: 'downloading', attempts: 1 }),
      inbox.update(job.key, { bytes: 500, updatedAt: '2030-01-01T00:00:00.000Z' }),
      inbox.update(job.key, { ...({ url: 'https://evil.example.com/x', key: 'k', channelId: 'c' } as object) }),
    ]);
    expect(a?.state).toBe('downloading');
    expect(b).toMatchObject({ state: 'downloading', attempts: 1, bytes: 500, updatedAt: '2030-01-01T00:00:00.000Z' });
    expect(updates).toEqual(['downloading', 'downloading', 'downloading']);
    await inbox.update(job.key, { state: 'saved', path: '/tmp/u.mp4', bytes: 1000 });
    expect(inbox.pending()).toEqual([]);
    await inbox.close();
    const reopened = await openInbox();
    expect(reopened.get(job.key)).toMatchObject({
      key: job.key,
      url: job.url,
      channelId: 'u',
      state: 'saved',
      attempts: 1,
      path: '/tmp/u.mp4',
      bytes: 1000,
    });
  });

  it('rejects an unknown key', async () => {
    const inbox = await openInbox();
    await expect(inbox.update('nope', { state: 'saved' })).rejects.toBeInstanceOf(UnknownJobError);
  });
});

describe('Inbox replay', () => {
  it('counts unfinished jobs in constant time, across updates and a reopen', async () => {
    const first = await openInbox();
    const jobs = [];
    for (const id of ['u1', 'u2', 'u3']) jobs.push((await first.add(rec(id))).job);
    expect(first.unfinished).toBe(3);
    await first.update(jobs[0]?.key ?? '', { state: 'downloading' });
    expect(first.unfinished).toBe(3);
    await first.update(jobs[1]?.key ?? '', { state: 'saved', path: '/r/u2.mp4', bytes: 1000 });
    expect(first.unfinished).toBe(2);
    await first.close();
    open.splice(0);
    expect((await openInbox()).unfinished).toBe(2);
  });

  it('opens a journal larger than any string Node can hold, keeping every job around a giant damaged line', async () => {
    const first = await openInbox();
    for (const id of ['a', 'b', 'c']) await first.add(rec(id));
    await first.close();
    open.splice(0);
    const path = join(dir, JOURNAL_FILE);
    // A 600 MB run of zeros without a newline (sparse: no disk used), as a flood or a crash could leave: the old
    // reader turned the whole file into one string and failed with "Cannot create a string longer than ...".
    const { size } = await stat(path);
    await truncate(path, size + 600 * 1024 * 1024);
    await appendFile(path, '\n');
    const second = await openInbox();
    expect(second.replay).toMatchObject({ jobs: 3, lines: 3, skippedLines: 1 });
    await second.add(rec('d'));
    await second.close();
    open.splice(0);
    const third = await openInbox();
    expect(third.list().map((j) => j.channelId)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('cuts off an over-long unterminated tail without holding it', async () => {
    const first = await openInbox();
    await first.add(rec('kept'));
    await first.close();
    open.splice(0);
    const path = join(dir, JOURNAL_FILE);
    const { size } = await stat(path);
    await truncate(path, size + 5 * 1024 * 1024);
    const second = await openInbox();
    expect(second.replay).toMatchObject({ jobs: 1, truncatedBytes: 5 * 1024 * 1024 });
    expect((await stat(path)).size).toBe(size);
  });

  it('cuts off a torn last line after a crash and keeps working', async () => {
    const first = await openInbox();
    await first.add(rec('a'));
    await first.add(rec('b'));
    await first.close();
    const torn = '{"v":1,"job":{"key":"abc","channelId":"tor';
    await appendFile(join(dir, JOURNAL_FILE), torn);
    const reopened = await openInbox();
    expect(reopened.replay).toMatchObject({ jobs: 2, skippedLines: 0, truncatedBytes: torn.length });
    const text = await readFile(join(dir, JOURNAL_FILE), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text).not.toContain('"tor');
    await reopened.add(rec('c'));
    await reopened.close();
    const third = await openInbox();
    expect(third.replay).toMatchObject({ jobs: 3, skippedLines: 0, truncatedBytes: 0 });
  });

  it('keeps a complete last record whose newline was lost', async () => {
    const first = await openInbox();
    const { job } = await first.add(rec('a'));
    await first.close();
    const content = await readFile(join(dir, JOURNAL_FILE), 'utf8');
    await writeFile(join(dir, JOURNAL_FILE), content.slice(0, -1));
    const reopened = await openInbox();
    expect(reopened.get(job.key)?.channelId).toBe('a');
    await reopened.add(rec('b'));
    await reopened.close();
    expect((await openInbox()).replay).toMatchObject({ jobs: 2, skippedLines: 0 });
  });

  it('skips and counts corrupt lines in the middle instead of crashing', async () => {
    const first = await openInbox();
    const { job } = await first.add(rec('a'));
    await first.close();
    await appendFile(join(dir, JOURNAL_FILE), 'garbage\n{"v":1,"job":{"key":"x"}}\n{"v":2}\n\n');
    const more = await openInbox();
    await more.update(job.key, { state: 'downloading' });
    await more.add(rec('b'));
    await more.close();
    const reopened = await openInbox();
    expect(reopened.replay).toMatchObject({ jobs: 2, skippedLines: 3 });
    expect(reopened.get(job.key)?.state).toBe('downloading');
  });

  it('creates the folder and the journal with owner-only permissions', async () => {
    const nested = join(dir, 'a', 'b');
    const inbox = await Inbox.open(nested);
    open.push(inbox);
    await inbox.add(rec('x'));
    if (process.platform !== 'win32') expect((await stat(join(nested, JOURNAL_FILE))).mode & 0o077).toBe(0);
  });
});

describe('Inbox.compact', () => {
  it('rewrites one line per job atomically, and later writes land in the new file', async () => {
    const inbox = await openInbox();
    const { job } = await inbox.add(rec('a'));
    for (let i = 1; i <= 20; i++) await inbox.update(job.key, { bytes: i * 10 });
    await inbox.add(rec('b'));
    expect(await journalLines()).toHaveLength(22);
    await inbox.compact();
    expect(await journalLines()).toHaveLength(2);
    await inbox.update(job.key, { state: 'saved' });
    expect(await journalLines()).toHaveLength(3);
    await inbox.close();
    const reopened = await openInbox();
    expect(reopened.get(job.key)).toMatchObject({ bytes: 200, state: 'saved' });
    expect(reopened.list()).toHaveLength(2);
  });

  it('drops finished jobs older than keepFinishedMs when rewriting, and keeps unfinished ones whatever their age', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const inbox = await openInbox({ keepFinishedMs: 60_000, now: () => now });
    const old = (await inbox.add(rec('old-saved'), new Date(now))).job;
    const stuck = (await inbox.add(rec('old-pending'), new Date(now))).job;
    await inbox.update(old.key, { state: 'saved', updatedAt: new Date(now).toISOString() });
    now += 120_000;
    const fresh = (await inbox.add(rec('fresh-saved'), new Date(now))).job;
    await inbox.update(fresh.key, { state: 'saved', updatedAt: new Date(now).toISOString() });

    await inbox.compact();
    expect(
      inbox
        .list()
        .map((j) => j.channelId)
        .sort(),
    ).toEqual(['fresh-saved', 'old-pending']);
    expect(inbox.get(stuck.key)?.state).toBe('pending');
    await inbox.close();
    const reopened = await openInbox({ keepFinishedMs: 60_000, now: () => now });
    expect(
      reopened
        .list()
        .map((j) => j.channelId)
        .sort(),
    ).toEqual(['fresh-saved', 'old-pending']);
    // A pruned recording announced again is new work, not a duplicate of something forgotten.
    expect((await reopened.add(rec('old-saved'), new Date(now))).duplicate).toBe(false);
  });

  it('compacts by itself when the journal grows past the limit, without losing concurrent adds', async () => {
    const inbox = await openInbox({ compactAfterLines: 30 });
    const { job } = await inbox.add(rec('hot'));
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 60; i++) {
      work.push(inbox.update(job.key, { bytes: i }));
      if (i % 10 === 0) work.push(inbox.add(rec(`side-${i}`)));
    }
    await Promise.all(work);
    // The writer runs a due compaction before the next batch, so after one more add it has certainly happened.
    await inbox.add(rec('final'));
    const lines = (await journalLines()).length;
    expect(lines).toBeLessThanOrEqual(31);
    await inbox.close();
    const reopened = await openInbox();
    expect(reopened.replay.lines).toBe(lines);
    expect(reopened.list()).toHaveLength(8);
    expect(reopened.get(job.key)?.bytes).toBe(59);
  });
});

describe('Inbox.close', () => {
  it('finishes queued writes, then refuses new ones', async () => {
    const inbox = await openInbox();
    const pending = inbox.add(rec('last'));
    await inbox.close();
    expect((await pending).duplicate).toBe(false);
    await expect(inbox.add(rec('too-late'))).rejects.toBeInstanceOf(JournalWriteError);
    await expect(inbox.compact()).rejects.toBeInstanceOf(JournalWriteError);
    const reopened = await openInbox();
    expect(reopened.list().map((j) => j.channelId)).toEqual(['last']);
  });
});

describe('Inbox memory (issue 10: flat as jobs grow)', () => {
  /** A job as long as the webhook's caps allow: ~2 KB that must stay on disk, not in memory. */
  function bigLine(i: number): string {
    const at = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString();
    const job = {
      key: i.toString(16).padStart(32, '0'),
      channelId: `${'c'.repeat(240)}-${i}`,
      url: `https://s3.amazonaws.com/svc/${'r'.repeat(1400)}/${i}.mp4`,
      receivedAt: at,
      deadline: at,
      announcedBytes: 1000,
      duration: null,
      thumbnail: null,
      shape: 'json',
      state: i % 2 ? 'saved' : 'pending',
      attempts: 0,
      path: null,
      bytes: null,
      totalBytes: 1000,
      error: null,
      updatedAt: at,
    };
    return `${JSON.stringify({ v: 1, job })}\n`;
  }

  it('holds an index, not the jobs: 30,000 worst-case jobs add a few MB of heap, and every job reads back', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const jobs = 30_000;
    await writeFile(join(dir, JOURNAL_FILE), Array.from({ length: jobs }, (_, i) => bigLine(i)).join(''));
    gc();
    const before = process.memoryUsage().heapUsed;
    const inbox = await openInbox({ compactAfterLines: Number.MAX_SAFE_INTEGER });
    gc();
    const grown = (process.memoryUsage().heapUsed - before) / 1e6;
    // The jobs themselves are 60 MB of text; holding them (the old inbox) grew the heap by about 70 MB.
    expect(grown).toBeLessThan(15);
    expect(inbox.replay.jobs).toBe(jobs);
    expect(inbox.unfinished).toBe(jobs / 2);
    // Beyond the cache, from the journal: the right job, oldest first, filters on the index.
    expect(inbox.get((12_345).toString(16).padStart(32, '0'))?.channelId).toBe(`${'c'.repeat(240)}-12345`);
    expect(inbox.keys(['pending']).length).toBe(jobs / 2);
    expect(inbox.keys().slice(0, 2)).toEqual([0, 1].map((i) => i.toString(16).padStart(32, '0')));
    expect(inbox.pending().every((job, i) => job.channelId === `${'c'.repeat(240)}-${i * 2}`)).toBe(true);
  });

  it('reads jobs back from their new place after a compaction and after updates', async () => {
    await writeFile(join(dir, JOURNAL_FILE), Array.from({ length: 2_500 }, (_, i) => bigLine(i)).join(''));
    const keep = { compactAfterLines: Number.MAX_SAFE_INTEGER, keepFinishedMs: Number.MAX_SAFE_INTEGER };
    const inbox = await openInbox(keep);
    const key = (7).toString(16).padStart(32, '0');
    await inbox.update(key, { error: 'é → 日本 (multi-byte before later lines)' });
    await inbox.add(rec('after-update'));
    await inbox.compact();
    const other = (2_001).toString(16).padStart(32, '0');
    expect(inbox.get(key)?.error).toBe('é → 日本 (multi-byte before later lines)');
    expect(inbox.get(other)?.channelId).toBe(`${'c'.repeat(240)}-2001`);
    expect(inbox.list()).toHaveLength(2_501);
    await inbox.close();
    open.splice(0);
    const reopened = await openInbox(keep);
    expect(reopened.get(key)?.error).toBe('é → 日本 (multi-byte before later lines)');
    expect(reopened.replay.jobs).toBe(2_501);
  });
});
