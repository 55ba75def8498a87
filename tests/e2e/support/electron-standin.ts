/**
 * TEST STAND-IN for the `electron` module (no Electron runtime can be downloaded on these machines). The
 * shell end-to-end test aliases `electron` to this file (vitest.e2e.config.ts), then imports the real
 * `electron/main/index.ts`, which boots exactly as in the app: single-instance lock, session hardening, the
 * core, every IPC handler, tray, notifications.
 *
 * What is real: the main process code, `ipc.ts` with its sender check, the built preload bundle
 * (dist/preload/index.cjs, evaluated in the page with this module's `ipcRenderer`), the built renderer in
 * headless Chromium loaded from its file:// URL, and the session's network policy (its onBeforeRequest
 * listener decides every http(s) request the page makes).
 *
 * What it cannot show, and so only records: native menus and their rendering, window placement on a real
 * desktop, OS notifications, the tray icon itself, dialogs and the shell. The preload runs in the page's own
 * world: Chromium alone has no context isolation between a preload and the page, so the isolation of
 * `contextBridge` is not exercised here (popover.spec.ts checks the window options that turn it on). IPC
 * arguments cross as JSON (Playwright bindings), where Electron uses structured clone.
 *
 * Crashes (issue 33): a real renderer crash of the page (Playwright's page `crash`, e.g. after navigating to
 * chrome://crash) is emitted as the webContents' `render-process-gone`, and the next `loadURL` gives the window a
 * new page in the same context, as Electron gives it a new renderer process. `crashReporter.start` is recorded
 * only (no minidumps can be written without Electron's crashpad).
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

interface StandinConfig {
  browser: Browser;
  /** What `app.getAppPath()` returns: the project root (dist/ is loaded from there). */
  appPath: string;
  viewport?: { width: number; height: number };
}

let config: StandinConfig | null = null;

/** Everything the main process asked of the OS, for the test to assert on. */
export const recorded = {
  windows: [] as BrowserWindowStandin[],
  trays: [] as TrayStandin[],
  notifications: [] as NotificationStandin[],
  shell: [] as string[],
  clipboard: [] as string[],
  dialogs: [] as unknown[],
  applicationMenus: [] as unknown[],
  /** app.relaunch() calls. */
  relaunches: 0,
  /** crashReporter.start() options. */
  crashReporter: [] as unknown[],
  /** Errors thrown in pages (none expected). */
  pageErrors: [] as string[],
};

/** Observed by tests: 'tray' when the main process creates its tray, 'window', 'notification', 'quit'. */
export const standinEvents = new EventEmitter();

/** Called by the test before it imports the main process. */
export function configureStandin(options: StandinConfig): void {
  config = options;
}

function requireConfig(): StandinConfig {
  if (!config) throw new Error('electron stand-in: configureStandin() was not called before the main process started');
  return config;
}

// ---- app ------------------------------------------------------------------------------------------------------

class AppStandin extends EventEmitter {
  readonly isPackaged = false;
  readonly dock = undefined;
  readonly #paths = new Map<string, string>();
  #ready: () => void = () => {};
  readonly #whenReady = new Promise<void>((resolve) => (this.#ready = resolve));
  quitting = false;

  /** The test decides when the app is ready (after the main module has registered its handlers). */
  emitReady(): void {
    this.#ready();
    this.emit('ready');
  }
  whenReady(): Promise<void> {
    return this.#whenReady;
  }
  getAppPath(): string {
    return requireConfig().appPath;
  }
  getPath(name: string): string {
    const path = this.#paths.get(name);
    if (!path) throw new Error(`electron stand-in: app.getPath('${name}') was not set`);
    return path;
  }
  setPath(name: string, path: string): void {
    this.#paths.set(name, path);
  }
  getVersion(): string {
    return '0.0.0-standin';
  }
  getName(): string {
    return 'Tally';
  }
  requestSingleInstanceLock(): boolean {
    return true;
  }
  setAppUserModelId(): void {}
  enableSandbox(): void {}
  setBadgeCount(): boolean {
    return true;
  }
  setLoginItemSettings(): void {}
  /** The OS language Electron reports; the Language setting's "system" follows it. */
  getLocale(): string {
    return 'en-US';
  }
  /** Electron's order: 'before-quit' (cancellable), then 'will-quit' and 'quit'. */
  quit(): void {
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (prevented) return;
    this.quitting = true;
    this.emit('will-quit', { preventDefault() {} });
    this.emit('quit');
    standinEvents.emit('quit');
  }
  exit(code = 0): void {
    standinEvents.emit('quit', code);
  }
  /** Recorded: a real Electron starts a new instance once this one has quit. */
  relaunch(): void {
    recorded.relaunches += 1;
  }
}
export const app = new AppStandin();

// ---- ipcMain, and the renderer side that the preload gets ----------------------------------------------------

type MainListener = (event: unknown, ...args: unknown[]) => unknown;

class IpcMainStandin extends EventEmitter {
  readonly handlers = new Map<string, MainListener>();
  handle(channel: string, listener: MainListener): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
}
export const ipcMain = new IpcMainStandin();

/**
 * Runs in the page before any of its scripts: a `require('electron')` for the preload bundle whose
 * `ipcRenderer` talks to the Node side through one Playwright binding, and whose `contextBridge` puts the API
 * on `window`. Then the real preload bundle runs.
 */
function pageBootstrap(preloadSource: string): string {
  return `(() => {
  const listeners = new Map();
  const ipcRenderer = {
    invoke: (channel, ...args) => window.__electronStandinIpc('invoke', channel, JSON.stringify(args)).then((r) => JSON.parse(r)),
    send: (channel, ...args) => { void window.__electronStandinIpc('send', channel, JSON.stringify(args)); },
    on: (channel, listener) => { (listeners.get(channel) ?? listeners.set(channel, new Set()).get(channel)).add(listener); return ipcRenderer; },
    removeListener: (channel, listener) => { listeners.get(channel)?.delete(listener); return ipcRenderer; },
  };
  Object.defineProperty(window, '__electronStandinEmit', {
    value: (channel, json) => { for (const l of [...(listeners.get(channel) ?? [])]) l({}, ...JSON.parse(json)); },
  });
  const contextBridge = { exposeInMainWorld: (key, api) => Object.defineProperty(window, key, { value: api }) };
  const require = (name) => {
    if (name === 'electron') return { ipcRenderer, contextBridge };
    throw new Error('a sandboxed preload cannot require ' + name);
  };
  const module = { exports: {} };
  (function (require, module, exports) {\n${preloadSource}\n})(require, module, module.exports);
})();`;
}

// ---- windows --------------------------------------------------------------------------------------------------

class WebContentsStandin extends EventEmitter {
  page: Page | null = null;
  #destroyed = false;
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  readonly sent: { channel: string; args: unknown[] }[] = [];
  #sendChain: Promise<unknown> = Promise.resolve();

  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = handler;
  }
  isDestroyed(): boolean {
    return this.#destroyed;
  }
  isDevToolsOpened(): boolean {
    return false;
  }
  getURL(): string {
    return this.page?.url() ?? '';
  }
  /** Push to the page, in order (Electron keeps the order of messages on one webContents). */
  send(channel: string, ...args: unknown[]): void {
    this.sent.push({ channel, args });
    const page = this.page;
    if (!page) return;
    const json = JSON.stringify(args);
    this.#sendChain = this.#sendChain
      .then(() =>
        page.evaluate(
          ([c, a]) =>
            (globalThis as unknown as Record<string, (c: string, a: string) => void>).__electronStandinEmit?.(c, a),
          [channel, json] as const,
        ),
      )
      .catch(() => undefined);
  }
  destroy(): void {
    this.#destroyed = true;
  }
}

export class BrowserWindowStandin extends EventEmitter {
  readonly webContents = new WebContentsStandin();
  #visible = false;
  #destroyed = false;
  #bounds = { x: 0, y: 0, width: 0, height: 0 };
  #context: BrowserContext | null = null;
  #readyToShow = false;

  constructor(readonly options: Record<string, unknown> & { webPreferences?: Record<string, unknown> }) {
    super();
    this.#bounds = { x: 0, y: 0, width: Number(options.width ?? 800), height: Number(options.height ?? 600) };
    recorded.windows.push(this);
    standinEvents.emit('window', this);
  }

  /** Opens (or navigates) the Chromium page; the first load emits 'ready-to-show', as Electron does. */
  async loadURL(url: string): Promise<void> {
    const { browser, viewport } = requireConfig();
    const previous = this.webContents.page?.url() ?? null;
    this.#context ??= await browser.newContext({
      viewport: viewport ?? { width: this.#bounds.width, height: this.#bounds.height },
    });
    // A crashed page is replaced, as Electron gives the webContents a new renderer process.
    if (!this.webContents.page || this.#crashed) await this.#newPage(this.#context);
    const page = this.webContents.page as Page;
    const sameDocument = !this.#crashed && previous !== null && previous.split('#')[0] === url.split('#')[0];
    this.#crashed = false;
    this.webContents.emit('did-start-navigation', { url, isMainFrame: true, isSameDocument: sameDocument });
    await page.goto(url);
    if (!this.#readyToShow) {
      this.#readyToShow = true;
      this.emit('ready-to-show');
    }
  }

  #crashed = false;

  async #newPage(context: BrowserContext): Promise<void> {
    const old = this.webContents.page;
    const page = await context.newPage();
    this.webContents.page = page;
    void old?.close().catch(() => undefined);
    page.on('pageerror', (error) => recorded.pageErrors.push(error.message));
    page.on('crash', () => {
      this.#crashed = true;
      this.webContents.emit('render-process-gone', { preventDefault() {} }, { reason: 'crashed', exitCode: 139 });
    });
    if (!this.#policySet) {
      this.#policySet = true;
      await this.#enforceSessionPolicy(context);
    }
    const preloadPath = String(this.options.webPreferences?.preload ?? '');
    await page.exposeBinding('__electronStandinIpc', (source, kind: string, channel: string, json: string) =>
      this.#fromRenderer(source.frame.url(), kind, channel, JSON.parse(json) as unknown[]),
    );
    if (preloadPath) await page.addInitScript({ content: pageBootstrap(readFileSync(preloadPath, 'utf8')) });
  }

  #policySet = false;

  async #fromRenderer(frameUrl: string, kind: string, channel: string, args: unknown[]): Promise<string> {
    // What ipc.ts's sender check reads: this window's webContents, the main frame and its URL.
    const event = { sender: this.webContents, senderFrame: { url: frameUrl, parent: null } };
    if (kind === 'send') {
      ipcMain.emit(channel, event, ...args);
      return 'null';
    }
    const handler = ipcMain.handlers.get(channel);
    if (!handler) throw new Error(`No handler registered for '${channel}'`);
    return JSON.stringify((await handler(event, ...args)) ?? null);
  }

  /** The session's onBeforeRequest listener (security.ts) decides every http(s) request of the page. */
  async #enforceSessionPolicy(context: BrowserContext): Promise<void> {
    await context.route(/^https?:/, async (route) => {
      const decide = session.defaultSession.beforeRequest;
      const cancel = await new Promise<boolean>((resolve) => {
        if (!decide) resolve(false);
        else decide({ url: route.request().url() }, (response) => resolve(response.cancel === true));
      });
      if (cancel) await route.abort('blockedbyclient');
      else await route.continue();
    });
  }

  show(): void {
    this.#visible = true;
    this.emit('show');
  }
  hide(): void {
    if (!this.#visible) return;
    this.#visible = false;
    this.emit('hide');
  }
  focus(): void {
    this.emit('focus');
  }
  isVisible(): boolean {
    return this.#visible;
  }
  setBounds(bounds: Partial<{ x: number; y: number; width: number; height: number }>): void {
    this.#bounds = { ...this.#bounds, ...bounds };
  }
  getBounds(): { x: number; y: number; width: number; height: number } {
    return { ...this.#bounds };
  }
  setVisibleOnAllWorkspaces(): void {}
  setProgressBar(): void {}
  isDestroyed(): boolean {
    return this.#destroyed;
  }
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.webContents.destroy();
    void this.#context?.close();
    this.emit('closed');
  }
  close(): void {
    let prevented = false;
    this.emit('close', { preventDefault: () => (prevented = true) });
    if (!prevented) this.destroy();
  }
}
export { BrowserWindowStandin as BrowserWindow };

// ---- session, screen -----------------------------------------------------------------------------------------

type BeforeRequest = (details: { url: string }, callback: (response: { cancel?: boolean }) => void) => void;

export const session = {
  defaultSession: {
    beforeRequest: null as BeforeRequest | null,
    headersReceived: null as unknown,
    permissionRequestHandler: null as unknown,
    permissionCheckHandler: null as unknown,
    setPermissionRequestHandler(handler: unknown) {
      this.permissionRequestHandler = handler;
    },
    setPermissionCheckHandler(handler: unknown) {
      this.permissionCheckHandler = handler;
    },
    webRequest: {
      onBeforeRequest: (_filter: unknown, listener: BeforeRequest) => {
        session.defaultSession.beforeRequest = listener;
      },
      onHeadersReceived: (_filter: unknown, listener: unknown) => {
        session.defaultSession.headersReceived = listener;
      },
    },
  },
};

const DISPLAY = {
  id: 1,
  bounds: { x: 0, y: 0, width: 1920, height: 1080 },
  workArea: { x: 0, y: 32, width: 1920, height: 1048 },
  scaleFactor: 1,
};
export const screen = {
  getCursorScreenPoint: () => ({ x: 1800, y: 10 }),
  getDisplayNearestPoint: () => DISPLAY,
  getDisplayMatching: () => DISPLAY,
  getPrimaryDisplay: () => DISPLAY,
};

// ---- tray, menus, notifications, dialogs, shell, clipboard, images (recorded only) ---------------------------

export interface MenuItemStandin {
  label?: string;
  type?: string;
  enabled?: boolean;
  checked?: boolean;
  click?: () => void;
}
export class MenuStandin {
  constructor(readonly items: MenuItemStandin[]) {}
  static buildFromTemplate(template: MenuItemStandin[]): MenuStandin {
    return new MenuStandin(template.map((item) => ({ ...item })));
  }
  static setApplicationMenu(menu: MenuStandin | null): void {
    recorded.applicationMenus.push(menu);
  }
}
export { MenuStandin as Menu };

export class TrayStandin extends EventEmitter {
  image: unknown;
  tooltip = '';
  title = '';
  contextMenu: MenuStandin | null = null;
  destroyed = false;
  constructor(image: unknown) {
    super();
    this.image = image;
    recorded.trays.push(this);
    standinEvents.emit('tray', this);
  }
  setImage(image: unknown): void {
    this.image = image;
  }
  setToolTip(text: string): void {
    this.tooltip = text;
    standinEvents.emit('tray:update', this);
  }
  setTitle(text: string): void {
    this.title = text;
  }
  setContextMenu(menu: MenuStandin | null): void {
    this.contextMenu = menu;
    standinEvents.emit('tray:update', this);
  }
  setIgnoreDoubleClickEvents(): void {}
  popUpContextMenu(): void {}
  getBounds() {
    return { x: 1800, y: 0, width: 24, height: 24 };
  }
  destroy(): void {
    this.destroyed = true;
  }
  /** What the OS does when the icon is clicked. */
  click(): void {
    this.emit('click', { preventDefault() {} }, this.getBounds());
  }
}
export { TrayStandin as Tray };

export class NotificationStandin extends EventEmitter {
  shown = false;
  constructor(readonly options: { title?: string; body?: string; silent?: boolean }) {
    super();
  }
  static isSupported(): boolean {
    return true;
  }
  show(): void {
    this.shown = true;
    recorded.notifications.push(this);
    standinEvents.emit('notification', this);
  }
  close(): void {
    this.emit('close');
  }
}
export { NotificationStandin as Notification };

export const nativeImage = {
  createFromPath: (path: string) => ({ path, isEmpty: () => false }),
};

export const dialog = {
  showMessageBox: async (...args: unknown[]) => {
    recorded.dialogs.push(args.at(-1));
    return { response: 0, checkboxChecked: false };
  },
  showOpenDialog: async (...args: unknown[]) => {
    recorded.dialogs.push(args.at(-1));
    return { canceled: true, filePaths: [] };
  },
  showErrorBox: (title: string, content: string) => recorded.dialogs.push({ title, content }),
};

export const shell = {
  showItemInFolder: (path: string) => void recorded.shell.push(`reveal ${path}`),
  openPath: async (path: string) => {
    recorded.shell.push(`open ${path}`);
    return '';
  },
  openExternal: async (url: string) => void recorded.shell.push(`external ${url}`),
};

export const crashReporter = {
  start: (options: unknown) => void recorded.crashReporter.push(options),
};

export const clipboard = {
  writeText: async (text: string) => void recorded.clipboard.push(text),
  readText: async () => recorded.clipboard.at(-1) ?? '',
};

/** The default export, for code that reads `app`, `ipcMain` or `shell` from `import electron from 'electron'`. */
export default { app, ipcMain, shell, session, screen, dialog, clipboard, nativeImage, crashReporter };

/** Where the main process finds the preload and the page (for the test's own checks). */
export function builtPaths(root: string) {
  return {
    preload: join(root, 'dist', 'preload', 'index.cjs'),
    page: join(root, 'dist', 'renderer', 'index.html'),
  };
}
