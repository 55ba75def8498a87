/**
 * The real Electron main process end to end: `electron/main/index.ts` boots over the `electron` stand-in
 * (support/electron-standin.ts, aliased in vitest.e2e.config.ts), so its boot sequence, `ipc.ts` with the
 * trusted-sender check, the built preload and the built renderer in Chromium run as one, against a sandbox
 * that stands in for the service over real HTTP. Native menus, placement and OS notifications are only
 * recorded by the stand-in (see its header for what it cannot show).
 *
 * The tests share one app and run in order, as a producer would use it: tray click, Live, end a channel,
 * Recordings, Settings, then the tray menu and notification after a recording is saved, then quit.
 */
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessageOf } from '../../electron/contract.js';
import { startSandbox, type Sandbox } from '../../electron/core/sandbox/index.js';
import { openSettingsStore } from '../../electron/core/settings.js';
import { launchChromium } from './browser.js';
import {
  app,
  builtPaths,
  configureStandin,
  recorded,
  standinEvents,
  type BrowserWindowStandin,
  type MenuItemStandin,
  type NotificationStandin,
  type TrayStandin,
} from './support/electron-standin.js';
import { ensureRendererBuilt } from './support/popover-harness.js';
import { screenshotsFolder } from './support/screenshots.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** The README's copies with TALLY_UPDATE_SCREENSHOTS=1, else test-results (see support/screenshots.ts). */
const SHOTS = screenshotsFolder(ROOT);

/**
 * The tray menu as the stand-in recorded it (labels, separators, the checkbox, disabled lines), drawn as a
 * desktop menu in Chromium: the stand-in has no native menu to photograph, so this shows the real labels.
 */
async function shootMenu(items: readonly MenuItemStandin[], path: string): Promise<void> {
  const escape = (text: string) =>
    text.replace(/&&/g, '&').replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c] ?? c);
  const rows = items
    .map((i) =>
      i.type === 'separator'
        ? '<hr>'
        : `<div class="${i.enabled === false ? 'off' : ''}"><span>${i.type === 'checkbox' && i.checked ? '✓' : ''}</span>${escape(i.label ?? '')}</div>`,
    )
    .join('');
  const page = await browser.newPage({ viewport: { width: 640, height: 60 + items.length * 26 } });
  try {
    await page.setContent(
      `<html lang="ko"><body style="margin:0;background:#d7dde4;font:13px 'Noto Sans CJK KR',sans-serif">` +
        `<style>.m{margin:12px;padding:4px 0;background:#fff;border-radius:8px;box-shadow:0 4px 16px #0003;display:inline-block;min-width:240px}` +
        `.m div{padding:4px 12px 4px 8px;display:flex;gap:4px;white-space:nowrap}.m span{width:16px}.off{color:#888}` +
        `hr{border:0;border-top:1px solid #ddd;margin:4px 0}</style><div class="m">${rows}</div></body></html>`,
    );
    await mkdir(SHOTS, { recursive: true });
    await page.locator('.m').screenshot({ path });
  } finally {
    await page.close();
  }
}
const eventually = { timeout: 15_000, interval: 50 };

let sandbox: Sandbox;
let browser: Browser;
let home: string;
let recordingsDir: string;
let tray: TrayStandin;
let win: BrowserWindowStandin;
let page: Page;
/** The webhook receiver's local URL, as the app reported it. */
let hookUrl = '';
const savedEnv = { ...process.env };
/** The main process's own 'unhandledRejection' handler (electron/main/crash.ts), called directly below. */
let mainRejectionHandler: ((reason: unknown, promise: Promise<unknown>) => void) | null = null;
/** The app's log file, as a producer would send it. */
const appLog = () => readFile(join(home, 'logs', 'app.1.log'), 'utf8').catch(() => '');

beforeAll(async () => {
  ensureRendererBuilt(ROOT);
  sandbox = await startSandbox({ searchIndexDelayMs: 0, seed: 11 });
  home = await mkdtemp(join(tmpdir(), 'tally-shell-e2e-'));
  recordingsDir = join(home, 'recordings');
  // Port 0: another test file may hold 8787. One-second live refresh keeps the walk short.
  // The first-run guide is covered by the popover tests; here the tray app opens on its tabs.
  openSettingsStore(home).update({
    receiverPort: 0,
    recordingsFolder: recordingsDir,
    pollIntervalSec: 1,
    firstRunDone: true,
  });
  // Two things the core warns about as it reads the settings (and handles): they must reach the log file.
  const settingsFile = join(home, 'settings.json');
  const raw = JSON.parse(await readFile(settingsFile, 'utf8')) as Record<string, unknown>;
  await writeFile(settingsFile, JSON.stringify({ ...raw, shellE2eUnknown: 1, secret: 'planted-secret-value' }));
  Object.assign(process.env, {
    TALLY_HOME: home,
    TALLY_SERVICE_ID: sandbox.credentials.serviceId,
    TALLY_SECRET: sandbox.credentials.secret,
    TALLY_BASE_URL: sandbox.endpoints.baseUrl,
    TALLY_CONSOLE_API_URL: sandbox.endpoints.consoleApiUrl,
    TALLY_ADMIN_URL: sandbox.endpoints.adminUrl,
    TALLY_DOWNLOAD_ORIGINS: sandbox.downloadOrigin,
  });
  // Electron's GrantFileProtocolExtraPrivileges fuse lets the file:// page load its module scripts; this
  // flag is Chromium's equivalent.
  browser = await launchChromium(['--allow-file-access-from-files']);
  configureStandin({ browser, appPath: ROOT });

  const trayCreated = once(standinEvents, 'tray') as Promise<[TrayStandin]>;
  const listenersBefore = new Set(process.listeners('unhandledRejection'));
  await import('../../electron/main/index.js');
  mainRejectionHandler = process.listeners('unhandledRejection').find((l) => !listenersBefore.has(l)) ?? null;
  app.emitReady();
  [tray] = await trayCreated;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sandbox?.close();
  if (home) await rm(home, { recursive: true, force: true });
  process.env = savedEnv;
});

describe('the tray app over the Electron stand-in', () => {
  it('opens the popover from the tray click: locked-down window, real preload, page from file://', async () => {
    const windowCreated = once(standinEvents, 'window') as Promise<[BrowserWindowStandin]>;
    tray.click();
    [win] = await windowCreated;
    expect(win.options.webPreferences).toMatchObject({
      preload: builtPaths(ROOT).preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    });
    if (!win.isVisible()) await once(win, 'show');
    page = win.webContents.page as Page;
    expect(page.url()).toMatch(/^file:\/\/.*\/dist\/renderer\/index\.html/);
    // The page talks over the preload's window.tally (IPC), not a WebSocket.
    expect(await page.evaluate(() => typeof (globalThis as { tally?: unknown }).tally)).toBe('object');
    await page.getByRole('tab', { name: 'Live' }).waitFor();
    // Anchored under the tray icon, on the display's work area.
    expect(win.getBounds()).toMatchObject({ width: 380, height: 560 });
    expect(win.getBounds().y).toBeGreaterThanOrEqual(32);
  });

  it('Live: shows a channel on air and ends it after the confirmation, over IPC', async () => {
    sandbox.control.startBroadcast({ id: 'shell-keynote', record: true, recordingBytes: 400_000, watchers: 12 });
    sandbox.control.startBroadcast({ id: 'shell-panel', record: false, watchers: 3 });
    const row = (id: string) =>
      page.getByRole('list', { name: 'Live channels' }).getByRole('listitem').filter({ hasText: id });
    await row('shell-keynote').waitFor();
    await row('shell-panel').waitFor();

    // The receiver's address comes from the app itself, through the preload, for the sandbox's webhook.
    const status = await page.evaluate(() =>
      (
        globalThis as unknown as { tally: { tunnel: { status(): Promise<{ localUrl: string | null }> } } }
      ).tally.tunnel.status(),
    );
    expect(status.localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\//);
    hookUrl = String(status.localUrl);
    sandbox.control.setWebhookUrl(hookUrl);

    await page.getByRole('button', { name: 'End channel shell-keynote…', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'End channel shell-keynote?' });
    await dialog.getByRole('button', { name: 'End channel', exact: true }).click();
    await row('shell-keynote').waitFor({ state: 'detached' });
    const ended = sandbox.control.listBroadcasts({ state: 'ended' }).find((b) => b.id === 'shell-keynote');
    expect(ended?.endedAt).toBeInstanceOf(Date);
    expect(sandbox.control.listBroadcasts({ state: 'live' }).map((b) => b.id)).toEqual(['shell-panel']);
  });

  it('Recordings: the ended channel’s recording is downloaded, verified and listed', async () => {
    await page.getByRole('tab', { name: 'Recordings' }).click();
    // Finished recordings are grouped by the day they arrived; the file name is in the item's details.
    const saved = page.getByRole('region', { name: 'Today' });
    await saved.getByText(/Saved and verified \(.*\) · .* · shell-keynote\.mp4/).waitFor({ timeout: 20_000 });
    const recording = sandbox.control.getRecording('shell-keynote');
    const bytes = await readFile(join(recordingsDir, 'shell-keynote.mp4'));
    expect(bytes.length).toBe(recording?.size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(await recording?.sha256());
  });

  it('after a save, the tray shows a notification and its menu reflects what is live', async () => {
    await expect
      .poll(() => recorded.notifications.map((n: NotificationStandin) => n.options.title), eventually)
      .toContain('Recording saved');
    const notification = recorded.notifications.find((n) => n.options.title === 'Recording saved');
    expect(notification?.options.body).toContain('shell-keynote');
    // Linux gets the menu attached (AppIndicator sends no clicks); it lists the channel still live.
    await expect
      .poll(() => tray.contextMenu?.items.map((i) => i.label ?? i.type), eventually)
      .toEqual(expect.arrayContaining(['Open Tally', '1 live', 'End shell-panel…']));
    // Clicking the notification reveals the file through the shell.
    notification?.emit('click');
    expect(recorded.shell.at(-1)).toBe(`reveal ${join(recordingsDir, 'shell-keynote.mp4')}`);
  });

  it('Settings: a change made in the page reaches the settings file through IPC', async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByText('Advanced', { exact: true }).click();
    const field = page.getByLabel('Parallel downloads');
    await field.fill('4');
    await field.press('Tab');
    await expect.poll(() => openSettingsStore(home).get().concurrency, eventually).toBe(4);
  });

  it('in Korean, the main process speaks Korean too: tray menu, tooltip and notifications (a refused upload’s reason too), no English left', async () => {
    await page.getByLabel('Language').selectOption('ko');
    await page.getByRole('tab', { name: '설정' }).waitFor();
    // The menu follows the Language setting at once, from the one catalogue the popover uses (shell-text.ts).
    await expect
      .poll(() => tray.contextMenu?.items.map((i) => i.label ?? i.type), eventually)
      .toEqual(
        expect.arrayContaining(['Tally 열기', '방송 중 1개', 'shell-panel 종료…', '녹화 폴더 열기', 'Tally 종료']),
      );
    const labels = (tray.contextMenu?.items ?? []).flatMap((i) => (i.label ? [i.label] : []));
    // Every label is Korean apart from names and terms kept in Latin letters (Tally, the channel ID, URL).
    const english = labels.filter((l) =>
      /[A-Za-z]{2,}/.test(l.replace(/Tally|shell-panel|URL|ngrok|localtunnel|\d+/g, '')),
    );
    expect(english).toEqual([]);
    expect(tray.tooltip).toMatch(/방송 중 1개/);
    await shootMenu(tray.contextMenu?.items ?? [], join(SHOTS, 'tray-menu-ko.png'));

    // A recording saved now is announced in Korean.
    sandbox.control.startBroadcast({ id: 'shell-korean', record: true, recordingBytes: 50_000, watchers: 1 });
    await sandbox.control.endBroadcast('shell-korean');
    await expect
      .poll(() => recorded.notifications.map((n: NotificationStandin) => n.options.title), eventually)
      .toContain('녹화 저장됨');
    const titles = recorded.notifications.slice(-1).map((n) => String(n.options.title));
    expect(titles.filter((t) => /[A-Za-z]{2,}/.test(t))).toEqual([]);

    // A web client recording refused (no page origin is allowed to upload): why, in Korean, from the core's notes.
    const { uploadUrl } = await page.evaluate(() =>
      (
        globalThis as unknown as { tally: { tunnel: { status(): Promise<{ uploadUrl: string | null }> } } }
      ).tally.tunnel.status(),
    );
    const upload = await fetch(String(uploadUrl), {
      method: 'POST',
      headers: {
        origin: 'https://stranger.example',
        'content-type': 'audio/ogg',
        'x-filename': 'svc.shell-panelLL.ogg',
      },
      body: 'OggS',
    });
    expect(upload.status).toBe(403);
    await expect
      .poll(() => recorded.notifications.map((n: NotificationStandin) => n.options.title), eventually)
      .toContain('클라이언트 녹화 거부됨');
    const refused = recorded.notifications.find((n) => n.options.title === '클라이언트 녹화 거부됨');
    const body = String(refused?.options.body);
    // No page origin is allowed in this app yet: that is the reason given.
    expect(body).toMatch(/^shell-panel\(내 스트림\): 업로드가 허용된 웹 앱 출처가 아직 없습니다/);
    expect(body.replace(/shell-panel|https:\/\/stranger\.example|Tally/g, '').match(/[A-Za-z]{2,}/g)).toBeNull();

    // Back to the system's language (English here) for the tests after this one; the menu follows.
    await page.getByLabel('언어').selectOption('system');
    await page.getByRole('tab', { name: 'Settings' }).waitFor();
    await expect
      .poll(() => tray.contextMenu?.items.map((i) => i.label ?? i.type), eventually)
      .toEqual(expect.arrayContaining(['Open Tally']));
  });

  it('refuses IPC from any other window, even one showing the same page (the trusted-sender check)', async () => {
    const { BrowserWindow } = await import('./support/electron-standin.js');
    const rogue = new BrowserWindow({ webPreferences: { preload: builtPaths(ROOT).preload } });
    try {
      await rogue.loadURL(page.url().split('#')[0] ?? '');
      const outcome = await rogue.webContents.page?.evaluate(() =>
        (globalThis as unknown as { tally: { settings: { get(): Promise<unknown> } } }).tally.settings.get().then(
          () => 'answered',
          (error: Error) => error.message,
        ),
      );
      // The message carries the error code after an invisible mark (see codedMessage in the contract).
      expect(errorMessageOf(outcome ?? '')).toBe('This request is not allowed from here.');
    } finally {
      rogue.destroy();
    }
  });

  it("writes the core's warnings to the app's log file in the data folder, secrets redacted", async () => {
    await expect.poll(appLog, eventually).toContain('settings: Ignored unknown setting \\"shellE2eUnknown\\".');
    const text = await appLog();
    expect(text).toContain('"scope":"core"');
    expect(text).toContain('Dropped \\"secret\\"');
    expect(text).not.toContain('planted-secret-value');
    expect(text).not.toContain(sandbox.credentials.secret);
  });

  it('logs an error nobody caught in main and carries on, with no dialog for a lost promise', async () => {
    expect(mainRejectionHandler).toBeTypeOf('function');
    const dialogsBefore = recorded.dialogs.length;
    mainRejectionHandler!(new Error('shell-e2e: lost promise'), Promise.resolve());
    mainRejectionHandler!(new Error('shell-e2e: lost again'), Promise.resolve());
    await expect.poll(appLog, eventually).toContain('shell-e2e: lost again');
    expect(await appLog()).toContain('unhandled promise rejection: Error: shell-e2e: lost promise');
    // A lost promise leaves the app sound: no modal over a tray app (issue 33).
    expect(recorded.dialogs.slice(dialogsBefore)).toEqual([]);
    expect(recorded.relaunches).toBe(0);
    // Still working: the page still answers over IPC.
    await page.getByRole('tab', { name: 'Live' }).click();
    await page.getByRole('list', { name: 'Live channels' }).waitFor();
  });

  it('forwards an error the page did not catch to the log, over the contract', async () => {
    await page.evaluate(() => {
      setTimeout(() => {
        throw new Error('shell-e2e: the page broke');
      });
    });
    await expect.poll(appLog, eventually).toContain('shell-e2e: the page broke');
    const line = (await appLog()).split('\n').find((l) => l.includes('shell-e2e: the page broke')) ?? '';
    expect(JSON.parse(line)).toMatchObject({
      level: 50,
      scope: 'renderer',
      // Thrown from evaluated code, so the browser names no file for it.
      msg: 'uncaught error in the page: Error: shell-e2e: the page broke',
    });
    // The stand-in saw it too; it is the page's own error, not one of the app's.
    expect(recorded.pageErrors.splice(0)).toEqual(['shell-e2e: the page broke']);
  });

  it('a renderer crash reloads the popover in a new renderer and says so', async () => {
    const crashedPage = page;
    const notificationsBefore = recorded.notifications.length;
    // A real renderer crash of Chromium's page; the stand-in reports it as `render-process-gone`.
    await crashedPage.goto('chrome://crash').catch(() => undefined);
    await expect.poll(() => win.webContents.page !== crashedPage, eventually).toBe(true);
    page = win.webContents.page as Page;
    await page.getByRole('tab', { name: 'Live' }).waitFor();
    // The reloaded page talks to the same core over IPC.
    await page.getByRole('tab', { name: 'Recordings' }).click();
    await page
      .getByRole('region', { name: 'Today' })
      .getByText(/shell-keynote\.mp4/)
      .waitFor();
    await expect
      .poll(() => recorded.notifications.slice(notificationsBefore).map((n) => n.options.title), eventually)
      .toEqual(['Tally’s window was reloaded']);
    expect(recorded.notifications.at(-1)?.options.body).toBe(
      'Its page stopped unexpectedly (crashed); nothing was lost.',
    );
    await expect.poll(appLog, eventually).toContain("the page's renderer stopped (crashed); reloaded");
    expect(await appLog()).toContain('popover renderer gone (crashed); the page is loaded again');
  });

  it('quits cleanly: the core stops (its receiver closes) before the app exits', async () => {
    expect((await fetch(hookUrl, { method: 'POST', body: '{}' })).status).toBeLessThan(500);
    const quit = once(standinEvents, 'quit');
    app.quit();
    await quit;
    expect(app.quitting).toBe(true);
    await expect(fetch(hookUrl, { method: 'POST', body: '{}' })).rejects.toThrow();
    expect(recorded.pageErrors).toEqual([]);
    // The event trail ends with the stop, after the receiver closed.
    const msgs = (await appLog())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(msgs.indexOf('receiver stopped (journal flushed, part files kept)')).toBeGreaterThan(-1);
    expect(msgs.at(-1)).toBe('Tally stopped');
  });
});
