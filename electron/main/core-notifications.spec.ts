/**
 * The app core's notifications as the producer sees them: a real demo core (embedded sandbox over HTTP, real
 * temp folders) wired to NotificationService as electron/main/index.ts wires it, with only Electron's
 * Notification faked. Covers "channel X is live" (its own setting, off by default), a refused web client
 * upload, a recording expected but not received (gap report entry, notification, tray count), and, in Korean,
 * the reasons of a refused upload and of refused recordings said in Korean (they come from the core as notes).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeNotificationFactory } from '../../tests/fakes/electron.js';
import type { AppCore } from '../core/app/app-core.js';
import { createDemoCore, partsOf } from '../../tests/support/app/demo-core.js';
import type { AppCoreEvents } from '../core/app/types.js';
import { openSettingsStore } from '../core/settings.js';
import { notesTextIn } from '../shell-text.js';
import { NotificationService } from './notifications.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A started demo core whose `notify` events go through NotificationService, following the settings. */
async function notifyingCore(live: boolean, options: { language?: 'en' | 'ko'; maxUnfinishedJobs?: number } = {}) {
  const home = await mkdtemp(join(tmpdir(), 'tally-notify-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  const recordingsFolder = join(home, 'recordings');
  openSettingsStore(home).update({ receiverPort: 0, recordingsFolder, notifications: { live } });
  const core = await createDemoCore(home, {
    // The demo never expects recordings by itself; these tests do, with a grace period they can wait out.
    pipelineOverrides: {
      expectRecordings: true,
      recordingGraceMs: 50,
      ...(options.maxUnfinishedJobs ? { maxUnfinishedJobs: options.maxUnfinishedJobs } : {}),
    },
  });
  cleanups.push(() => core.stop());
  const factory = fakeNotificationFactory();
  const popovers: number[] = [];
  const service = new NotificationService({
    createNotification: factory.create,
    isSupported: () => true,
    reveal: () => {},
    showPopover: () => popovers.push(1),
    language: () => options.language ?? 'en',
  });
  core.on('notify', (payload) => service.notify(payload));
  core.on('settings:changed', (settings) => service.setSettings(settings.notifications));
  await core.start();
  service.setSettings((await core.handlers['settings:get']()).notifications);
  const sandbox = partsOf(core).sandbox;
  return { core, sandbox, made: factory.made, popovers };
}

function next<E extends keyof AppCoreEvents>(
  core: AppCore,
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

/**
 * Latin words a Korean notification keeps: what the test itself named (a channel, an origin, a file), and Tally.
 * Anything else of two letters or more is English left in a Korean sentence.
 */
function englishIn(text: string, named: readonly string[]): string[] {
  let rest = text;
  for (const name of [...named, 'Tally']) rest = rest.split(name).join(' ');
  return rest.match(/[A-Za-z]{2,}/g) ?? [];
}

describe('app core notifications in Korean', () => {
  it('says why a web client upload was refused in Korean, naming the channel, stream and origin', async () => {
    const { core, made } = await notifyingCore(false, { language: 'ko' });
    const { uploadUrl } = await core.handlers['tunnel:status']();
    const refused = next(core, 'notify', (n) => n.kind === 'refused');
    const res = await fetch(String(uploadUrl), {
      method: 'POST',
      headers: { origin: 'https://not-allowed.example', 'content-type': 'audio/webm', 'x-filename': 'svc.ch-9RR.ogg' },
      body: Buffer.alloc(1000, 1),
    });
    expect(res.status).toBe(403);
    await refused;
    const [shown] = made;
    expect(shown?.options.title).toBe('클라이언트 녹화 거부됨');
    const body = String(shown?.options.body);
    expect(body).toMatch(/^ch-9\(상대 스트림\): 페이지 출처 https:\/\/not-allowed\.example은\(는\) /);
    expect(englishIn(body, ['ch-9', 'https://not-allowed.example'])).toEqual([]);

    // The popover's row says the same reason from the same notes (the Korean catalogue translates them there).
    const row = (await core.handlers['recordings:list']()).find((r) => r.state === 'refused');
    expect(row?.errorNotes?.[0]).toMatchObject({
      code: 'uploadRefused',
      params: { status: 403, reasonNote: 'uploadOriginRefused', origin: 'https://not-allowed.example' },
    });
  });

  it('says why new recordings are being refused in Korean', async () => {
    const { core, sandbox, made } = await notifyingCore(false, { language: 'ko', maxUnfinishedJobs: 1 });
    const pipeline = partsOf(core).pipeline;
    // Held, so the first recording stays unfinished and fills the cap of one.
    await pipeline.setDownloadsPaused(true);
    const hook = (id: string) =>
      fetch(pipeline.receiver.localUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id, url: `${sandbox.downloadOrigin}/${id}.mp4` }),
      }).then((r) => r.status);
    expect(await hook('held')).toBe(200);
    const refusing = next(core, 'notify', (n) => n.kind === 'refusing');
    expect(await hook('turned-away')).toBe(503);
    await refusing;
    const shown = made.find((n) => n.options.title === '새 녹화를 거부하고 있습니다');
    const body = String(shown?.options.body);
    expect(body).toMatch(/^다운로드를 기다리는 녹화가 1개로 /);
    expect(englishIn(body, [])).toEqual([]);
    // The health line says the same reason in Korean too (the tray tooltip and the popover header).
    const receiverSays = async () => {
      const health = await core.handlers['health:get']();
      return notesTextIn('ko', health.components.find((c) => c.id === 'receiver')?.reasonNotes ?? []);
    };
    await expect.poll(receiverSays).toMatch(/^새 녹화 웹훅을 거부하고 있습니다: 다운로드를 기다리는 녹화가 1개로 /);
    expect(englishIn(await receiverSays(), [])).toEqual([]);
  });
});
