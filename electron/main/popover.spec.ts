import { describe, expect, it, vi } from 'vitest';
import { fakeDisplay, fakeEvent, fakeScreen, fakeWindowFactory } from '../../tests/fakes/electron.js';
import type { FakeBrowserWindow } from '../../tests/fakes/electron.js';
import {
  BLUR_CLICK_GRACE_MS,
  PopoverWindow,
  POPOVER_SIZE,
  RELOADS_PER_MINUTE,
  UNRESPONSIVE_RELOAD_MS,
} from './popover.js';

const page = { fileUrl: 'file:///opt/Tally/resources/app.asar/dist/renderer/index.html' };
const trayBounds = { x: 1700, y: 1048, width: 24, height: 32 };

function setup(platform: NodeJS.Platform = 'win32') {
  const factory = fakeWindowFactory();
  let now = 1_000;
  const visibility: boolean[] = [];
  const external: string[] = [];
  const loading: number[] = [];
  const gone: { reason: string; reloaded: boolean }[] = [];
  const popover = new PopoverWindow({
    createWindow: factory.create,
    preloadPath: '/opt/Tally/resources/app.asar/dist/preload/index.cjs',
    page,
    screen: fakeScreen([
      fakeDisplay({ x: 0, y: 0, width: 1920, height: 1040 }, { x: 0, y: 0, width: 1920, height: 1080 }),
    ]),
    openExternal: (url) => external.push(url),
    platform,
    now: () => now,
    onVisibilityChange: (visible) => visibility.push(visible),
    onPageLoading: () => loading.push(now),
    onRendererGone: (info) => gone.push(info),
    log: () => {},
  });
  /** Opens the popover for the first time (created lazily, shown once painted). */
  const open = (): FakeBrowserWindow => {
    popover.toggle(trayBounds);
    const win = factory.last()!;
    win.paint();
    return win;
  };
  return {
    popover,
    factory,
    visibility,
    external,
    loading,
    gone,
    open,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('PopoverWindow', () => {
  it('is created lazily with locked-down web preferences and the preload', () => {
    const { popover, factory } = setup();
    expect(factory.windows).toHaveLength(0);
    expect(popover.isVisible()).toBe(false);
    popover.show(trayBounds);
    const options = factory.last()!.options;
    expect(options).toMatchObject({
      frame: false,
      resizable: false,
      show: false,
      skipTaskbar: true,
      alwaysOnTop: true,
      fullscreenable: false,
      ...POPOVER_SIZE,
    });
    expect(options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      spellcheck: false,
      webviewTag: false,
      devTools: false,
      preload: '/opt/Tally/resources/app.asar/dist/preload/index.cjs',
    });
    expect(factory.last()!.webContents.loaded).toEqual([page.fileUrl]);
  });

  it('shows only once the page has painted, anchored to the tray', () => {
    const { popover, factory, visibility } = setup();
    popover.toggle(trayBounds);
    const win = factory.last()!;
    expect(win.visible).toBe(false);
    win.paint();
    expect(win.visible).toBe(true);
    expect(win.focused).toBe(1);
    expect(win.bounds.at(-1)).toEqual({ x: 1712 - 190, y: 1040 - 560 - 4, ...POPOVER_SIZE });
    expect(visibility).toEqual([true]);
  });

  it('hides on blur, and the tray click that caused the blur does not reopen it', () => {
    const { popover, open, advance, visibility } = setup();
    const win = open();
    win.blur();
    expect(win.visible).toBe(false);
    advance(BLUR_CLICK_GRACE_MS - 50);
    popover.toggle(trayBounds);
    expect(win.visible).toBe(false);
    advance(BLUR_CLICK_GRACE_MS);
    popover.toggle(trayBounds);
    expect(win.visible).toBe(true);
    expect(visibility).toEqual([true, false, true]);
  });

  it('a tray click on an open popover closes it', () => {
    const { popover, open } = setup('darwin');
    const win = open();
    expect(win.allWorkspaces).toBe(true);
    popover.toggle(trayBounds);
    expect(win.visible).toBe(false);
  });

  it('stays open while a native dialog holds focus, and hides on blur afterwards', async () => {
    const { popover, open } = setup();
    const win = open();
    let release!: () => void;
    const held = popover.whileHeldOpen(() => new Promise<void>((resolve) => (release = resolve)));
    win.blur();
    expect(win.visible).toBe(true);
    release();
    await held;
    win.blur();
    expect(win.visible).toBe(false);
  });

  it('does not hide on blur while DevTools are open', () => {
    const { open } = setup();
    const win = open();
    win.webContents.devToolsOpen = true;
    win.blur();
    expect(win.visible).toBe(true);
  });

  it('Escape hides it; other keys do not', () => {
    const { open } = setup();
    const win = open();
    win.webContents.emit('before-input-event', fakeEvent(), { type: 'keyDown', key: 'a' });
    expect(win.visible).toBe(true);
    win.webContents.emit('before-input-event', fakeEvent(), { type: 'keyDown', key: 'Escape' });
    expect(win.visible).toBe(false);
  });

  it('closing hides instead, until quitting allows it', () => {
    const { popover, open } = setup();
    const win = open();
    const close = fakeEvent();
    win.emit('close', close);
    expect(close.defaultPrevented).toBe(true);
    expect(win.visible).toBe(false);
    popover.allowClose();
    const quitting = fakeEvent();
    win.emit('close', quitting);
    expect(quitting.defaultPrevented).toBe(false);
  });

  it('loads the page again in a new renderer when its renderer dies, and says so', async () => {
    const { popover, factory, open, gone, loading } = setup();
    const first = open();
    const loadingBefore = loading.length;
    first.webContents.emit('render-process-gone', fakeEvent(), { reason: 'crashed', exitCode: 1 });
    expect(first.destroyed).toBe(false);
    expect(popover.window).toBe(first);
    expect(first.webContents.loaded).toEqual([page.fileUrl, page.fileUrl]);
    // Pushed events wait for the new page.
    expect(loading.length).toBeGreaterThan(loadingBefore);
    await expect.poll(() => gone).toEqual([{ reason: 'crashed', reloaded: true }]);
    expect(factory.windows).toHaveLength(1);
  });

  it('crashes and reloads a page that stops answering for UNRESPONSIVE_RELOAD_MS, not one that recovers', () => {
    vi.useFakeTimers();
    try {
      const { open } = setup();
      const win = open();
      let crashes = 0;
      Object.assign(win.webContents, { forcefullyCrashRenderer: () => crashes++ });
      win.emit('unresponsive');
      vi.advanceTimersByTime(UNRESPONSIVE_RELOAD_MS - 1);
      win.emit('responsive');
      vi.advanceTimersByTime(UNRESPONSIVE_RELOAD_MS);
      expect(crashes).toBe(0);
      win.emit('unresponsive');
      vi.advanceTimersByTime(UNRESPONSIVE_RELOAD_MS);
      expect(crashes).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('logs a preload that failed, with its error', () => {
    const lines: string[] = [];
    const factory = fakeWindowFactory();
    const popover = new PopoverWindow({
      createWindow: factory.create,
      preloadPath: '/p/index.cjs',
      page,
      screen: fakeScreen([
        fakeDisplay({ x: 0, y: 0, width: 800, height: 600 }, { x: 0, y: 0, width: 800, height: 600 }),
      ]),
      openExternal: () => {},
      log: (line) => lines.push(line),
    });
    popover.show(trayBounds);
    factory.last()!.webContents.emit('preload-error', fakeEvent(), '/p/index.cjs', new Error('bad bundle'));
    expect(lines.some((l) => l.startsWith('[popover] the preload /p/index.cjs failed: Error: bad bundle'))).toBe(true);
  });

  it('drops a window whose renderer keeps dying and builds a new one on the next show', () => {
    const { popover, factory, open, gone } = setup();
    const first = open();
    for (let i = 0; i < RELOADS_PER_MINUTE + 1; i++) {
      first.webContents.emit('render-process-gone', fakeEvent(), { reason: 'crashed', exitCode: 1 });
    }
    expect(first.destroyed).toBe(true);
    expect(popover.window).toBeNull();
    expect(gone).toContainEqual({ reason: 'crashed', reloaded: false });
    popover.show(trayBounds);
    expect(factory.windows).toHaveLength(2);
  });

  it('reports a new document (not in-page navigation) so pushed events wait for it', () => {
    const { open, loading } = setup();
    const win = open();
    win.webContents.emit('did-start-navigation', { isMainFrame: true, isSameDocument: false, url: page.fileUrl });
    win.webContents.emit('did-start-navigation', {
      isMainFrame: true,
      isSameDocument: true,
      url: `${page.fileUrl}#settings`,
    });
    win.webContents.emit('did-start-navigation', { isMainFrame: false, isSameDocument: false, url: 'about:blank' });
    expect(loading).toHaveLength(1);
  });

  it('opens a section by hash on the same page', () => {
    const { popover, open } = setup();
    const win = open();
    popover.showSection('settings');
    expect(win.webContents.loaded).toEqual([page.fileUrl, `${page.fileUrl}#settings`]);
    expect(win.visible).toBe(true);
  });

  it('opens a section in a new window with a single load', () => {
    const { popover, factory } = setup();
    popover.showSection('settings');
    const win = factory.last()!;
    expect(win.webContents.loaded).toEqual([`${page.fileUrl}#settings`]);
    win.paint();
    expect(win.visible).toBe(true);
  });

  it('hardens its web contents: no new windows, no navigation away, no webviews', () => {
    const { open, external } = setup();
    const win = open();
    const contents = win.webContents;
    expect(contents.windowOpenHandler?.({ url: 'https://ngrok.com/docs' })).toEqual({ action: 'deny' });
    expect(external).toEqual(['https://ngrok.com/docs']);

    const away = fakeEvent({ url: 'https://evil.example/' });
    contents.emit('will-navigate', away);
    expect(away.defaultPrevented).toBe(true);
    const samePage = fakeEvent({ url: `${page.fileUrl}#recordings` });
    contents.emit('will-navigate', samePage);
    expect(samePage.defaultPrevented).toBe(false);
    const otherFile = fakeEvent({ url: 'file:///etc/passwd' });
    contents.emit('will-frame-navigate', otherFile);
    expect(otherFile.defaultPrevented).toBe(true);
    const redirect = fakeEvent({ url: 'https://evil.example/' });
    contents.emit('will-redirect', redirect);
    expect(redirect.defaultPrevented).toBe(true);
    expect(external).toEqual(['https://ngrok.com/docs', 'https://evil.example/']);
    const webview = fakeEvent();
    contents.emit('will-attach-webview', webview, {}, {});
    expect(webview.defaultPrevented).toBe(true);
  });
});
