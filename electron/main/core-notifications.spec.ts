/**
 * The app core's notifications as the producer sees them: a real demo core (embedded sandbox over HTTP, real
 * temp folders) wired to NotificationService as electron/main/index.ts wires it, with only Electron's
 * Notification faked. Covers "channel X is live" (its own setting, off by default), a refused web client
 * upload, and a recording expected but not received (gap report entry, notification, tray count).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeNotificationFactory } from '../../tests/fakes/electron.js';
import type { TallyAppCore } from '../core/app/app-core.js';
import { createDemoCore } from '../../tests/support/app/demo-core.js';
import type { AppCoreEvents } from '../core/app/types.js';
import type { Sandbox } from '../core/sandbox/index.js';
import { openSettingsStore } from '../core/settings.js';
import { NotificationService } from './notifications.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A started demo core whose `notify` events go through NotificationService, following the settings. */
async function notifyingCore(live: boolean) {
  const home = await mkdtemp(join(tmpdir(), 'tally-notify-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  const recordingsFolder = join(home, 'recordings');
  openSettingsStore(home).update({ receiverPort: 0, recordingsFolder, notifications: { live } });
  const core = await createDemoCore(home, {
    // The demo never expects recordings by itself; these tests do, with a grace period they can wait out.
    pipelineOverrides: { expectRecordings: true, recordingGraceMs: 50 },
  });
  cleanups.push(() => core.stop());
  const factory = fakeNotificationFactory();
  const popovers: number[] = [];
  const service = new NotificationService({
    createNotification: factory.create,
    isSupported: () => true,
    reveal: () => {},
    showPopover: () => popovers.push(1),
  });
  core.on('notify', (payload) => service.notify(payload));
  core.on('settings:changed', (settings) => service.setSettings(settings.notifications));
  await core.start();
  service.setSettings((await core.handlers['settings:get']()).notifications);
  const sandbox = core.testOnly.sandbox() as Sandbox;
  return { core, sandbox, made: factory.made, popovers };
}

function next<E extends keyof AppCoreEvents>(
  core: TallyAppCore,
  event: E,
  test: (payload: AppCoreEvents[E]) => boolean,
): Promise<AppCoreEvents[E]> {
  return new Promise((resolve) => {
    const off = core.on(event, (payload) => {
      if (test(payload)) {
        off();
        resolve(payload);
      }
    });
  });
}

describe('app core notifications through NotificationService', () => {
  it('shows "channel X is live" only while the live setting is on', async () => {
    const { core, sandbox, made, popovers } = await notifyingCore(true);
    const first = next(core, 'notify', (n) => n.kind === 'live');
    sandbox.control.startBroadcast({ id: 'on-air', record: false });
    await first;
    expect(made.map((n) => [n.options.title, n.options.body, n.shown])).toEqual([
      ['Channel live', 'on-air is live.', true],
    ]);
    made[0]!.click();
    expect(popovers).toHaveLength(1);

    await core.handlers['settings:update']({ notifications: { live: false } });
    const second = next(core, 'notify', (n) => n.kind === 'live');
    sandbox.control.startBroadcast({ id: 'quiet', record: false });
    expect(await second).toMatchObject({ body: 'quiet is live.' });
    expect(made).toHaveLength(1);
  });

  it('shows a refused web client upload with its channel and reason', async () => {
    const { core, made } = await notifyingCore(false);
    const { uploadUrl } = await core.handlers['tunnel:status']();
    const refused = next(core, 'notify', (n) => n.kind === 'refused');
    const res = await fetch(String(uploadUrl), {
      method: 'POST',
      headers: { origin: 'https://not-allowed.example', 'content-type': 'audio/webm', 'x-filename': 'svc.ch-9LL.ogg' },
      body: Buffer.alloc(1000, 1),
    });
    expect(res.status).toBe(403);
    await refused;
    expect(made).toHaveLength(1);
    expect(made[0]!.options.title).toBe('Client recording refused');
    expect(made[0]!.options.body).toMatch(/^ch-9 \(local stream\): .*not-allowed\.example/);
  });

  it('flags a closed channel whose recording never came: gap report, notification and tray count', async () => {
    const { core, sandbox, made } = await notifyingCore(false);
    const gaps = next(core, 'recordings:gaps', (g) => g.missing.some((m) => m.channelId === 'lost-1'));
    sandbox.control.startBroadcast({ id: 'lost-1', record: false });
    await sandbox.control.endBroadcast('lost-1');
    const report = await gaps;
    expect(report.missing.find((m) => m.channelId === 'lost-1')).toMatchObject({ live: true });
    expect((await core.handlers['recordings:gaps']()).missing[0]).toMatchObject({ channelId: 'lost-1', live: true });
    expect(made.map((n) => n.options.title)).toEqual(['Recording expected but not received']);
    expect(made[0]!.options.body).toMatch(/^lost-1 closed 0 min ago and no recording arrived/);
    expect(core.traySnapshot().attention).toBe('1 recording failed');
  });
});
