/**
 * Issue 31 at the journal: a URL is not a recording. A webhook for a URL whose job is saved is a duplicate only
 * while the origin (a real loopback HTTP server, asked through the real probe) still serves the object version that
 * job saved; the versions survive a restart; an unfinished job, a gone object and an announced size decide without
 * or despite the origin as the rule says; an origin that cannot be asked never costs a recording.
 */
import { lineLogger } from '../logger.js';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { originIdentifier } from '../download/origin-probe.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { Inbox } from './inbox.js';
import type { NewRecording, RecordingJob } from './types.js';

let server: Server;
let origin: string;
/** What the origin serves at the legacy URL now. */
let current: { status: number; etag: string; size: number };
let asked: (string | undefined)[];
let dir: string;
let inbox: Inbox;
let warnings: string[];

async function openInbox(): Promise<Inbox> {
  const policy = DownloadOriginPolicy.fromEnv({ TALLY_DOWNLOAD_ORIGINS: origin });
  const log = lineLogger((line) => void warnings.push(line));
  return Inbox.open(dir, { identify: originIdentifier(policy, { timeoutMs: 2_000 }), log });
}

beforeEach(async () => {
  current = { status: 200, etag: '"aaaa"', size: 1000 };
  asked = [];
  warnings = [];
  server = createServer((req, res) => {
    asked.push(req.headers.range);
    if (current.status !== 200) {
      res.writeHead(current.status).end();
      return;
    }
    res.writeHead(206, {
      etag: current.etag,
      'content-range': `bytes 0-0/${current.size}`,
      'content-length': '1',
      'last-modified': 'Sat, 28 Nov 2026 05:00:00 GMT',
    });
    res.end('x');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'tally-versions-'));
  inbox = await openInbox();
});

afterEach(async () => {
  await inbox.close();
  server.closeAllConnections();
  server.close();
  await rm(dir, { recursive: true, force: true });
});

const webhook = (patch: Partial<NewRecording> = {}): NewRecording => ({
  channelId: 'morning-show',
  url: `${origin}/svc/morning-show.mp4`,
  announcedBytes: null,
  duration: null,
  thumbnail: null,
  shape: 'get',
  ...patch,
});

/** What the download queue writes when it saves a job (the object version it downloaded). */
function saveAs(job: RecordingJob, etag: string, size = 1000): Promise<RecordingJob> {
  return inbox.update(job.key, {
    state: 'saved',
    path: `/rec/${job.key}.mp4`,
    bytes: size,
    checks: ['size', 'md5'],
    origin: { etag, lastModified: 'Sat, 28 Nov 2026 05:00:00 GMT', bytes: size },
  });
}

describe('a URL already saved (issue 31)', () => {
  it('is a duplicate while the origin serves the saved version, a new job for another, across a restart', async () => {
    const first = await inbox.add(webhook());
    // Unfinished: a duplicate without asking the origin.
    expect((await inbox.add(webhook())).duplicate).toBe(true);
    expect(asked).toEqual([]);
    await saveAs(first.job, '"aaaa"');

    // The same object: a duplicate, after one ranged look.
    expect(await inbox.add(webhook())).toMatchObject({ duplicate: true, job: { key: first.job.key } });
    expect(asked).toEqual(['bytes=0-0']);

    // The next day's object under the same URL: a new job, keyed after the first.
    current = { status: 200, etag: '"bbbb"', size: 1000 };
    const second = await inbox.add(webhook());
    expect(second).toMatchObject({ duplicate: false, job: { key: `${first.job.key}-2`, follows: first.job.key } });
    await saveAs(second.job, '"bbbb"');

    await inbox.close();
    inbox = await openInbox();
    // After a restart the latest version is the one compared.
    expect(await inbox.add(webhook())).toMatchObject({ duplicate: true, job: { key: second.job.key } });
    current = { status: 200, etag: '"cccc"', size: 1000 };
    const third = await inbox.add(webhook());
    expect(third).toMatchObject({ duplicate: false, job: { key: `${first.job.key}-3`, follows: second.job.key } });
    expect(inbox.list().map((j) => j.key)).toEqual([first.job.key, second.job.key, third.job.key]);
  });

  it('a different announced size is a new recording with no question asked', async () => {
    const first = await inbox.add(webhook({ announcedBytes: 1000, shape: 'json' }));
    await saveAs(first.job, '"aaaa"');
    const next = await inbox.add(webhook({ announcedBytes: 2000, shape: 'json' }));
    expect(next.duplicate).toBe(false);
    expect(asked).toEqual([]);
  });

  it('nothing at the URL (403/404/410) is not the saved object: the next recording may not be served yet', async () => {
    // Taken once as "the saved one repeated": day 2's webhook, arriving before its object was readable, was
    // answered `duplicate` and day 2 was never downloaded.
    for (const status of [403, 404, 410]) {
      const before = inbox.list().at(-1);
      const first = before ? { job: before } : await inbox.add(webhook());
      await saveAs(first.job, '"aaaa"');
      current = { status, etag: '', size: 0 };
      const next = await inbox.add(webhook());
      expect(next, `origin answering ${status}`).toMatchObject({ duplicate: false, job: { follows: first.job.key } });
    }
    expect(inbox.list()).toHaveLength(4);
  });

  it('an origin that cannot be asked makes a new job, said in the log', async () => {
    const first = await inbox.add(webhook());
    await saveAs(first.job, '"aaaa"');
    current = { status: 500, etag: '', size: 0 };
    const next = await inbox.add(webhook());
    expect(next.duplicate).toBe(false);
    expect(warnings.join('\n')).toMatch(/could not ask the origin whether morning-show is the recording already saved/);
  });

  it('a job still unfinished past its 6 hours (retrying, gone, refused) or expired does not absorb the next day', async () => {
    const day1 = new Date('2026-11-27T05:00:00Z');
    const day2 = new Date('2026-11-28T05:00:00Z');
    const states = ['pending', 'downloading', 'gone', 'failed', 'expired'] as const;
    for (const [i, state] of states.entries()) {
      const rec = webhook({ url: `${origin}/svc/show-${i}.mp4`, channelId: `show-${i}` });
      const first = await inbox.add(rec, day1);
      await inbox.update(first.job.key, { state, error: 'still trying' });
      // Within its 6 hours the same URL is the same recording, announced again: no question asked.
      const again = await inbox.add(rec, new Date(day1.getTime() + 60_000));
      if (state === 'expired') expect(again.duplicate, state).toBe(false);
      else expect(again, state).toMatchObject({ duplicate: true, job: { key: first.job.key } });
      // The next day: a new recording under the same URL (the first one's is deleted by now), a job of its own.
      const next = await inbox.add(rec, day2);
      expect(next, state).toMatchObject({ duplicate: false, job: { follows: again.job.key, state: 'pending' } });
    }
    // None of it needed the origin: an unfinished or expired job says nothing about what the URL names now.
    expect(asked).toEqual([]);
  });

  it('one webhook repeated at once asks the origin once and stays one recording', async () => {
    const first = await inbox.add(webhook());
    await saveAs(first.job, '"aaaa"');
    const answers = await Promise.all(Array.from({ length: 10 }, () => inbox.add(webhook())));
    expect(answers.every((a) => a.duplicate && a.job.key === first.job.key)).toBe(true);
    expect(asked).toEqual(['bytes=0-0']);
  });
});
