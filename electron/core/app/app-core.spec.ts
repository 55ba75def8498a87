/**
 * The app core against the real embedded sandbox over HTTP, with real temp folders: live list, force-end,
 * search, a recording that flows webhook -> receiver -> download -> folder, settings, credentials, the tray
 * summary and a clean stop. The keychain is its in-memory twin here (the real one is tested elsewhere).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { note, type RecordingView } from '../../contract.js';
import { ConfigError } from '../errors.js';
import { MemorySecretStore, PROJECT_ACCOUNT } from '../credentials.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import { openSettingsStore } from '../settings.js';
import {
  cleanups,
  collect,
  makeCore,
  next,
  pipelineOf,
  runCleanups,
  sandboxOf,
  tempHome,
} from '../../../tests/support/app/core-helpers.js';
import type { TraySnapshot } from './types.js';

afterEach(runCleanups);

const liveIds = (sandbox: Sandbox) =>
  sandbox.control
    .listBroadcasts({ state: 'live' })
    .map((b) => b.id)
    .sort();

describe('AppCore in demo mode', () => {
  it('lists the sandbox live channels, force-ends one and finds it in search', async () => {
    const logged: string[] = [];
    const core = await makeCore(await tempHome(), { log: (line) => logged.push(line) });
    const pushes = collect(core, 'channels:live');
    await core.start();
    const sandbox = sandboxOf(core);
    expect(await core.handlers['app:info']()).toEqual({
      version: '9.9.9',
      platform: process.platform,
      transport: 'ws',
      demo: true,
      native: false,
      fileActions: false,
    });

    const live = await core.handlers['channels:live']();
    expect(live.map((c) => c.id).sort()).toEqual(liveIds(sandbox));
    expect(live.length).toBeGreaterThan(0);
    expect(live.every((c) => c.state === 'live' && c.endedAt === null)).toBe(true);

    const victim = live[0]?.id as string;
    await expect(core.handlers['channels:end'](victim)).resolves.toEqual({ ended: true });
    // The log says which channel, as a producer reading it asks.
    expect(logged).toContain(`channel ${JSON.stringify(victim)} was force-ended`);
    expect((await core.handlers['channels:live']()).map((c) => c.id)).not.toContain(victim);
    // The refresh after ending was pushed, without the ended channel.
    expect(pushes.at(-1)?.payload.map((c) => c.id)).not.toContain(victim);

    const found = await core.handlers['channels:search']({
      since: new Date(Date.now() - 3_600_000).toISOString(),
      until: new Date(Date.now() + 60_000).toISOString(),
      keyword: victim,
    });
    expect(found.truncated).toBe(false);
    expect(found.channels).toEqual([expect.objectContaining({ id: victim, state: 'ended' })]);
    await expect(core.handlers['channels:end']('no-such-channel')).rejects.toMatchObject({ code: 'unknown_channel' });
  });

  it('receives a sandbox recording through the webhook and saves it byte for byte', async () => {
    const home = await tempHome();
    const core = await makeCore(home);
    const changes = collect(core, 'recordings:changed');
    const progress = collect(core, 'recordings:progress');
    const trays = collect(core, 'tray:snapshot');
    const notes = collect(core, 'notify');
    await core.start();
    const sandbox = sandboxOf(core);
    expect((await core.handlers['tunnel:status']()).registered).toBe(true);

    // Slow the download host so the transfer spans several progress reports.
    sandbox.control.setFaults('download', { rateBytesPerSec: 300_000 });
    const saved = next(core, 'recordings:changed', (v) => v.channelId === 'rec-1' && v.state === 'saved');
    // The journal says saved first; the notification follows once the download's commit record is gone.
    const notified = next(core, 'notify', (n) => n.kind === 'saved');
    sandbox.control.startBroadcast({ id: 'rec-1', record: true, recordingBytes: 240_000 });
    const recording = await sandbox.control.endBroadcast('rec-1');
    expect(sandbox.control.webhookDeliveries().at(-1)).toMatchObject({ channelId: 'rec-1', status: 200 });
    const view = await saved;
    const note = await notified;

    const states = changes.filter((c) => c.payload.channelId === 'rec-1').map((c) => c.payload.state);
    expect(states).toContain('downloading');
    expect(states.at(-1)).toBe('saved');
    expect(view).toMatchObject({ source: 'server', bytes: 240_000, totalBytes: 240_000, rate: null, error: null });
    expect(view.fileName).toMatch(/^rec-1.*\.mp4$/);

    const listed = await core.handlers['recordings:list']();
    expect(listed).toEqual([view]);
    // The webhook named a thumbnail: the core fetches it under the download policy for the page.
    expect(view.hasThumbnail).toBe(true);
    expect((await core.handlers['recordings:thumbnail'](view.key)).dataUrl).toMatch(/^data:image\/jpeg;base64,/);
    const bytes = await readFile(join(home, 'recordings', view.fileName as string));
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(await recording?.sha256());

    const mine = progress.filter((p) => p.payload.key === view.key);
    expect(mine.length).toBeGreaterThan(1);
    for (const p of mine) expect(p.payload).toMatchObject({ state: 'downloading', totalBytes: 240_000 });
    for (let i = 1; i < mine.length; i++) {
      expect((mine[i]?.at ?? 0) - (mine[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(240);
    }
    expect(mine.some((p) => (p.payload.rate ?? 0) > 0)).toBe(true);

    expect(trays.some((t) => t.payload.downloading === 1)).toBe(true);
    expect(core.traySnapshot()).toMatchObject({ downloading: 0, progress: null, attention: null });
    expect(note).toMatchObject({ kind: 'saved', path: join(home, 'recordings', view.fileName as string) });
    // The demo sandbox calls the lifecycle hook too: "rec-1 is live" (shown only when that setting is on).
    expect(notes.filter((n) => n.payload.kind === 'live').map((n) => n.payload.body)).toEqual(['rec-1 is live.']);
    expect(notes.filter((n) => n.payload.kind !== 'live')).toHaveLength(1);
    await expect(core.handlers['recordings:retry']('unknown')).rejects.toMatchObject({ code: 'invalid_input' });
    // No native shell here: reveal and open say so instead of failing.
    expect(await core.handlers['recordings:reveal'](view.key)).toEqual({ ok: false });
    expect((await core.handlers['recordings:gaps']()).missing).toEqual([]);
  });

  it("receives the demo web client's audio upload as a client recording and shows its recordUrl", async () => {
    const home = await tempHome();
    const core = await makeCore(home, { demoWebClient: true });
    await core.start();
    const sandbox = sandboxOf(core);
    const tunnel = await core.handlers['tunnel:status']();
    expect(tunnel.uploadUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/uploads\/[A-Za-z0-9_-]{22,}$/);

    const uploaded = next(core, 'recordings:changed', (v) => v.source === 'client' && v.state === 'saved');
    // The demo's web app records the shows the service records: the pair comes with a recorded broadcast.
    sandbox.control.startBroadcast({ id: 'client-1', record: true, recordingBytes: 50_000 });
    await sandbox.control.endBroadcast('client-1');
    const view = await uploaded;
    expect(view).toMatchObject({ channelId: 'client-1', fileName: expect.stringMatching(/\.webm$/) });
    const listed = await core.handlers['recordings:list']();
    expect(listed.filter((r) => r.source === 'client')).toContainEqual(view);
    const saved = join(home, 'recordings', 'client', view.fileName as string);
    const onDisk = await readFile(saved);
    expect(onDisk.byteLength).toBe(view.bytes);
    // Real audio: ffprobe (ffmpeg, which .ci/run installs) decodes every frame of the file the demo saved.
    const probe = await new Promise<string>((resolve, reject) =>
      execFile(
        'ffprobe',
        [
          '-v',
          'error',
          '-count_frames',
          '-select_streams',
          'a:0',
          '-show_entries',
          'stream=codec_type,nb_read_frames',
          '-of',
          'csv=p=0',
          saved,
        ],
        (error, stdout, stderr) =>
          error || stderr.trim() ? reject(new Error(stderr || String(error))) : resolve(stdout),
      ),
    );
    const [kind, frames] = probe.trim().split(',');
    expect(kind).toBe('audio');
    expect(Number(frames)).toBeGreaterThan(0);
  });

  it('reveals saved recordings through the platform hooks only', async () => {
    const revealed: string[] = [];
    const core = await makeCore(await tempHome(), { hooks: { revealFile: (p) => void revealed.push(p) } });
    await core.start();
    const sandbox = sandboxOf(core);
    const saved = next(core, 'recordings:changed', (v) => v.state === 'saved');
    sandbox.control.startBroadcast({ id: 'rec-2', record: true, recordingBytes: 4096 });
    await sandbox.control.endBroadcast('rec-2');
    const view: RecordingView = await saved;
    expect(await core.handlers['recordings:reveal'](view.key)).toEqual({ ok: true });
    expect(await core.handlers['recordings:open'](view.key)).toEqual({ ok: false });
    expect(revealed).toEqual([expect.stringMatching(/rec-2.*\.mp4$/)]);
    expect(await core.handlers['clipboard:write']('x')).toEqual({ ok: false });
  });

  it('gives the path of a saved recording and removes it from the list for good, leaving the file', async () => {
    const home = await tempHome();
    const core = await makeCore(home);
    await core.start();
    const sandbox = sandboxOf(core);
    const saved = next(core, 'recordings:changed', (v) => v.state === 'saved');
    sandbox.control.startBroadcast({ id: 'rec-3', record: true, recordingBytes: 4096 });
    await sandbox.control.endBroadcast('rec-3');
    const view: RecordingView = await saved;
    const { path } = await core.handlers['recordings:path'](view.key);
    expect(path).toBe(join(home, 'recordings', view.fileName as string));
    expect(await core.handlers['recordings:path']('unknown')).toEqual({ path: null });
    expect(await core.handlers['recordings:remove']('unknown')).toEqual({ ok: false });

    expect(await core.handlers['recordings:remove'](view.key)).toEqual({ ok: true });
    expect(await core.handlers['recordings:list']()).toEqual([]);
    expect((await readFile(path as string)).byteLength).toBe(view.bytes);
    await core.stop();

    // Still hidden after a restart.
    const again = await makeCore(home);
    await again.start();
    expect(await again.handlers['recordings:list']()).toEqual([]);
  });

  it('stores the ngrok authtoken in the keychain only, and says so without ever returning it', async () => {
    const home = await tempHome();
    const secrets = new MemorySecretStore();
    const core = await makeCore(home, { secrets });
    await core.start();
    const changed = next(core, 'credentials:changed', (c) => c.ngrokTokenStored === true);
    const status = await core.handlers['credentials:setNgrokToken']('  2abc-ngrok-token  ');
    expect(status.ngrokTokenStored).toBe(true);
    expect(await changed).toMatchObject({ ngrokTokenStored: true });
    expect(await secrets.get('token:ngrok')).toBe('2abc-ngrok-token');
    expect(JSON.stringify(status)).not.toContain('2abc-ngrok-token');
    expect(JSON.stringify(openSettingsStore(home).get())).not.toContain('2abc-ngrok-token');

    const cleared = await core.handlers['credentials:clearNgrokToken']();
    expect(cleared.ngrokTokenStored).toBeUndefined();
    expect(await secrets.get('token:ngrok')).toBeNull();
  });

  it('keeps the tray count in step with the live list and reports poll errors once', async () => {
    const core = await makeCore(await tempHome());
    const errors = collect(core, 'app:error');
    const first = next(core, 'tray:snapshot', (t) => t.liveCount > 0);
    await core.start();
    const sandbox = sandboxOf(core);
    const snapshot: TraySnapshot = await first;
    expect(snapshot.liveChannels.map((c) => c.id).sort()).toEqual(liveIds(sandbox));
    expect(snapshot.liveCount).toBe(liveIds(sandbox).length);

    sandbox.control.startBroadcast({ id: 'tray-new' });
    await next(core, 'tray:snapshot', (t) => t.liveChannels.some((c) => c.id === 'tray-new'));

    // A failing service: many polls, one error event.
    let liveRequests = 0;
    sandbox.control.events.on('request', (r: { path: string }) => {
      if (r.path === '/lambda/broadcast-channel-list') liveRequests++;
    });
    sandbox.control.setFaults('api', { status: 503, path: '/lambda/' });
    core.setVisible(true);
    const failedPolls = new Promise<void>((resolve) => {
      sandbox.control.events.on('request', () => liveRequests >= 6 && resolve());
    });
    await failedPolls;
    expect(errors.map((e) => e.payload.code)).toEqual(['service_error']);
    sandbox.control.setFaults('api', null);
    await next(core, 'channels:live');
    sandbox.control.setFaults('api', { status: 401, path: '/lambda/' });
    const refused = await next(core, 'app:error');
    expect(refused.code).toBe('bad_credentials');
    await expect.poll(() => core.traySnapshot().attention).toMatch(/refused/);
    sandbox.control.setFaults('api', null);
    await next(core, 'tray:snapshot', (t) => t.attention === null);
  });

  it('round-trips settings, applies them live and keeps them for the next start', async () => {
    const home = await tempHome();
    const core = await makeCore(home);
    await core.start();
    const changed = next(core, 'settings:changed');
    const view = await core.handlers['settings:update']({
      pollIntervalSec: 7,
      concurrency: 2,
      language: 'ko',
      notifications: { saved: false },
      fileNameTemplate: '{date}-{channelId}',
      uploadOrigins: ['https://example.com/'],
      receivingPaused: true,
      tunnel: { ngrokDomain: '' },
    });
    expect(view).toMatchObject({
      pollIntervalSec: 7,
      concurrency: 2,
      language: 'ko',
      notifications: { saved: false, failed: true, unreachable: true },
      fileNameTemplate: '{date}-{channelId}',
      uploadOrigins: ['https://example.com'],
      receivingPaused: true,
      demoMode: true,
      recordingsFolder: join(home, 'recordings'),
      tunnel: { provider: 'none', publicUrl: null, ngrokDomain: null, localtunnelHost: null },
    });
    expect(await changed).toEqual(view);
    expect(await core.handlers['settings:get']()).toEqual(view);
    expect(pipelineOf(core).downloadsPaused).toBe(true);
    expect(core.traySnapshot().receivingPaused).toBe(true);
    // Nothing secret ever appears in the view.
    expect(JSON.stringify(view)).not.toMatch(/secret|token/i);

    await expect(core.handlers['settings:update']({ recordingsFolder: '   ' })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    expect((await core.handlers['settings:get']()).recordingsFolder).toBe(join(home, 'recordings'));
    await expect(core.handlers['settings:chooseFolder']()).rejects.toMatchObject({ code: 'config' });
    await core.stop();

    // A new core on the same home reads the same settings; pausing is for this run only.
    const again = await makeCore(home);
    expect(await again.handlers['settings:get']()).toEqual({ ...view, receivingPaused: false });
  });

  it('gives a demo recording the deadline the sandbox keeps it to: about 36 real minutes at 10x, not 6 hours', async () => {
    const home = await tempHome();
    const core = await makeCore(home, {
      sandboxOptions: { timeFactor: 10, demo: false, searchIndexDelayMs: 0, seed: 3 },
    });
    await core.start();
    const sandbox = sandboxOf(core);
    const received = next(core, 'recordings:changed', (v) => v.channelId === 'soon-gone');
    sandbox.control.startBroadcast({ id: 'soon-gone', record: true, recordingBytes: 4096 });
    await sandbox.control.endBroadcast('soon-gone');
    const view = await received;
    const left = Date.parse(view.deadline ?? '') - Date.parse(view.receivedAt);
    expect(left).toBe(36 * 60_000);
  });

  it('sends demo recordings to <home>/demo-recordings unless a folder was chosen', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-core-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    openSettingsStore(home).update({ receiverPort: 0 });
    const core = await makeCore(home);
    expect((await core.handlers['settings:get']()).recordingsFolder).toBe(join(home, 'demo-recordings'));
    await core.start();
    expect(core.traySnapshot().recordingsFolder).toBe(join(home, 'demo-recordings'));
    // Typing the demo folder's full path (or a path that means it) is refused in one line, never silently dropped:
    // the demo's own folder never becomes the real one.
    for (const typed of [join(home, 'demo-recordings'), `${join(home, 'demo-recordings')}/`]) {
      await expect(core.handlers['settings:update']({ recordingsFolder: typed })).rejects.toMatchObject({
        code: 'invalid_input',
        message: expect.stringContaining(`${join(home, 'demo-recordings')} is the demo’s own folder`),
      });
    }
    expect(openSettingsStore(home).get().recordingsFolder).not.toBe(join(home, 'demo-recordings'));
  });

  it('restarts the tunnel on a provider change and reports an unreachable public URL once', async () => {
    const gone: Server = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const closedPort = (gone.address() as { port: number }).port;
    await new Promise((resolve) => gone.close(resolve));
    // A fixed port, as a producer's receiver has: the rebuilt pipelines listen on the same one.
    const free: Server = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const receiverPort = (free.address() as { port: number }).port;
    await new Promise((resolve) => free.close(resolve));
    const logged: string[] = [];
    const core = await makeCore(await tempHome({ receiverPort }), { log: (line) => logged.push(line) });
    const notes = collect(core, 'notify');
    await core.start();
    const unreachable = next(core, 'tunnel:status', (s) => s.state === 'unreachable');
    const attention = next(core, 'tray:snapshot', (t) => t.attention !== null);
    await core.handlers['settings:update']({
      tunnel: { provider: 'url', publicUrl: `http://127.0.0.1:${closedPort}` },
    });
    const status = await unreachable;
    expect(status).toMatchObject({ provider: 'url', localUrl: expect.stringMatching(/\/hooks\//) });
    expect(status.publicUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${closedPort}/hooks/`));
    expect((await attention).attention).toMatch(/unreachable/);
    expect(notes.map((n) => n.payload.kind)).toEqual(['unreachable']);

    await core.handlers['settings:update']({ tunnel: { provider: 'none', publicUrl: null } });
    expect(await core.handlers['tunnel:status']()).toMatchObject({ provider: 'none', state: 'off', publicUrl: null });
    expect(core.traySnapshot().attention).toBeNull();
    // Two rebuilt pipelines on the same port: "receiving" is said once, not after every change.
    expect(logged.filter((line) => line.startsWith('receiving webhooks on port'))).toHaveLength(1);
  });

  it('falls back to a free port when the receiver port is taken (the demo sandbox follows it), and says so', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => blocker.close(resolve)));
    const busy = (blocker.address() as { port: number }).port;
    const core = await makeCore(await tempHome({ receiverPort: busy }));
    await core.start();
    const status = await core.handlers['tunnel:status']();
    const port = Number(new URL(status.localUrl as string).port);
    expect(port).not.toBe(busy);
    const health = await core.handlers['health:get']();
    expect(health.state).toBe('ok');
    expect(health.receiver).toEqual({ host: '127.0.0.1', port, configuredPort: busy, portFollows: true });
    expect(health.components.find((c) => c.id === 'receiver')?.reason).toBe(
      `Receiving webhooks on 127.0.0.1:${port} (${busy} is taken; the sandbox address follows the port).`,
    );
    expect(status.registered).toBe(true);
    await expect(core.handlers['webhook:register']()).resolves.toMatchObject({ registered: true });
  });
});

describe('AppCore credentials', () => {
  it('tests before storing, leaves demo mode with good credentials and returns to it when they are cleared', async () => {
    const secrets = new MemorySecretStore();
    const core = await makeCore(await tempHome(), { secrets, demo: undefined });
    const credentialEvents = collect(core, 'credentials:changed');
    await core.start();
    const demo = sandboxOf(core);
    expect(await core.handlers['credentials:status']()).toEqual({
      configured: true,
      serviceId: 'sandbox-service',
      source: 'sandbox',
      keychainAvailable: true,
      keychainMessage: null,
      keychainNotes: null,
    });

    // The "real" service for this test is a second sandbox with its own project.
    const real = await startSandbox({ serviceId: 'real-svc', secret: 'real-secret', seed: 5 });
    cleanups.push(() => real.close());
    real.control.startBroadcast({ id: 'real-1' });
    await core.handlers['settings:update']({ endpoints: real.endpoints });

    const wrong = { serviceId: 'real-svc', secret: 'not-it' };
    await expect(core.handlers['credentials:set'](wrong)).rejects.toMatchObject({ code: 'bad_credentials' });
    expect(await secrets.get(PROJECT_ACCOUNT)).toBeNull();
    expect(await core.handlers['credentials:test'](wrong)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/rejected/),
    });
    expect(await core.handlers['credentials:test']()).toMatchObject({ ok: true });
    expect((await core.handlers['app:info']()).demo).toBe(true);

    const good = { serviceId: 'real-svc', secret: 'real-secret' };
    expect(await core.handlers['credentials:test'](good)).toEqual({
      ok: true,
      message: 'Connected: 1 channel live now.',
      notes: [{ code: 'connected', params: { count: 1 } }],
    });
    const status = await core.handlers['credentials:set'](good);
    expect(status).toMatchObject({ configured: true, serviceId: 'real-svc', source: 'keychain' });
    expect(JSON.parse((await secrets.get(PROJECT_ACCOUNT)) as string)).toEqual(good);
    expect(credentialEvents.at(-1)?.payload).toEqual(status);
    expect((await core.handlers['app:info']()).demo).toBe(false);
    // The demo sandbox is closed and no other one started.
    expect(sandboxOf(core)).toBe(demo);
    await expect(fetch(`${demo.apiUrl}/_sandbox`)).rejects.toThrow();
    expect((await core.handlers['channels:live']()).map((c) => c.id)).toEqual(['real-1']);
    expect((await core.handlers['settings:get']()).demoMode).toBe(false);
    // With a loopback receiver and no tunnel there is nothing the real service could call.
    await expect(core.handlers['webhook:register']()).rejects.toThrow(/tunnel provider first/);

    const cleared = await core.handlers['credentials:clear']();
    expect(cleared).toMatchObject({ configured: true, source: 'sandbox' });
    expect(await secrets.get(PROJECT_ACCOUNT)).toBeNull();
    expect((await core.handlers['app:info']()).demo).toBe(true);
  });

  it('never sends the stored secret to hosts changed after it was entered, until it is entered again', async () => {
    const secrets = new MemorySecretStore();
    const real = await startSandbox({ serviceId: 'bound-svc', secret: 'bound-secret', seed: 8 });
    cleanups.push(() => real.close());
    // A host that records what reaches it: standing in for wherever a compromised renderer points.
    const other = await startSandbox({ serviceId: 'bound-svc', secret: 'other', seed: 9 });
    cleanups.push(() => other.close());
    const seenByOther: string[] = [];
    other.control.events.on('request', (r: { path: string }) => seenByOther.push(r.path));

    const core = await makeCore(await tempHome({ endpoints: real.endpoints, demoMode: false }), {
      secrets,
      demo: undefined,
    });
    await core.start();
    const good = { serviceId: 'bound-svc', secret: 'bound-secret' };
    expect(await core.handlers['credentials:set'](good)).toMatchObject({ configured: true, source: 'keychain' });
    real.control.startBroadcast({ id: 'bound-1' });
    expect((await core.handlers['channels:live']()).map((c) => c.id)).toEqual(['bound-1']);

    const changed = next(core, 'credentials:changed');
    await core.handlers['settings:update']({ endpoints: other.endpoints });
    expect(await changed).toMatchObject({ configured: false, keychainMessage: expect.stringMatching(/hosts changed/) });
    await expect(core.handlers['channels:live']()).rejects.toMatchObject({ code: 'config' });
    expect(await core.handlers['credentials:test']()).toMatchObject({ ok: false });
    expect(seenByOther).toEqual([]);

    // Back to the hosts it was entered for: in use again, without typing it.
    await core.handlers['settings:update']({ endpoints: real.endpoints });
    expect(await core.handlers['credentials:status']()).toMatchObject({ configured: true, source: 'keychain' });
    expect((await core.handlers['channels:live']()).map((c) => c.id)).toEqual(['bound-1']);
  });

  it('reports an unavailable keychain and refuses to store, but still uses credentials from the environment', async () => {
    const real = await startSandbox({ serviceId: 'env-svc', secret: 'env-secret', seed: 6 });
    cleanups.push(() => real.close());
    const home = await tempHome({ endpoints: real.endpoints });
    const core = await makeCore(home, {
      demo: undefined,
      env: { TALLY_SERVICE_ID: 'env-svc', TALLY_SECRET: 'env-secret' },
      keychainUnavailable: 'No Secret Service is running.',
    });
    await core.start();
    expect(await core.handlers['credentials:status']()).toEqual({
      configured: true,
      serviceId: 'env-svc',
      source: 'env',
      keychainAvailable: false,
      keychainMessage: 'No Secret Service is running.',
      keychainNotes: [{ code: 'error', params: { message: 'No Secret Service is running.' } }],
      ngrokTokenFile: join(home, 'ngrok-authtoken'),
    });
    expect((await core.handlers['app:info']()).demo).toBe(false);
    // Nothing needs the keychain while the environment holds the credentials: no standing amber for it.
    const health = await core.handlers['health:get']();
    expect(health.components.map((c) => c.id)).not.toContain('keychain');
    await expect(
      core.handlers['credentials:set']({ serviceId: 'env-svc', secret: 'env-secret' }),
    ).rejects.toMatchObject({
      code: 'config',
      message: expect.stringContaining('No Secret Service'),
    });
    expect(await core.handlers['channels:live']()).toEqual([]);
  });

  it('without a keychain keeps the ngrok authtoken in a file only its owner can read, and says where', async () => {
    const home = await tempHome();
    const core = await makeCore(home, { keychainUnavailable: new ConfigError(note('keychainNoService')) });
    await core.start();
    const before = await core.handlers['credentials:status']();
    // The Settings banner is the note, so the popover says it in Korean too.
    expect(before.keychainNotes).toMatchObject([{ code: 'error', params: { note: 'keychainNoService' } }]);
    expect(before).toMatchObject({ keychainAvailable: false, ngrokTokenFile: join(home, 'ngrok-authtoken') });
    expect(before.ngrokTokenStored).toBeUndefined();

    const after = await core.handlers['credentials:setNgrokToken']('ngrok-file-token');
    expect(after).toMatchObject({ ngrokTokenStored: true, ngrokTokenFile: join(home, 'ngrok-authtoken') });
    expect(await readFile(join(home, 'ngrok-authtoken'), 'utf8')).toBe('ngrok-file-token\n');
    expect((await stat(join(home, 'ngrok-authtoken'))).mode & 0o777).toBe(0o600);
    expect((await core.handlers['credentials:clearNgrokToken']()).ngrokTokenStored).toBeUndefined();
  });

  it("without a keychain refuses to store team credentials with the service secret's words, and never says stored", async () => {
    const home = await tempHome();
    const core = await makeCore(home, { keychainUnavailable: new ConfigError(note('keychainNoService')) });
    await core.start();
    const serviceRefusal = await core.handlers['credentials:set']({ serviceId: 'svc', secret: 's' }).then(
      () => null,
      (error: unknown) => error as Error,
    );
    const teamRefusal = await core.handlers['studio:setCredentials']('nats://127.0.0.1:4222', {
      user: 'edit-bay',
      password: 'pw',
    }).then(
      () => null,
      (error: unknown) => error as Error,
    );
    // One line, the same words for both secrets (Settings → Service account and Settings → Studio).
    expect(serviceRefusal).toMatchObject({ code: 'config' });
    expect(teamRefusal).toMatchObject({ code: 'config', message: serviceRefusal?.message });
    expect(teamRefusal?.message).toMatch(/^The credentials cannot be stored: No Secret Service is running/);
    expect(teamRefusal?.message).not.toMatch(/\n/);
    // Nothing was kept in the stand-in either: the Studio view has no "Credentials stored" line to show.
    expect((await core.handlers['studio:get']()).credentials).toBeNull();
  });

  it('answers "no credentials" when demo mode is off and nothing is configured', async () => {
    const core = await makeCore(await tempHome({ demoMode: false }), { demo: undefined });
    await expect(core.handlers['channels:live']()).rejects.toMatchObject({ code: 'config', message: /starting/ });
    await core.start();
    await expect(core.handlers['channels:live']()).rejects.toMatchObject({ code: 'config', message: /No credentials/ });
    expect(await core.handlers['credentials:test']()).toMatchObject({ ok: false, message: /No credentials/ });
    // The receiver still runs: a webhook registered by hand keeps arriving.
    expect((await core.handlers['tunnel:status']()).localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\//);
    expect(await core.handlers['recordings:list']()).toEqual([]);
  });
});

describe('AppCore shutdown', () => {
  it('stops the poller, pipeline and sandbox: no server, socket or timer stays open', async () => {
    const count = () =>
      process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap' || r === 'TCPSocketWrap' || r === 'Timeout')
        .length;
    const before = count();
    const core = await makeCore(await tempHome());
    core.on('tray:snapshot', () => {});
    core.setVisible(true);
    await core.start();
    await next(core, 'channels:live');
    expect(count()).toBeGreaterThan(before);
    await core.stop();
    await core.stop();
    await expect.poll(count, { timeout: 5000 }).toBeLessThanOrEqual(before);
    await expect(core.handlers['channels:live']()).rejects.toMatchObject({ code: 'config' });
  });
});
