import { describe, expect, it } from 'vitest';
import { fakeDisplay, fakeEvent, fakeScreen, fakeWindowFactory } from '../../tests/fakes/electron.js';
import type { FakeBrowserWindow } from '../../tests/fakes/electron.js';
import { BLUR_CLICK_GRACE_MS, PopoverWindow, POPOVER_SIZE } from './popover.js';

const page = { fileUrl: 'file:///opt/Tally/resources/app.asar/dist/renderer/index.html' };
const trayBounds = { x: 1700, y: 1048, width: 24, height: 32 };

function setup(platform: NodeJS.Platform = 'win32') {
  const factory = fakeWindowFactory();
  let now = 1_000;
  const visibility: boolean[] = [];
  const external: string[] = [];
  const loading: number[] = [];
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

  it('drops a window whose renderer died and builds a new one on the next show', () => {
    const { popover, factory, open } = setup();
    const first = open();
    first.webContents.emit('render-process-gone', fakeEvent(), { reason: 'crashed', exitCode: 1 });
    expect(first.destroyed).toBe(true);
    expect(popover.window).toBeNull();
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
