/**
 * Studio mode in the app core: Settings → Studio through the contract's handlers, against a real nats-server.
 * "Follow a studio" mirrors what the team announces into the recordings folder and shows it in the studio
 * view with its state; Test says whether the server answers; the team token stays in the keychain.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';
import type { StudioView, TunnelStatus } from '../../contract.js';
import { recordingNeedsAttention } from '../health-view.js';
import { startSandbox } from '../sandbox/index.js';
import { MemorySecretStore } from '../credentials.js';
import { openSettingsStore, type SettingsPatch } from '../settings.js';
import { StudioFollower } from '../studio/follower.js';
import { CLAIMS_BUCKET, STUDIO_STREAM } from '../studio/team.js';
import { freePort, startNatsCluster, startNatsServer } from '../../../tests/support/nats-server.js';
import { announceRecording } from '../../../tests/support/studio-announce.js';
import { CoreParts, sandboxAnswers } from '../../../tests/support/app/core-parts.js';
import { createAppCore, type AppCore } from './app-core.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function makeCore(
  secrets = new MemorySecretStore(),
  settings: SettingsPatch = { demoMode: false },
  env: NodeJS.ProcessEnv = {},
): Promise<{ core: AppCore; home: string; parts: CoreParts }> {
  const home = await mkdtemp(join(tmpdir(), 'tally-studio-core-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: join(home, 'recordings'), ...settings });
  const parts = new CoreParts();
  const core = await createAppCore({
    home,
    secrets,
    transport: 'ws',
    env,
    version: '9.9.9',
    demoWebClient: false,
    ...parts.options,
  });
  cleanups.push(() => core.stop());
  await core.start();
  return { core, home, parts };
}

function nextView(core: AppCore, test: (v: StudioView) => boolean): Promise<StudioView> {
  return new Promise((resolve) => {
    const off = core.on('studio:changed', (v) => {
      if (!test(v)) return;
      off();
      resolve(v);
    });
  });
}

/** The tunnel view once it satisfies `test` (now, or when a later push does). */
async function tunnelWhen(core: AppCore, test: (s: TunnelStatus) => boolean): Promise<TunnelStatus> {
  const pushed = new Promise<TunnelStatus>((resolve) => {
    const off = core.on('tunnel:status', (s) => test(s) && (off(), resolve(s)));
  });
  const now = await core.handlers['tunnel:status']();
  return test(now) ? now : pushed;
}

describe('Settings → Studio in the app core', () => {
  it('in demo mode, a receiver choice says why nothing is shared instead of "off"', async () => {
    const { core } = await makeCore(new MemorySecretStore(), { demoMode: true });
    const said = nextView(core, (v) => v.status.state === 'error');
    await core.handlers['studio:set']({ mode: 'receiver', url: 'nats://127.0.0.1:4222', name: null });
    expect((await said).status).toMatchObject({
      state: 'error',
      notes: [{ code: 'studioReceiverDemo' }],
      message: expect.stringMatching(/^Demo mode: the sandbox’s recordings are not shared with the studio\./),
    });
    expect((await core.handlers['app:info']()).demo).toBe(true);
    // Nothing real is lost: the health reads a warning (not an error with "shared once the server answers").
    const health = await core.handlers['health:get']();
    expect(health.components.find((c) => c.id === 'studio')).toMatchObject({ state: 'warning', action: null });
    expect(health.state).not.toBe('error');
  });

  it('follows a studio: mirrors into the recordings folder and lists the recording as saved', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const { core, home } = await makeCore();
    expect(await core.handlers['studio:test'](nats.url)).toMatchObject({ ok: true });

    const connected = nextView(core, (v) => v.status.state === 'connected');
    const view = await core.handlers['studio:set']({ mode: 'follow', url: nats.url, name: 'tray-member' });
    expect(view).toMatchObject({ mode: 'follow', url: nats.url, name: 'tray-member' });
    await connected;

    const source = join(home, 'source.bin');
    const body = Buffer.alloc(700_000, 3);
    body.write('ftypisom', 4);
    await writeFile(source, body);
    const saved = nextView(core, (v) => v.recordings.some((r) => r.state === 'saved'));
    await announceRecording(nats.url, source, 'studio-cam');
    const after = await saved;
    const rec = after.recordings.find((r) => r.channelId === 'studio-cam')!;
    expect(rec).toMatchObject({
      state: 'saved',
      bytes: body.length,
      totalBytes: body.length,
      fileName: 'studio-cam.mp4',
    });
    const mirrored = await readFile(join(home, 'recordings', 'studio-cam.mp4'));
    expect(createHash('sha256').update(mirrored).digest('hex')).toBe(createHash('sha256').update(body).digest('hex'));
    // Its row in Recordings says what it was checked against: the team's SHA-256, not "only its size".
    const row = (await core.handlers['recordings:list']()).find((r) => r.channelId === 'studio-cam');
    expect(row).toMatchObject({ state: 'saved', checks: ['size', 'sha256'] });
  });

  it('follows a studio on a computer without service credentials: out of demo mode, no sandbox, mirroring', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    // No service credentials and no choice made: the app starts in demo mode, as it always has.
    const { core, home, parts } = await makeCore(new MemorySecretStore(), {});
    expect((await core.handlers['app:info']()).demo).toBe(true);
    const demo = parts.sandbox;
    expect(await sandboxAnswers(demo)).toBe(true);

    const connected = nextView(core, (v) => v.status.state === 'connected');
    const settingsChanged = new Promise((resolve) => core.on('settings:changed', resolve));
    await core.handlers['studio:set']({ mode: 'follow', url: nats.url, name: 'no-creds-member' });
    // A member never needs the service: the sandbox stops and the views stop saying "demo".
    expect((await core.handlers['app:info']()).demo).toBe(false);
    expect(await sandboxAnswers(demo)).toBe(false);
    expect(parts.sandbox).toBe(demo);
    expect(await settingsChanged).toMatchObject({ demoMode: false });
    await connected;

    const source = join(home, 'source.bin');
    await writeFile(source, Buffer.alloc(50_000, 5));
    const saved = nextView(core, (v) => v.recordings.some((r) => r.state === 'saved'));
    await announceRecording(nats.url, source, 'member-cam');
    await saved;
    expect((await readFile(join(home, 'recordings', 'member-cam.mp4'))).length).toBe(50_000);

    // Leaving the studio without credentials goes back to the demo, as before.
    await core.handlers['studio:set']({ mode: 'off', url: null, name: null });
    expect((await core.handlers['app:info']()).demo).toBe(true);
    expect((await core.handlers['studio:get']()).status.state).toBe('off');
  });

  it('a member back after 3 recordings expired from the team server lists those 3 under Problems and warns until they are removed', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const { core, home } = await makeCore();
    const source = join(home, 'source.bin');
    await writeFile(source, Buffer.alloc(20_000, 3));
    const connected = nextView(core, (v) => v.status.state === 'connected');
    await core.handlers['studio:set']({ mode: 'follow', url: nats.url, name: 'away-member' });
    await connected;
    const first = nextView(core, (v) => v.recordings.some((r) => r.channelId === 'before-away' && r.state === 'saved'));
    await announceRecording(nats.url, source, 'before-away');
    await first;

    // Away: three recordings are shared and expire from the team server before this member is back (the stream's
    // retention drops them: here its oldest messages are purged, which is what expiry does to the stream).
    await core.handlers['studio:set']({ mode: 'off', url: null, name: null });
    for (const channel of ['away-1', 'away-2', 'away-3']) await announceRecording(nats.url, source, channel);
    await announceRecording(nats.url, source, 'still-there');
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    const jsm = await jetstreamManager(nc);
    const last = (await jsm.streams.info(STUDIO_STREAM)).state.last_seq;
    await jsm.streams.purge(STUDIO_STREAM, { seq: last });
    await nc.close();

    // Back: the three are rows under Problems (expired, with why), the one still there is mirrored, and the
    // health warns (not "All is well") until the rows are removed.
    const back = nextView(core, (v) => v.recordings.some((r) => r.channelId === 'still-there' && r.state === 'saved'));
    await core.handlers['studio:set']({ mode: 'follow', url: nats.url, name: 'away-member' });
    await back;
    const rows = await core.handlers['recordings:list']();
    const problems = rows.filter((r) => recordingNeedsAttention(r));
    expect(problems.map((r) => [r.channelId, r.state]).sort()).toEqual([
      ['away-1', 'expired'],
      ['away-2', 'expired'],
      ['away-3', 'expired'],
    ]);
    expect(problems[0]!.error).toMatch(/expired from the team server before this computer could mirror it/);
    const warned = await core.handlers['health:get']();
    expect(warned.state).toBe('warning');
    expect(warned.problems).toBe(3);
    expect(warned.components.find((c) => c.id === 'downloads')?.reason).toBe(
      '3 recordings expired from the team server before this member could mirror them.',
    );

    for (const row of problems) await core.handlers['recordings:remove'](row.key);
    const cleared = await core.handlers['health:get']();
    expect(cleared.state).toBe('ok');
    expect(cleared.summary).toBe("All is well: the studio's recordings are mirrored here.");
  });

  it('never registers its own webhook URL while it follows a studio, whatever autoRegisterWebhook says', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const service = await startSandbox({ serviceId: 'studio-svc', secret: 'studio-secret', seed: 4 });
    cleanups.push(() => service.close());
    // The public URL is the receiver itself, so the tunnel turns reachable and would be registered at once.
    const port = await freePort();
    const settings: SettingsPatch = {
      demoMode: false,
      endpoints: service.endpoints,
      receiverPort: port,
      tunnel: { provider: 'url', publicUrl: `http://127.0.0.1:${port}` },
      autoRegisterWebhook: true,
      studio: { mode: 'follow', servers: [nats.url], name: 'member', store: 'nats', retentionDays: 7, replicas: null },
    };
    const env = { TALLY_SERVICE_ID: 'studio-svc', TALLY_SECRET: 'studio-secret' };
    const { core } = await makeCore(new MemorySecretStore(), settings, env);
    const reachable = await tunnelWhen(core, (s) => s.state === 'reachable');
    expect(reachable.registered).toBe(false);
    await expect(core.handlers['webhook:register']()).rejects.toThrow(/follows a studio.*Settings → Studio/);
    expect(service.control.webhookUrl).toBeNull();

    // No longer a member: the setting has its effect again.
    const registered = tunnelWhen(core, (s) => s.registered);
    await core.handlers['studio:set']({ mode: 'off', url: null, name: null });
    expect((await registered).publicUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/hooks/`));
    expect(service.control.webhookUrl).toBe((await registered).publicUrl);
  });

  it('keeps the team token in the keychain and out of every view; Test says when the server is unreachable', async () => {
    const secrets = new MemorySecretStore();
    const { core } = await makeCore(secrets);
    const url = `nats://127.0.0.1:${await freePort()}`;
    const view = await core.handlers['studio:setCredentials'](url, { token: 'team-token-XYZ' });
    expect(view.credentials).toEqual({ server: `127.0.0.1:${url.split(':').pop()}`, kind: 'token' });
    expect(JSON.stringify(view)).not.toContain('team-token-XYZ');
    expect(await secrets.get('token:studio-team')).toContain('team-token-XYZ');
    const tested = await core.handlers['studio:test'](url);
    expect(tested.ok).toBe(false);
    expect(tested.message).toMatch(/unreachable/);
    // Coded, so the popover says it in Korean too (only the address stays as it is).
    expect(tested.notes).toEqual([{ code: 'teamConnectionRefused', params: { where: url } }]);
    expect((await core.handlers['studio:clearCredentials']()).credentials).toBeNull();
  });

  it('as the receiver, lists what the team already holds (shared before the app started) as shared', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const { core, home } = await makeCore();
    const source = join(home, 'earlier.bin');
    await writeFile(source, Buffer.alloc(120_000, 9));
    // Shared before this app started (by this receiver's earlier run, or another receiver).
    await announceRecording(nats.url, source, 'earlier-cam');

    const listed = nextView(
      core,
      (v) => v.status.state === 'connected' && v.recordings.some((r) => r.channelId === 'earlier-cam'),
    );
    await core.handlers['studio:set']({ mode: 'receiver', url: nats.url, name: null });
    const view = await listed;
    expect(view.recordings.find((r) => r.channelId === 'earlier-cam')).toMatchObject({
      identity: 'rec-earlier-cam',
      state: 'shared',
      bytes: 120_000,
      totalBytes: 120_000,
      fileName: 'earlier-cam.mp4',
    });
    // A view asked for later (a window opened afterwards) lists it too.
    expect((await core.handlers['studio:get']()).recordings.map((r) => r.identity)).toContain('rec-earlier-cam');
  });

  it('as the receiver, gives the team its retentionDays: stream, claims bucket and object store', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const { core } = await makeCore();
    const connected = nextView(core, (v) => v.status.state === 'connected');
    const view = await core.handlers['studio:set']({ mode: 'receiver', url: nats.url, name: null, retentionDays: 3 });
    expect(view.retentionDays).toBe(3);
    await connected;
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    cleanups.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    for (const stream of [STUDIO_STREAM, `KV_${CLAIMS_BUCKET}`]) {
      expect((await jsm.streams.info(stream)).config.max_age).toBe(3 * 24 * 3600 * 1e9);
    }
    // Saved without a retention (an older window, or the follow form): the setting stays as it is.
    expect((await core.handlers['studio:set']({ mode: 'receiver', url: nats.url, name: null })).retentionDays).toBe(3);
  });

  it('takes a cluster from Settings → Studio: the receiver keeps R3 assets, a member reaches it past a dead first server', async () => {
    const cluster = await startNatsCluster(3);
    cleanups.push(() => cluster.close());
    const list = cluster.urls.join(', ');
    const receiver = await makeCore();
    const connected = nextView(receiver.core, (v) => v.status.state === 'connected');
    const view = await receiver.core.handlers['studio:set']({ mode: 'receiver', url: list, name: null, replicas: 3 });
    expect(view).toMatchObject({ url: list, replicas: 3 });
    await connected;
    // Kept as a list in the settings, as `tally listen --team a,b,c --replicas 3` would use it.
    expect(openSettingsStore(receiver.home).get().studio).toMatchObject({ servers: cluster.urls, replicas: 3 });
    const nc = await connect({ servers: cluster.urls.map((u) => u.replace('nats://', '')) });
    cleanups.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    for (const stream of [STUDIO_STREAM, `KV_${CLAIMS_BUCKET}`]) {
      expect((await jsm.streams.info(stream)).config.num_replicas).toBe(3);
    }

    // The first server of the member's list answers nothing: it follows through the others.
    const dead = `nats://127.0.0.1:${await freePort()}`;
    const member = await makeCore();
    const following = nextView(member.core, (v) => v.status.state === 'connected');
    const memberList = [dead, ...cluster.urls.slice(1)].join(',');
    await member.core.handlers['studio:set']({ mode: 'follow', url: memberList, name: 'cluster-member' });
    await following;
    const source = join(member.home, 'cluster.bin');
    const body = Buffer.alloc(300_000, 5);
    await writeFile(source, body);
    const saved = nextView(member.core, (v) =>
      v.recordings.some((r) => r.channelId === 'cluster-cam' && r.state === 'saved'),
    );
    await announceRecording(cluster.urls[1]!, source, 'cluster-cam');
    await saved;
    expect(await readFile(join(member.home, 'recordings', 'cluster-cam.mp4'))).toEqual(body);
  });

  it('a member that first joins while a node of the cluster is down waits it out and mirrors what was shared', async () => {
    const cluster = await startNatsCluster(3);
    cleanups.push(() => cluster.close());
    const receiver = await makeCore();
    const connected = nextView(receiver.core, (v) => v.status.state === 'connected');
    await receiver.core.handlers['studio:set']({
      mode: 'receiver',
      url: cluster.urls.join(','),
      name: null,
      replicas: 3,
    });
    await connected;
    const source = join(receiver.home, 'outage.bin');
    const body = Buffer.alloc(200_000, 7);
    await writeFile(source, body);
    await announceRecording(cluster.urls[1]!, source, 'outage-cam');

    await cluster.nodes[0]!.stop(true); // kill -9, and the member joins at once, for the first time
    const member = await makeCore();
    const states: string[] = [];
    member.core.on('studio:changed', (v) => states.push(v.status.state));
    const saved = nextView(member.core, (v) =>
      v.recordings.some((r) => r.channelId === 'outage-cam' && r.state === 'saved'),
    );
    await member.core.handlers['studio:set']({ mode: 'follow', url: cluster.urls.join(','), name: 'during-outage' });
    await saved;
    // Waiting for the cluster is "unreachable, trying again", never a stop that needs the user.
    expect(states).not.toContain('error');
    expect(await readFile(join(member.home, 'recordings', 'outage-cam.mp4'))).toEqual(body);
    // A safety limit, not a wait: the cluster elects new leaders and the member's join retries back off (up to
    // 30 s apart). Alone this takes 8-33 s; it ran past 90 s once in CI on the loaded 2-core machine.
  }, 240_000);

  it('as the receiver, lists each member with how many recordings it has not fetched yet', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const { core, home } = await makeCore();
    // A member joins (its place on the team server exists from now on), then goes away.
    const away = new StudioFollower({
      url: new URL(nats.url),
      credentials: null,
      folder: join(home, 'member-folder'),
      name: 'late-laptop',
      stateDir: join(home, 'member-home'),
    });
    await away.start();
    await away.stop();
    for (const cam of ['cam-1', 'cam-2']) {
      const source = join(home, `${cam}.bin`);
      await writeFile(source, Buffer.alloc(50_000, 1));
      await announceRecording(nats.url, source, cam);
    }

    const listed = nextView(core, (v) => v.members.some((m) => m.pending === 2));
    await core.handlers['studio:set']({ mode: 'receiver', url: nats.url, name: null });
    const member = (await listed).members.find((m) => m.pending === 2)!;
    expect(member).toMatchObject({ label: expect.stringMatching(/^late-laptop on /), lagging: false });
    expect(Date.parse(member.oldestAt!)).toBeLessThanOrEqual(Date.now());
    // Seven days’ retention: the oldest leaves the team server a week after it was shared.
    const left = Date.parse(member.expiresAt!) - Date.parse(member.oldestAt!);
    expect(left).toBe(7 * 24 * 3600 * 1000);
    // The same list for a window opened later, and none on a member's computer.
    expect((await core.handlers['studio:get']()).members).toHaveLength(1);
  });

  it.each(['follow', 'receiver'] as const)(
    'as %s, shows refused team credentials as an error with the reason, not "connecting", until new ones are set',
    async (mode) => {
      const nats = await startNatsServer({ args: ['--user', 'studio', '--pass', 'right-pass'] });
      cleanups.push(() => nats.close());
      const { core } = await makeCore();
      await core.handlers['studio:setCredentials'](nats.url, { user: 'studio', password: 'wrong-pass' });
      const refused = nextView(core, (v) => v.status.state === 'error');
      await core.handlers['studio:set']({ mode, url: nats.url, name: 'tray-member' });
      const view = await refused;
      expect(view.status.message).toMatch(
        /^The team server refused the credentials: Authorization Violation \(nats:\/\/127\.0\.0\.1:\d+\) — set them in Settings → Studio\.$/,
      );
      expect(view.status.notes).toEqual([
        { code: 'teamRefused', params: { reason: 'Authorization Violation', where: nats.url } },
      ]);
      expect(JSON.stringify(view)).not.toContain('wrong-pass');
      // No hammering: one refused login, and the error stays (the next try is minutes away, or new credentials).
      await nats.logged(/authentication error/);
      expect(nats.log().match(/authentication error/g)).toHaveLength(1);
      expect((await core.handlers['studio:get']()).status.state).toBe('error');

      const connected = nextView(core, (v) => v.status.state === 'connected');
      await core.handlers['studio:setCredentials'](nats.url, { user: 'studio', password: 'right-pass' });
      await connected;
      expect(nats.log().match(/authentication error/g)).toHaveLength(1);
    },
  );

  it('Test names a server of the list that does not answer, even when the others do', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const dead = `nats://127.0.0.1:${await freePort()}`;
    const { core } = await makeCore();
    const result = await core.handlers['studio:test'](`${nats.url}, ${dead}`);
    expect(result.ok).toBe(true);
    expect(result.message).toContain(`Not reachable now: ${dead}`);
    expect(result.message).not.toContain(nats.url.replace('nats://', ''));
    expect((await core.handlers['studio:test'](nats.url)).message).not.toMatch(/Not reachable/);
  });

  it('refuses a studio URL that is not nats:// or tls://, naming the field', async () => {
    const { core } = await makeCore();
    await expect(core.handlers['studio:set']({ mode: 'follow', url: null, name: null })).rejects.toThrow(
      /Team servers: a team server is needed/,
    );
    for (const [url, said] of [
      ['nats://a.local:4222, b.local:4222', /^Settings → Studio → Team servers must start with nats:\/\/ or tls:\/\//],
      ['nats://a.local:4222,tls://b.local:4222', /^Settings → Studio → Team servers: every server of a cluster takes/],
      ['nats://a.local:4222,nats://b.local:4222/x', /^Settings → Studio → Team servers takes no path/],
    ] as const) {
      await expect(core.handlers['studio:set']({ mode: 'follow', url, name: null })).rejects.toThrow(said);
    }
  });
});
