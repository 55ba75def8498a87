/**
 * The receive service judges the health from what the pipeline's events told it, never by reading the journal
 * back: with more unfinished recordings than the inbox keeps parsed (1,000), every judgement used to read and
 * parse the rest from disk, holding the event loop (and every webhook's answer) 85-200 ms (issue 22).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { ReceiveService } from './receive-service.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

async function openService(): Promise<{ service: ReceiveService; url: string; inboxReads: () => number }> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-receive-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const service = new ReceiveService({ face: 'listen', home: join(dir, 'home'), log: () => undefined });
  cleanups.push(() => service.close());
  const { pipeline } = await service.open(
    {
      stateDir: join(dir, 'state'),
      folder: join(dir, 'recordings'),
      policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
      port: 0,
    },
    { paused: true, demo: false, attach: () => () => undefined },
  );
  let reads = 0;
  const where = pipeline.inbox.where.bind(pipeline.inbox);
  pipeline.inbox.where = (keep) => {
    reads += 1;
    return where(keep);
  };
  return { service, url: pipeline.receiver.localUrl, inboxReads: () => reads };
}

async function webhooks(url: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, async (_, j) => {
        const id = `ch-${i + j}`;
        const answer = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id, url: `https://s3.amazonaws.com/svc/r${i + j}/${id}.mp4`, filesize: '1000' }),
        });
        expect(answer.status).toBe(200);
      }),
    );
  }
}

describe('ReceiveService health', () => {
  it('judges 1,200 unfinished recordings without reading the inbox, and follows their changes', async () => {
    const { service, url, inboxReads } = await openService();
    await webhooks(url, 1200);
    const view = await service.refresh();
    expect(inboxReads()).toBe(0);
    expect(view.problems).toBe(0);

    const pipeline = service.pipeline;
    const key = pipeline?.inbox.keys(['pending'])[0] as string;
    await pipeline?.inbox.update(key, { state: 'failed', error: 'The recording was refused.' });
    const after = await service.refresh();
    expect(after.problems).toBe(1);
    expect(after.components.find((c) => c.id === 'downloads')?.state).toBe('error');
    expect(inboxReads()).toBe(0);
  });
});
