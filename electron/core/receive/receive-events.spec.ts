/**
 * The receive service's one event stream: a face subscribes once, to the service, and hears every pipeline the
 * service opens (a reopened one too), never one it closed, with the payload a printer reads (issue 35).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openPaused } from '../../../tests/support/receive-pipeline.js';
import type { ReceivedRecording } from './receive-events.js';
import { ReceiveService } from './receive-service.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

async function webhook(url: string, id: string): Promise<void> {
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, url: `https://s3.amazonaws.com/svc/r-${id}/${id}.mp4`, filesize: '1000' }),
  });
  expect(answer.status).toBe(200);
}

describe('ReceiveService event stream', () => {
  it('reaches a face subscribed once, from each pipeline it opens, and never from one it closed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-receive-events-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const service = new ReceiveService({ face: 'listen', home: join(dir, 'home'), log: () => undefined });
    cleanups.push(() => service.stop());
    const received: ReceivedRecording[] = [];
    const duplicates: string[] = [];
    service.on('received', (job) => received.push(job));
    service.on('duplicate', (job) => duplicates.push(job.channelId));

    const first = await openPaused(service, dir);
    await webhook(first.pipeline.receiver.localUrl, 'morning-show');
    expect(received.map((j) => [j.channelId, j.announcedBytes])).toEqual([['morning-show', 1000]]);
    await webhook(first.pipeline.receiver.localUrl, 'morning-show');
    expect(duplicates).toEqual(['morning-show']);

    // A reopened pipeline (a settings change, a port move) reaches the same listeners; the closed one is detached.
    const second = await openPaused(service, dir);
    expect(second.pipeline).not.toBe(first.pipeline);
    expect(service.ready()?.localUrl).toBe(second.pipeline.receiver.localUrl);
    await webhook(second.pipeline.receiver.localUrl, 'evening-news');
    first.pipeline.emit('received', { ...received[0]!, channelId: 'from-a-closed-pipeline' } as never, []);
    expect(received.map((j) => j.channelId)).toEqual(['morning-show', 'evening-news']);
  });
});
