/**
 * The popover: a frameless window anchored to the tray icon that hides when it loses focus. It is
 * created lazily on first use. When its renderer dies (`render-process-gone`) the page is loaded again in a new
 * one and the producer is told (`onRendererGone`); a renderer that keeps dying (RELOADS_PER_MINUTE) is dropped
 * instead, and the next click builds a new window. A page that stops answering (`unresponsive`) for
 * UNRESPONSIVE_RELOAD_MS is crashed and reloaded the same way; a preload that fails (`preload-error`) is logged.
 * The BrowserWindow factory and the screen are injected, so the behaviour is tested in plain Node with fakes.
 */
import type { BrowserWindow, BrowserWindowConstructorOptions, Display, Point, Rectangle } from 'electron';
import type { AppPage } from './ipc.js';
import { isAppPageUrl } from './ipc.js';
import { computePopoverPosition, hasUsableBounds } from './popover-position.js';
import { systemClock } from '../core/time.js';
import { hardenWebContents } from './security.js';

export const POPOVER_SIZE = Object.freeze({ width: 380, height: 560 });

/**
 * A click on the tray icon first blurs (and so hides) an open popover on Windows and Linux, then
 * arrives as a click that would open it again. A click this soon after a blur-hide means "close".
 */
export const BLUR_CLICK_GRACE_MS = 150;

/** Reloads after a dead renderer within a minute, beyond which the window is dropped instead. */
export const RELOADS_PER_MINUTE = 3;
/** How long the page may stop answering before its renderer is crashed and the page reloaded. */
export const UNRESPONSIVE_RELOAD_MS = 10_000;

export interface PopoverScreen {
  getCursorScreenPoint(): Point;
  getDisplayNearestPoint(point: Point): Display;
  getDisplayMatching(rect: Rectangle): Display;
}

export interface PopoverOptions {
  createWindow: (options: BrowserWindowConstructorOptions) => BrowserWindow;
  /** Absolute path of dist/preload/index.cjs. */
  preloadPath: string;
  page: AppPage;
  screen: PopoverScreen;
  /** Opens a URL outside the app (already vetted by `openExternalSafe`). */
  openExternal: (url: string) => void;
  platform?: NodeJS.Platform;
  /** Monotonic milliseconds (time.ts's `systemClock.now` by default): the blur grace and the reload count. */
  now?: () => number;
  devTools?: boolean;
  /** The popover became visible or hidden (live polling runs only while it is visible). */
  onVisibilityChange?: (visible: boolean) => void;
  /** A new window exists (to attach the event pusher to its webContents). */
  onWindowCreated?: (window: BrowserWindow) => void;
  /** The page started a new document (load or reload): pushed events must wait for it. */
  onPageLoading?: () => void;
  /** The page's renderer died (or hung) and the page was loaded again (`reloaded`) or the window dropped. */
  onRendererGone?: (info: { reason: string; reloaded: boolean }) => void;
  log?: (line: string) => void;
}

/** The window options: locked-down web preferences whatever else changes. */
export function popoverWindowOptions(
  preloadPath: string,
  platform: NodeJS.Platform,
  devTools = false,
): BrowserWindowConstructorOptions {
  return {
    width: POPOVER_SIZE.width,
    height: POPOVER_SIZE.height,
    show: false,
    frame: false,
    resizable: false,
    movable: false,
    minimizable: false,
    maximizable: false,
    fullscreenable: false,
    skipTaskbar: true,
    alwaysOnTop: true,
    title: 'Tally',
    ...(platform === 'darwin' ? { hiddenInMissionControl: true } : {}),
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
      navigateOnDragDrop: false,
      devTools,
    },
  };
}

export class PopoverWindow {
  readonly #options: PopoverOptions;
  readonly #platform: NodeJS.Platform;
  readonly #now: () => number;
  #window: BrowserWindow | null = null;
  #pageReady = false;
  #showWhenReady: Rectangle | null | undefined = undefined;
  #hiddenByBlurAt = Number.NEGATIVE_INFINITY;
  #allowClose = false;
  #holds = 0;
  /** When the renderer died lately (the reload guard counts those within a minute). */
  #gone: number[] = [];

  constructor(options: PopoverOptions) {
    this.#options = options;
    this.#platform = options.platform ?? process.platform;
    this.#now = options.now ?? systemClock.now;
  }

  /** The window if it exists (it is created on first show). */
  get window(): BrowserWindow | null {
    return this.#window && !this.#window.isDestroyed() ? this.#window : null;
  }

  isVisible(): boolean {
    return this.window?.isVisible() ?? false;
  }

  /**
   * Tray click: hides an open popover, otherwise shows it next to the icon. A click right after the
   * popover hid on blur is that same click's blur, so it leaves the popover closed.
   */
  toggle(trayBounds?: Rectangle | null): void {
    if (this.isVisible()) {
      this.hide();
      return;
    }
    if (this.#now() - this.#hiddenByBlurAt < BLUR_CLICK_GRACE_MS) return;
    this.show(trayBounds);
  }

  /** Shows the popover anchored to the tray bounds (or near the cursor when they are unknown). */
  show(trayBounds?: Rectangle | null): void {
    const win = this.#ensureWindow();
    if (!this.#pageReady) {
      // First load: show once painted, without a white flash.
      this.#showWhenReady = trayBounds ?? null;
      return;
    }
    this.#place(win, trayBounds);
    win.show();
    win.focus();
  }

  hide(): void {
    const win = this.window;
    if (win?.isVisible()) win.hide();
  }

  /** Shows the popover on a page section, e.g. `settings` (the renderer routes on the hash). */
  showSection(section: string, trayBounds?: Rectangle | null): void {
    const hash = `#${encodeURIComponent(section)}`;
    const existing = this.window;
    if (existing) {
      // Same page, new fragment: an in-page navigation, the page keeps its state.
      void existing
        .loadURL(this.#pageUrl() + hash)
        .catch((error: unknown) => this.#log(`could not open ${section}: ${String(error)}`));
    } else {
      this.#ensureWindow(hash);
    }
    this.show(trayBounds);
  }

  /**
   * Keeps the popover open while `task` runs: a native dialog (folder picker, message box) takes focus,
   * and the blur must not hide the dialog's parent under it.
   */
  async whileHeldOpen<T>(task: () => Promise<T>): Promise<T> {
    this.#holds++;
    try {
      return await task();
    } finally {
      this.#holds--;
    }
  }

  /** Lets the window close for real (called when the app quits). */
  allowClose(): void {
    this.#allowClose = true;
  }

  destroy(): void {
    this.#allowClose = true;
    this.window?.destroy();
    this.#window = null;
  }

  #pageUrl(): string {
    return this.#options.page.devServerUrl || this.#options.page.fileUrl;
  }

  #ensureWindow(hash = ''): BrowserWindow {
    const existing = this.window;
    if (existing) return existing;
    const options = this.#options;
    const win = options.createWindow(popoverWindowOptions(options.preloadPath, this.#platform, options.devTools));
    this.#window = win;
    this.#pageReady = false;
    const contents = win.webContents;

    hardenWebContents(contents, {
      isAppPage: (url) => isAppPageUrl(url, options.page),
      openExternal: options.openExternal,
    });
    if (this.#platform === 'darwin') win.setVisibleOnAllWorkspaces(true, { visibleOnFullScreen: true });

    win.on('blur', () => {
      if (this.#holds > 0 || !win.isVisible() || contents.isDevToolsOpened()) return;
      this.#hiddenByBlurAt = this.#now();
      win.hide();
    });
    win.on('show', () => options.onVisibilityChange?.(true));
    win.on('hide', () => options.onVisibilityChange?.(false));
    win.on('close', (event) => {
      // Alt+F4 / Cmd+W hide the popover; only quitting closes it.
      if (this.#allowClose) return;
      event.preventDefault();
      win.hide();
    });
    win.on('closed', () => {
      if (this.#window === win) this.#window = null;
      options.onVisibilityChange?.(false);
    });
    win.once('ready-to-show', () => {
      this.#pageReady = true;
      const pending = this.#showWhenReady;
      this.#showWhenReady = undefined;
      if (pending !== undefined) this.show(pending);
    });
    contents.on('before-input-event', (_event, input) => {
      if (input.type === 'keyDown' && input.key === 'Escape') this.hide();
    });
    contents.on('did-start-navigation', (details) => {
      if (details.isMainFrame && !details.isSameDocument) options.onPageLoading?.();
    });
    contents.on('render-process-gone', (_event, details) => this.#rendererGone(win, details.reason, hash));
    contents.on('preload-error', (_event, path, error) => {
      // The page has no bridge without its preload: said in the log, where a bug report finds it.
      this.#log(
        `the preload ${path} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    });
    let hung: ReturnType<typeof setTimeout> | null = null;
    win.on('unresponsive', () => {
      this.#log(`popover page not answering; reloaded if it still is not in ${UNRESPONSIVE_RELOAD_MS / 1000} s`);
      hung ??= setTimeout(() => {
        hung = null;
        if (win.isDestroyed()) return;
        // Electron's way out of a hung renderer: crash it, which brings `render-process-gone` and the reload.
        contents.forcefullyCrashRenderer();
      }, UNRESPONSIVE_RELOAD_MS);
      hung.unref?.();
    });
    win.on('responsive', () => {
      if (hung) clearTimeout(hung);
      hung = null;
      this.#log('popover page answering again');
    });

    options.onWindowCreated?.(win);
    void win
      .loadURL(this.#pageUrl() + hash)
      .catch((error: unknown) => this.#log(`could not load the popover page: ${String(error)}`));
    return win;
  }

  /** The renderer of `win` died: the page is loaded again in a new one, unless it keeps dying. */
  #rendererGone(win: BrowserWindow, reason: string, hash: string): void {
    const now = this.#now();
    this.#gone = [...this.#gone.filter((at) => now - at < 60_000), now];
    if (this.#gone.length > RELOADS_PER_MINUTE) {
      this.#log(`popover renderer gone (${reason}) ${this.#gone.length} times within a minute; the window is dropped`);
      if (this.#window === win) this.#window = null;
      win.destroy();
      this.#options.onRendererGone?.({ reason, reloaded: false });
      return;
    }
    this.#log(`popover renderer gone (${reason}); the page is loaded again`);
    this.#options.onPageLoading?.();
    void win
      .loadURL(this.#pageUrl() + hash)
      .then(() => this.#options.onRendererGone?.({ reason, reloaded: true }))
      .catch((error: unknown) => this.#log(`could not load the popover page again: ${String(error)}`));
  }

  #place(win: BrowserWindow, trayBounds: Rectangle | null | undefined): void {
    const { screen } = this.#options;
    const cursor = screen.getCursorScreenPoint();
    const display = hasUsableBounds(trayBounds)
      ? screen.getDisplayMatching(trayBounds)
      : screen.getDisplayNearestPoint(cursor);
    const position = computePopoverPosition({
      trayBounds,
      workArea: display.workArea,
      windowSize: POPOVER_SIZE,
      platform: this.#platform,
      cursor,
    });
    win.setBounds({ ...position, ...POPOVER_SIZE });
  }

  #log(line: string): void {
    (this.#options.log ?? console.error)(`[popover] ${line}`);
  }
}
