/**
 * When the unfinished-job cap turns webhooks away (503), the app says so loudly: a notification and the tray's
 * attention, until room frees. `tally listen` prints the refusal; the tray app used to only log it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { MemorySecretStore } from '../credentials.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import { openSettingsStore } from '../settings.js';
import { createAppCore } from './app-core.js';
import type { AppCoreEvents, TraySnapshot } from './types.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function hook(pipeline: RecordingPipeline, id: string, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${pipeline.receiver.localUrl}`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ id, url }));
  });
}

it('notifies and asks for attention while webhooks are refused for too many unfinished recordings, until room frees', async () => {
  const origin = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end('recording'));
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => origin.close(resolve)));
  const base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const home = await mkdtemp(join(tmpdir(), 'tally-refusing-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  openSettingsStore(home).update({
    receiverPort: 0,
    recordingsFolder: join(home, 'recordings'),
    demoMode: false,
    downloadOrigins: [base],
  });
  const core = await createAppCore({
    home,
    secrets: new MemorySecretStore(),
    transport: 'ws',
    env: {},
    version: '9.9.9',
    pipelineOverrides: { maxUnfinishedJobs: 1, retryBaseMs: 20 },
  });
  cleanups.push(() => core.stop());
  const notes: AppCoreEvents['notify'][] = [];
  core.on('notify', (n) => notes.push(n));
  const trays: TraySnapshot[] = [];
  core.on('tray:snapshot', (t) => trays.push(t));
  await core.start();
  const pipeline = core.testOnly.pipeline() as RecordingPipeline;
  // Held, so the first recording stays unfinished and fills the cap of one.
  await pipeline.setDownloadsPaused(true);

  expect(await hook(pipeline, 'first', `${base}/first.mp4`)).toBe(200);
  expect(core.traySnapshot().attention).toBeNull();
  expect(await hook(pipeline, 'second', `${base}/second.mp4`)).toBe(503);
  expect(await hook(pipeline, 'third', `${base}/third.mp4`)).toBe(503);
  // One notice for the episode, not one per refused webhook.
  expect(notes.filter((n) => n.kind === 'refusing')).toEqual([
    {
      kind: 'refusing',
      title: 'New recordings are being refused',
      body: expect.stringMatching(/^1 recordings are still waiting to download, the most Tally accepts/),
    },
  ]);
  expect(core.traySnapshot().attention).toBe('New recordings are being refused');
  expect(trays.at(-1)?.attention).toBe('New recordings are being refused');

  // The first one downloads: room again, the attention goes away and webhooks are taken.
  const cleared = new Promise<void>((resolve) => {
    const off = core.on('tray:snapshot', (t) => {
      if (t.attention !== null) return;
      off();
      resolve();
    });
  });
  await pipeline.setDownloadsPaused(false);
  await cleared;
  expect(pipeline.inbox.unfinished).toBe(0);
  expect(await hook(pipeline, 'fourth', `${base}/fourth.mp4`)).toBe(200);
});
