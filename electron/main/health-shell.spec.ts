/**
 * The tray app's shell for issue 19's worst case: the configured receiver port is held by another program and the
 * public address is an own URL, so the port cannot move. A real app core (no demo, in a temp home) is wired to the
 * tray and notification services as electron/main/index.ts wires them, with only Electron's Tray, Menu and
 * Notification faked: the tray must turn to its error icon with the port in the tooltip, and a notification says
 * so, without waiting for anyone to open the popover.
 */
import { createServer, type Server } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { fakeImage, fakeMenuBuilder, fakeNotificationFactory, FakeTray } from '../../tests/fakes/electron.js';
import { createAppCore } from '../core/app/app-core.js';
import { MemorySecretStore } from '../core/credentials.js';
import { openSettingsStore } from '../core/settings.js';
import { NotificationService } from './notifications.js';
import { SystemTrayService } from './tray.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('turns the tray to its error icon naming the held port, and notifies, when an own URL cannot get its port', async () => {
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => blocker.close(resolve)));
  const busy = (blocker.address() as { port: number }).port;

  const home = await mkdtemp(join(tmpdir(), 'tally-health-shell-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  openSettingsStore(home).update({
    receiverPort: busy,
    recordingsFolder: join(home, 'recordings'),
    demoMode: false,
    tunnel: { provider: 'url', publicUrl: 'https://tally.example.invalid' },
  });
  const core = await createAppCore({ home, secrets: new MemorySecretStore(), transport: 'ipc', env: {}, version: '9' });
  cleanups.push(() => core.stop());

  const trays: FakeTray[] = [];
  const tray = new SystemTrayService({
    platform: 'linux',
    createTray: (image) => {
      const t = new FakeTray(image);
      trays.push(t);
      return t.asElectron();
    },
    loadIcon: (state) => fakeImage(state),
    buildMenu: fakeMenuBuilder().build,
    showMessageBox: async () => ({ response: 0, checkboxChecked: false }),
    handlers: core.handlers,
    popover: { toggle: () => {}, show: () => {}, showSection: () => {} },
    openFolder: () => {},
    quit: () => {},
  });
  const factory = fakeNotificationFactory();
  const notifications = new NotificationService({
    createNotification: factory.create,
    isSupported: () => true,
    reveal: () => {},
    showPopover: () => {},
  });
  const errorShown = new Promise<void>((resolve) => {
    core.on('tray:snapshot', (snapshot) => {
      tray.setSnapshot(snapshot);
      if (snapshot.health.state === 'error') resolve();
    });
  });
  core.on('notify', (payload) => notifications.notify(payload));
  tray.setSnapshot(core.traySnapshot());
  notifications.setSettings((await core.handlers['settings:get']()).notifications);
  await core.start();
  await errorShown;

  const fake = trays[0]!;
  expect((fake.images.at(-1) as unknown as { fakeName: string }).fakeName).toBe('error');
  expect(fake.tooltips.at(-1)).toContain(`Port ${busy} is in use`);
  expect(core.traySnapshot().health).toMatchObject({ state: 'error', summary: expect.stringContaining(String(busy)) });
  const shown = factory.made.filter((n) => n.shown);
  expect(shown.map((n) => n.options.title)).toContain('Recordings are at risk');
  expect(shown.find((n) => n.options.title === 'Recordings are at risk')?.options.body).toContain(String(busy));
});
