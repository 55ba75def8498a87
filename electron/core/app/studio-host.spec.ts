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
import { jetstream } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';
import type { StudioView } from '../../contract.js';
import { MemorySecretStore } from '../credentials.js';
import { openSettingsStore } from '../settings.js';
import type { Announcement } from '../studio/announcement.js';
import { NatsTeamStore } from '../studio/store.js';
import { DEFAULT_RETENTION_MS, STUDIO_SUBJECT, ensureStudioStream } from '../studio/team.js';
import { freePort, startNatsServer } from '../../../tests/support/nats-server.js';
import { createAppCore, type TallyAppCore } from './app-core.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function makeCore(secrets = new MemorySecretStore()): Promise<{ core: TallyAppCore; home: string }> {
  const home = await mkdtemp(join(tmpdir(), 'tally-studio-core-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: join(home, 'recordings'), demoMode: false });
  const core = await createAppCore({ home, secrets, transport: 'ws', env: {}, version: '9.9.9' });
  cleanups.push(() => core.stop());
  await core.start();
  return { core, home };
}

function nextView(core: TallyAppCore, test: (v: StudioView) => boolean): Promise<StudioView> {
  return new Promise((resolve) => {
    const off = core.on('studio:changed', (v) => {
      if (!test(v)) return;
      off();
      resolve(v);
    });
  });
}

/** What the studio's receiver does for one saved file: store it, then announce it. */
async function announce(url: string, file: string, channelId: string): Promise<Announcement> {
  const nc = await connect({ servers: url.replace('nats://', '') });
  try {
    await ensureStudioStream(nc, { retentionMs: DEFAULT_RETENTION_MS, owner: true });
    const bytes = (await readFile(file)).length;
    const put = await new NatsTeamStore(nc, { retentionMs: DEFAULT_RETENTION_MS }).put({
      identity: `rec-${channelId}`,
      path: file,
      bytes,
    });
    const a: Announcement = {
      v: 1,
      identity: `rec-${channelId}`,
      kind: 'server',
      channelId,
      fileName: `${channelId}.mp4`,
      bytes,
      sha256: put.sha256,
      savedAt: new Date().toISOString(),
      store: put.ref,
    };
    await jetstream(nc).publish(STUDIO_SUBJECT, JSON.stringify(a), { msgID: a.identity });
    return a;
  } finally {
    await nc.close();
  }
}

describe('Settings → Studio in the app core', () => {
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
    await announce(nats.url, source, 'studio-cam');
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
    await announce(nats.url, source, 'earlier-cam');

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
      expect(nats.log().match(/authentication error/g)).toHaveLength(1);
      expect((await core.handlers['studio:get']()).status.state).toBe('error');

      const connected = nextView(core, (v) => v.status.state === 'connected');
      await core.handlers['studio:setCredentials'](nats.url, { user: 'studio', password: 'right-pass' });
      await connected;
      expect(nats.log().match(/authentication error/g)).toHaveLength(1);
    },
  );

  it('refuses a studio URL that is not nats:// or tls://, naming the field', async () => {
    const { core } = await makeCore();
    await expect(core.handlers['studio:set']({ mode: 'follow', url: null, name: null })).rejects.toThrow(
      /studio URL is needed/,
    );
  });
});
