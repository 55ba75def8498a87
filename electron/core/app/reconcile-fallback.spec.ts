/**
 * A restart that fails for a reason other than the tunnel, against the app core with its real embedded sandbox
 * over HTTP and real files: the last setup that worked is reopened so webhooks keep being received, the change
 * is reported as not applied (naming the field), and when even that setup cannot reopen, the receiver is tried
 * again with a bounded backoff. A studio step that fails alone says so, not that recordings are not received.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startNatsServer } from '../../../tests/support/nats-server.js';
import { MemorySecretStore } from '../credentials.js';
import { openSettingsStore } from '../settings.js';
import { createAppCore } from './app-core.js';
import { REOPEN_BACKOFF, REOPEN_FIRST_MS, REOPEN_MAX_MS } from './reopen-backoff.js';
import { RetryLoop } from '../retry-loop.js';
import { systemClock } from '../time.js';
import {
  cleanups,
  collect,
  makeCore,
  next,
  receivesAndSaves,
  runCleanups,
  tempHome,
} from '../../../tests/support/app/core-helpers.js';

afterEach(runCleanups);

/** A real core (no credentials, not in demo) connected to a real nats-server in studio `mode`. */
async function studioCore(mode: 'receiver' | 'follow', name: string | null) {
  const nats = await startNatsServer();
  cleanups.push(() => nats.close());
  const home = await tempHome({ demoMode: false });
  const core = await createAppCore({ home, secrets: new MemorySecretStore(), transport: 'ws', env: {}, version: '1' });
  cleanups.push(() => core.stop());
  await core.start();
  const connected = next(core, 'studio:changed', (v) => v.status.state === 'connected');
  await core.handlers['studio:set']({ mode, url: nats.url, name });
  await connected;
  return { nats, home, core };
}

describe('AppCore when a restart fails for a reason other than the tunnel', () => {
  it('reopens the previous setup, keeps receiving, names the field, and applies the change once it is fixed', async () => {
    const home = await tempHome();
    const core = await makeCore(home);
    await core.start();
    const before = await core.handlers['tunnel:status']();
    expect(before.localUrl).not.toBeNull();

    // settings.json edited by hand: an address this computer does not have, so the new receiver cannot listen.
    openSettingsStore(home).update({ receiverHost: '192.0.2.1' });
    const errors = collect(core, 'app:error');
    await expect(core.handlers['settings:update']({ concurrency: 2 })).rejects.toThrow(
      /could not listen on 192\.0\.2\.1:0: EADDRNOTAVAIL\. Check receiverHost and receiverPort in settings\.json\./,
    );
    expect(errors.map((e) => e.payload.message)).toEqual([
      expect.stringMatching(
        /^The change could not be applied, so the previous setup is still receiving recordings: The webhook receiver could not listen on 192\.0\.2\.1:0/,
      ),
    ]);
    const status = await core.handlers['tunnel:status']();
    expect(status.localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\//);
    expect(status.messageNotes?.[0]).toEqual({ code: 'changeNotApplied' });
    // What the popover's status area keeps showing until the change applies.
    expect(status.restartProblem?.message).toBe(errors[0]?.payload.message);
    expect(status.restartProblem?.notes[0]).toEqual({ code: 'changeNotApplied' });
    expect(core.traySnapshot().attention).toBe('A change could not be applied');
    await receivesAndSaves(core, home, 'while-the-change-failed');

    // Fixed in the file: the next change applies and the error is gone.
    openSettingsStore(home).update({ receiverHost: '127.0.0.1' });
    await core.handlers['settings:update']({ concurrency: 3 });
    const fixed = await core.handlers['tunnel:status']();
    expect(fixed.messageNotes?.map((n) => n.code)).not.toContain('changeNotApplied');
    expect(fixed.restartProblem).toBeNull();
    expect(core.traySnapshot().attention).toBeNull();
    await receivesAndSaves(core, home, 'after-the-fix');
  });

  it('retries when even the previous setup cannot reopen, and receives again once the cause is gone', async () => {
    const home = await tempHome();
    const core = await makeCore(home);
    await core.start();
    // The recordings folder turned into a file behind the app's back: neither the new nor the old setup opens.
    await rm(join(home, 'recordings'), { recursive: true, force: true });
    await writeFile(join(home, 'recordings'), 'not a folder');
    const error = next(core, 'app:error');
    await expect(core.handlers['settings:update']({ tunnel: { provider: 'localtunnel' } })).rejects.toThrow(
      /recordings folder/,
    );
    expect((await error).message).toMatch(
      /^Recordings are not being received: .*recordings folder.* Retrying in 1 s\.$/,
    );
    expect(core.traySnapshot().attention).toBe('Recordings are not being received');
    const down = await core.handlers['tunnel:status']();
    expect(down.localUrl).toBeNull();
    expect(down.restartProblem?.notes.map((n) => n.code)).toEqual(['notReceiving', 'error', 'retryingSeconds']);
    // The health (tally status, the header) says the cause once, in its own sentence, with no stale countdown.
    const receiver = (await core.handlers['health:get']()).components.find((c) => c.id === 'receiver');
    expect(receiver?.reason).toMatch(/^The webhook receiver is not running: .*recordings folder/);
    expect(receiver?.reason).not.toMatch(/not being received|Retrying in/);

    // Nobody touches the settings again: the retry alone brings the receiver back.
    const back = next(core, 'tunnel:status', (s) => s.localUrl !== null);
    await rm(join(home, 'recordings'));
    await mkdir(join(home, 'recordings'));
    expect(await back).toMatchObject({ provider: 'localtunnel', restartProblem: null });
    expect(core.traySnapshot().attention).not.toBe('Recordings are not being received');
    await receivesAndSaves(core, home, 'after-the-retry');
  });

  it('waits longer after each failed reopen, up to once a minute, and never twice at once', () => {
    vi.useFakeTimers();
    try {
      const backoff = new RetryLoop({ policy: REOPEN_BACKOFF, clock: systemClock });
      let attempts = 0;
      const waits: number[] = [];
      for (let i = 0; i < 9; i++) {
        waits.push(backoff.retry(() => attempts++)!.delayMs);
        // A second failure before the timer fires replaces the pending attempt rather than adding one.
        backoff.retry(() => attempts++);
        vi.runOnlyPendingTimers();
        expect(attempts).toBe(i + 1);
      }
      expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60].map((s) => s * 1000));
      expect(waits[0]).toBe(REOPEN_FIRST_MS);
      expect(Math.max(...waits)).toBe(REOPEN_MAX_MS);
      backoff.reset();
      expect(backoff.retry(() => attempts++)?.delayMs).toBe(REOPEN_FIRST_MS);
      backoff.cancel();
      vi.runOnlyPendingTimers();
      expect(attempts).toBe(9);
    } finally {
      vi.useRealTimers();
    }
  });

  it("as the studio's receiver, shares what the reopened previous setup receives", async () => {
    const { home, core } = await studioCore('receiver', null);

    openSettingsStore(home).update({ receiverHost: '192.0.2.1' });
    await expect(core.handlers['settings:update']({ concurrency: 2 })).rejects.toThrow(/Check receiverHost/);
    const { uploadUrl } = await core.handlers['tunnel:status']();
    const shared = next(core, 'studio:changed', (v) =>
      v.recordings.some((r) => r.channelId === 'voice' && r.state === 'shared'),
    );
    const answer = await fetch(uploadUrl as string, {
      method: 'POST',
      headers: { 'content-type': 'audio/ogg', 'x-filename': 'voice.ogg' },
      body: Buffer.alloc(4_000, 7),
    });
    expect(answer.status).toBe(201);
    await shared;
  });

  it('says the studio failed, not that recordings are not received, when only the studio step fails', async () => {
    const { home, core, nats } = await studioCore('follow', 'member-a');

    // The follower's state folder replaced by a file: stopping it (to follow under another name) fails.
    const [followDir] = await readdir(join(home, 'studio'));
    await rm(join(home, 'studio', followDir as string), { recursive: true, force: true });
    await writeFile(join(home, 'studio', followDir as string), 'not a folder');
    const error = next(core, 'app:error');
    const view = await core.handlers['studio:set']({ mode: 'follow', url: nats.url, name: 'member-b' });

    expect(view.status.state).toBe('error');
    expect(view.status.notes?.[0]).toEqual({ code: 'studioFailed' });
    expect(view.status.message).toMatch(
      /^Studio sharing could not be started \(recordings are still received\): .*ENOTDIR/,
    );
    expect((await error).message).toBe(view.status.message);
    const tunnel = await core.handlers['tunnel:status']();
    expect(tunnel.localUrl).not.toBeNull();
    expect(tunnel.message ?? '').not.toContain('not being received');
    expect(core.traySnapshot().attention).not.toBe('Recordings are not being received');

    // The next studio change starts the follower again.
    const again = next(core, 'studio:changed', (v) => v.status.state === 'connected');
    await core.handlers['studio:set']({ mode: 'follow', url: nats.url, name: 'member-c' });
    await again;
  });
});
