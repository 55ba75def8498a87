import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { RecordingPipeline, type PipelineOptions, type PipelineUploadedEvent } from './pipeline.js';

const dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function options(): Promise<PipelineOptions> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-pipeline-uploads-'));
  dirs.push(dir);
  return {
    stateDir: join(dir, 'state'),
    folder: join(dir, 'recordings'),
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
    uploads: { subfolder: 'web', maxBytes: 1024 * 1024, allowedOrigins: () => ['https://app.example'] },
  };
}

describe('RecordingPipeline with uploads', () => {
  it('serves the upload URL, re-emits uploads and lists them again after a restart', async () => {
    const opts = await options();
    const pipeline = await RecordingPipeline.open(opts);
    const ready = await pipeline.start();
    expect(ready.localUploadUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/uploads\/[A-Za-z0-9_-]{22}$/);
    // No tunnel: the local URL is the recordUrl to use.
    expect(ready.uploadUrl).toBe(ready.localUploadUrl);
    expect(ready.localUploadUrl).not.toContain(pipeline.receiver.hookPath.split('/')[2]);

    const uploaded = once(pipeline, 'uploaded');
    const answer = await fetch(ready.uploadUrl as string, {
      method: 'POST',
      headers: { 'Content-Type': 'audio/webm', 'X-FILENAME': 'svc.abc123-1.ogg', Origin: 'https://app.example' },
      body: new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, 1, 2, 3]),
    });
    expect(answer.status).toBe(201);
    const [event] = (await uploaded) as [PipelineUploadedEvent];
    expect(event).toMatchObject({
      path: join(opts.folder, 'web', 'svc.abc123-1.webm'),
      fileName: 'svc.abc123-1.webm',
      bytes: 7,
      contentType: 'audio/webm',
      origin: 'https://app.example',
    });
    expect(Date.parse(event.receivedAt)).not.toBeNaN();
    expect((await readFile(event.path)).length).toBe(7);
    await pipeline.stop();

    const again = await RecordingPipeline.open(opts);
    expect(again.uploadLog?.list().map((r) => r.fileName)).toEqual(['svc.abc123-1.webm']);
    const second = await again.start();
    // The uploads token persists, so a recordUrl pasted into the web app keeps working.
    expect(second.localUploadUrl?.replace(/:\d+\//, ':P/')).toBe(ready.localUploadUrl?.replace(/:\d+\//, ':P/'));
    await again.stop();
  });

  it('keeps the demo uploads folder to its newest uploads (keepNewestRecordings), parts and the parent untouched', async () => {
    const opts = { ...(await options()), keepNewestRecordings: 2 };
    const web = join(opts.folder, 'web');
    await mkdir(web, { recursive: true });
    await writeFile(join(opts.folder, 'a-download.mp4'), 'saved earlier');
    const pipeline = await RecordingPipeline.open(opts);
    const ready = await pipeline.start();
    // Written after the route removed an earlier run's parts: one in progress now, which must survive.
    await writeFile(join(web, '.in-flight.webm.part'), 'part');
    for (let i = 0; i < 5; i += 1) {
      const uploaded = once(pipeline, 'uploaded');
      const answer = await fetch(ready.uploadUrl as string, {
        method: 'POST',
        headers: { 'Content-Type': 'audio/webm', 'X-FILENAME': `svc.ch${i}-1.webm`, Origin: 'https://app.example' },
        body: new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, i]),
      });
      expect(answer.status).toBe(201);
      await uploaded;
    }
    // stop() waits for the prune that the last upload started.
    await pipeline.stop();
    const names = await readdir(web);
    expect(names.filter((n) => n.endsWith('.webm'))).toHaveLength(2);
    expect(names).toContain('.in-flight.webm.part');
    expect(await readFile(join(opts.folder, 'a-download.mp4'), 'utf8')).toBe('saved earlier');
  });

  it('has no upload route or URL when uploads are off', async () => {
    const { uploads: _off, ...opts } = await options();
    const pipeline = await RecordingPipeline.open(opts);
    const ready = await pipeline.start();
    expect(ready.uploadUrl).toBeNull();
    expect(pipeline.uploadLog).toBeNull();
    const answer = await fetch(`${pipeline.receiver.origin}/uploads/${'a'.repeat(22)}`, { method: 'POST' });
    expect(answer.status).toBe(404);
    await pipeline.stop();
  });
});
