/**
 * Updates against a local feed over real HTTP on 127.0.0.1: electron-updater's own AppImageUpdater reads the
 * feed's latest-linux.yml, decides by version, downloads, checks the SHA-512 and stages the file; the tray shows
 * "Update ready: restart" and quitting installs it. Stand-ins (tests/support/update-feed.ts): Electron's `app`
 * (an app adapter over temp folders) and `net` (Node's http), and the tray's native objects (tests/fakes).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TraySnapshot } from '../core/app/types.js';
import { fakeImage, fakeMenuBuilder, FakeTray } from '../../tests/fakes/electron.js';
import { traySnapshot } from '../../tests/support/app/tray-snapshot.js';
import { appImageUpdater, pendingFolder, startUpdateFeed, type UpdateFeed } from '../../tests/support/update-feed.js';
import { SystemTrayService } from './tray.js';
import { UPDATE_CHECK_INTERVAL_MS, UpdateService, type Updater } from './updates.js';

const RUNNING = '0.1.0';

/** The "AppImage" a release ships: a script that, when installed and run, leaves a mark of its version. */
const release = (dir: string, version: string) =>
  Buffer.from(`#!/bin/sh\necho ${version} > '${join(dir, 'ran')}'\n`, 'utf8');

let dir: string;
let feed: UpdateFeed;
let savedAppImage: string | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tally-updates-'));
  feed = await startUpdateFeed();
  // The running AppImage (electron-updater replaces this file when it installs).
  savedAppImage = process.env.APPIMAGE;
  process.env.APPIMAGE = join(dir, 'Tally.AppImage');
  writeFileSync(process.env.APPIMAGE, 'the running 0.1.0', { mode: 0o755 });
});

afterEach(async () => {
  if (savedAppImage === undefined) delete process.env.APPIMAGE;
  else process.env.APPIMAGE = savedAppImage;
  await feed.close();
  rmSync(dir, { recursive: true, force: true });
});

function snapshot(): TraySnapshot {
  return traySnapshot({ health: { state: 'ok', summary: 'All is well.' }, recordingsFolder: dir });
}

function setup(
  options: { demo?: boolean; updater?: Updater | null; every?: (ms: number, run: () => void) => () => void } = {},
) {
  const { updater, quit } = appImageUpdater(dir, RUNNING);
  const lines: string[] = [];
  const menus = fakeMenuBuilder();
  const restarts: string[] = [];
  const tray = new SystemTrayService({
    platform: 'linux',
    createTray: (image) => new FakeTray(image).asElectron(),
    loadIcon: (state) => fakeImage(state),
    buildMenu: menus.build,
    showMessageBox: () => Promise.resolve({ response: 0, checkboxChecked: false }),
    handlers: { 'channels:end': () => Promise.resolve({ ended: true }), 'settings:update': () => Promise.reject() },
    popover: { toggle: () => {}, show: () => {}, showSection: () => {} },
    openFolder: () => {},
    quit: () => {},
    restartToUpdate: () => service.restartToUpdate(),
  });
  tray.setSnapshot(snapshot());
  const service = new UpdateService({
    updater: options.updater === undefined ? updater : options.updater,
    currentVersion: RUNNING,
    feedUrl: () => feed.url,
    demo: () => options.demo ?? false,
    onReadyChange: (version) => tray.setUpdateReady(version),
    restart: () => restarts.push('restart'),
    log: (line) => lines.push(line),
    every: options.every ?? (() => () => {}),
  });
  const last = () => menus.built.at(-1)?.template ?? [];
  const labels = () => last().map((item) => item.label ?? '-');
  const click = (label: string) => {
    const item = last().find((entry) => entry.label === label);
    (item?.click as (() => void) | undefined)?.();
  };
  return { service, updater, quit, lines, labels, click, restarts };
}

const staged = () => (existsSync(pendingFolder(dir)) ? readdirSync(pendingFolder(dir)) : []);

describe('updates from a generic feed', () => {
  it('finds a newer version, downloads it, verifies its SHA-512, stages it and shows the restart line', async () => {
    const bytes = release(dir, '0.2.0');
    feed.publish({ version: '0.2.0', fileName: 'Tally-0.2.0.AppImage', bytes });
    const t = setup();
    expect(t.labels()).not.toContain('Update ready: restart');

    await t.service.check();

    expect(t.service.state).toEqual({ state: 'ready', version: '0.2.0' });
    expect(feed.requests).toEqual(['/tally/latest-linux.yml', '/tally/Tally-0.2.0.AppImage']);
    // Staged in electron-updater's cache with the bytes the yml's SHA-512 names, and its own record of them.
    const file = staged().find((name) => name.endsWith('.AppImage'));
    expect(file).toBeDefined();
    expect(readFileSync(join(pendingFolder(dir), file!))).toEqual(bytes);
    expect(staged()).toContain('update-info.json');
    expect(t.labels()).toContain('Update ready: restart');

    // The line restarts; the install happens as the app quits (electron-updater's quit handler): the running
    // AppImage is replaced by the new one, which is run to finish installing.
    t.click('Update ready: restart');
    expect(t.restarts).toEqual(['restart']);
    t.quit(0);
    expect(readFileSync(process.env.APPIMAGE!)).toEqual(bytes);
    expect(readFileSync(join(dir, 'ran'), 'utf8')).toBe('0.2.0\n');
  });

  it('refuses a download whose SHA-512 does not match the feed, and keeps nothing of it', async () => {
    const bytes = release(dir, '0.2.0');
    const corrupted = Buffer.from(bytes);
    corrupted.writeUInt8(corrupted.readUInt8(corrupted.length - 2) ^ 0xff, corrupted.length - 2);
    feed.publish({ version: '0.2.0', fileName: 'Tally-0.2.0.AppImage', bytes, served: corrupted });
    const t = setup();

    await t.service.check();

    expect(t.service.state).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/sha512 checksum mismatch/),
    });
    expect(feed.requests).toContain('/tally/Tally-0.2.0.AppImage');
    expect(staged().filter((name) => name.endsWith('.AppImage'))).toEqual([]);
    expect(t.labels()).not.toContain('Update ready: restart');
    expect(t.lines.join('\n')).toMatch(/update check failed: .*sha512 checksum mismatch/);
    // Quitting installs nothing: the running AppImage stays.
    t.quit(0);
    expect(readFileSync(process.env.APPIMAGE!, 'utf8')).toBe('the running 0.1.0');
  });

  it('refuses an older version: nothing is downloaded and no restart is offered', async () => {
    feed.publish({ version: '0.0.9', fileName: 'Tally-0.0.9.AppImage', bytes: release(dir, '0.0.9') });
    const t = setup();

    await t.service.check();

    expect(t.service.state).toEqual({ state: 'idle' });
    expect(feed.requests).toEqual(['/tally/latest-linux.yml']);
    expect(staged()).toEqual([]);
    expect(t.labels()).not.toContain('Update ready: restart');
  });

  it('looks at start and then once a day', async () => {
    feed.publish({ version: '0.1.0', fileName: 'Tally-0.1.0.AppImage', bytes: release(dir, '0.1.0') });
    const timers: { ms: number; run: () => void }[] = [];
    const t = setup({ every: (ms, run) => (timers.push({ ms, run }), () => {}) });
    t.service.start();
    await t.service.check();
    expect(feed.requests).toEqual(['/tally/latest-linux.yml']);
    expect(timers.map((timer) => timer.ms)).toEqual([UPDATE_CHECK_INTERVAL_MS]);
    expect(UPDATE_CHECK_INTERVAL_MS).toBe(24 * 60 * 60 * 1000);
    timers[0]!.run();
    await t.service.check();
    expect(feed.requests).toEqual(['/tally/latest-linux.yml', '/tally/latest-linux.yml']);
    expect(t.service.state).toEqual({ state: 'idle' });
  });

  it('does not look for updates in demo mode or in development', async () => {
    feed.publish({ version: '0.2.0', fileName: 'Tally-0.2.0.AppImage', bytes: release(dir, '0.2.0') });
    const demo = setup({ demo: true });
    demo.service.start();
    await demo.service.check();
    expect(demo.service.state).toEqual({ state: 'off', reason: 'demo' });

    const development = setup({ updater: null });
    development.service.start();
    expect(development.service.state).toEqual({ state: 'off', reason: 'development' });
    expect(feed.requests).toEqual([]);
  });
});
