/**
 * Guards of the app core (issue 10): when the unfinished-job cap turns webhooks away (503) the app says so
 * loudly, a notification and the tray's attention until room frees (`tally listen` prints it; the tray app used
 * to only log it); and "open" hands only media files to the desktop, whatever arrived.
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
import { CoreParts } from '../../../tests/support/app/core-parts.js';
import { createAppCore, type AppCore } from './app-core.js';
import type { AppCoreEvents, PlatformHooks, TraySnapshot } from './types.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function post(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const hook = (pipeline: RecordingPipeline, id: string, url: string): Promise<number> =>
  post(pipeline.receiver.localUrl, { 'content-type': 'application/json' }, JSON.stringify({ id, url }));

/** A started core without demo or credentials, receiving on a free port into a temp folder. */
async function startCore(
  settings: { downloadOrigins?: string[] } = {},
  extra: { maxUnfinishedJobs?: number; hooks?: PlatformHooks; maxUploads?: number } = {},
): Promise<{ core: AppCore; pipeline: RecordingPipeline; home: string }> {
  const home = await mkdtemp(join(tmpdir(), 'tally-guards-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  openSettingsStore(home).update({
    receiverPort: 0,
    recordingsFolder: join(home, 'recordings'),
    demoMode: false,
    ...settings,
  });
  const parts = new CoreParts();
  const core = await createAppCore({
    home,
    secrets: new MemorySecretStore(),
    transport: 'ws',
    env: {},
    version: '9.9.9',
    openPipeline: parts.options.openPipeline,
    ...(extra.hooks ? { hooks: extra.hooks } : {}),
    pipelineOverrides: {
      retryBaseMs: 20,
      ...(extra.maxUnfinishedJobs ? { maxUnfinishedJobs: extra.maxUnfinishedJobs } : {}),
      ...(extra.maxUploads !== undefined
        ? { uploads: { allowedOrigins: () => [], maxConcurrent: extra.maxUploads } }
        : {}),
    },
  });
  cleanups.push(() => core.stop());
  await core.start();
  return { core, pipeline: parts.pipeline, home };
}

it('notifies and asks for attention while webhooks are refused for too many unfinished recordings, until room frees', async () => {
  const origin = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end('recording'));
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => origin.close(resolve)));
  const base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const { core, pipeline } = await startCore({ downloadOrigins: [base] }, { maxUnfinishedJobs: 1 });
  const notes: AppCoreEvents['notify'][] = [];
  core.on('notify', (n) => notes.push(n));
  const trays: TraySnapshot[] = [];
  core.on('tray:snapshot', (t) => trays.push(t));
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
      body: expect.stringMatching(/^1 recording is still waiting to download, the most Tally accepts/),
      bodyNotes: [{ code: 'webhooksFull', params: { count: 1 } }],
      text: { title: { key: 'refusingTitle' } },
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

it('says an upload refused for too many at once is a refused client recording, not refused webhooks', async () => {
  // No upload may run at once: every upload gets the 503 that the concurrency cap answers.
  const { core, pipeline } = await startCore({}, { maxUploads: 0 });
  const notes: AppCoreEvents['notify'][] = [];
  core.on('notify', (n) => notes.push(n));
  const uploadUrl = `${pipeline.receiver.origin}${pipeline.receiver.routePath('uploads')}`;
  const refused = new Promise<void>((resolve) => core.on('notify', (n) => n.kind === 'refused' && resolve()));
  expect(await post(uploadUrl, { 'content-type': 'audio/ogg', 'x-filename': 'svc.showLL.ogg' }, 'OggS')).toBe(503);
  await refused;
  expect(notes.map((n) => n.kind)).toEqual(['refused']);
  expect(core.traySnapshot().attention).not.toBe('New recordings are being refused');
});

it('opens only media files: an upload of another type is kept and can be revealed, never launched', async () => {
  const opened: string[] = [];
  const revealed: string[] = [];
  const hooks: PlatformHooks = { openFile: (p) => void opened.push(p), revealFile: (p) => void revealed.push(p) };
  const { core, pipeline } = await startCore({}, { hooks });
  const uploadUrl = `${pipeline.receiver.origin}${pipeline.receiver.routePath('uploads')}`;
  const upload = (type: string, name: string) => post(uploadUrl, { 'content-type': type, 'x-filename': name }, 'MZ');
  expect(await upload('application/x-msdownload', 'setup.exe')).toBe(201);
  expect(await upload('audio/ogg', 'voice.ogg')).toBe(201);
  const listed = await core.handlers['recordings:list']();
  const byExt = (ext: string) => listed.find((r) => r.fileName?.endsWith(ext))?.key ?? '';
  expect(listed.map((r) => r.fileName).sort()).toEqual(['setup.bin', 'voice.ogg']);

  expect(await core.handlers['recordings:open'](byExt('.bin'))).toEqual({ ok: false });
  expect(await core.handlers['recordings:reveal'](byExt('.bin'))).toEqual({ ok: true });
  expect(await core.handlers['recordings:open'](byExt('.ogg'))).toEqual({ ok: true });
  expect(opened).toEqual([expect.stringMatching(/voice\.ogg$/)]);
  expect(revealed).toEqual([expect.stringMatching(/setup\.bin$/)]);
});
