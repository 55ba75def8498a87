/**
 * Small fakes of the Electron objects the main-process services receive. The Electron runtime cannot
 * run here, so these stand in for it: each records what the service did and lets a test play the OS
 * (emit a blur, click the tray, dismiss a dialog). They are named fakes, never passed off as Electron.
 */
import { EventEmitter } from 'node:events';
import type {
  BrowserWindow,
  BrowserWindowConstructorOptions,
  Display,
  Menu,
  MenuItemConstructorOptions,
  NativeImage,
  Notification,
  NotificationConstructorOptions,
  Point,
  Rectangle,
  Tray,
} from 'electron';

/** An Electron-style event object whose `preventDefault` is observable. */
export function fakeEvent<T extends object>(
  fields: T = {} as T,
): T & { defaultPrevented: boolean; preventDefault(): void } {
  return Object.assign(
    {
      defaultPrevented: false,
      preventDefault() {
        this.defaultPrevented = true;
      },
    },
    fields,
  );
}

export class FakeWebContents extends EventEmitter {
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  readonly sent: { channel: string; args: unknown[] }[] = [];
  readonly loaded: string[] = [];
  devToolsOpen = false;
  destroyed = false;

  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = handler;
  }
  send(channel: string, ...args: unknown[]): void {
    this.sent.push({ channel, args });
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  isDevToolsOpened(): boolean {
    return this.devToolsOpen;
  }
  async loadURL(url: string): Promise<void> {
    this.loaded.push(url);
  }
}

export class FakeBrowserWindow extends EventEmitter {
  readonly webContents = new FakeWebContents();
  readonly bounds: Rectangle[] = [];
  readonly progress: { value: number; mode: string | undefined }[] = [];
  visible = false;
  destroyed = false;
  focused = 0;
  allWorkspaces = false;

  constructor(readonly options: BrowserWindowConstructorOptions) {
    super();
  }
  show(): void {
    if (this.visible) return;
    this.visible = true;
    this.emit('show');
  }
  hide(): void {
    if (!this.visible) return;
    this.visible = false;
    this.emit('hide');
  }
  focus(): void {
    this.focused++;
  }
  isVisible(): boolean {
    return this.visible;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  destroy(): void {
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
  }
  setBounds(bounds: Rectangle): void {
    this.bounds.push(bounds);
  }
  setVisibleOnAllWorkspaces(flag: boolean): void {
    this.allWorkspaces = flag;
  }
  setProgressBar(value: number, options?: { mode?: string }): void {
    this.progress.push({ value, mode: options?.mode });
  }
  async loadURL(url: string): Promise<void> {
    return this.webContents.loadURL(url);
  }
  /** The OS painted the page. */
  paint(): void {
    this.emit('ready-to-show');
  }
  /** The OS moved focus elsewhere. */
  blur(): void {
    this.emit('blur');
  }
  asElectron(): BrowserWindow {
    return this as unknown as BrowserWindow;
  }
}

/** A BrowserWindow factory that remembers every window it made. */
export function fakeWindowFactory() {
  const windows: FakeBrowserWindow[] = [];
  const create = (options: BrowserWindowConstructorOptions): BrowserWindow => {
    const win = new FakeBrowserWindow(options);
    windows.push(win);
    return win.asElectron();
  };
  return { windows, create, last: () => windows[windows.length - 1] };
}

export function fakeDisplay(workArea: Rectangle, bounds: Rectangle = workArea): Display {
  return { workArea, bounds, id: workArea.x * 31 + workArea.y } as unknown as Display;
}

/** A screen with the given displays; matching picks the display with the largest overlap. */
export function fakeScreen(displays: Display[], cursor: Point = { x: 0, y: 0 }) {
  const overlap = (a: Rectangle, b: Rectangle) =>
    Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)) *
    Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const distance = (p: Point, r: Rectangle) =>
    Math.hypot(Math.max(r.x - p.x, 0, p.x - (r.x + r.width)), Math.max(r.y - p.y, 0, p.y - (r.y + r.height)));
  return {
    cursor,
    getCursorScreenPoint(): Point {
      return this.cursor;
    },
    getDisplayNearestPoint(point: Point): Display {
      return [...displays].sort((a, b) => distance(point, a.bounds) - distance(point, b.bounds))[0]!;
    },
    getDisplayMatching(rect: Rectangle): Display {
      return [...displays].sort((a, b) => overlap(rect, b.bounds) - overlap(rect, a.bounds))[0]!;
    },
  };
}

export class FakeTray extends EventEmitter {
  readonly images: NativeImage[] = [];
  readonly tooltips: string[] = [];
  readonly titles: string[] = [];
  readonly contextMenus: (Menu | null)[] = [];
  readonly poppedUp: Menu[] = [];
  ignoreDoubleClicks = false;
  destroyed = false;

  constructor(image: NativeImage) {
    super();
    this.images.push(image);
  }
  setImage(image: NativeImage): void {
    this.images.push(image);
  }
  setToolTip(text: string): void {
    this.tooltips.push(text);
  }
  setTitle(title: string): void {
    this.titles.push(title);
  }
  setContextMenu(menu: Menu | null): void {
    this.contextMenus.push(menu);
  }
  popUpContextMenu(menu: Menu): void {
    this.poppedUp.push(menu);
  }
  setIgnoreDoubleClickEvents(flag: boolean): void {
    this.ignoreDoubleClicks = flag;
  }
  destroy(): void {
    this.destroyed = true;
  }
  asElectron(): Tray {
    return this as unknown as Tray;
  }
}

/** A built menu: keeps its template so a test can read labels and click items. */
export interface FakeMenu {
  template: MenuItemConstructorOptions[];
}

export function fakeMenuBuilder() {
  const built: FakeMenu[] = [];
  const build = (template: MenuItemConstructorOptions[]): Menu => {
    const menu: FakeMenu = { template };
    built.push(menu);
    return menu as unknown as Menu;
  };
  return { built, build };
}

/** A native image that only knows which icon it is. */
export function fakeImage(name: string): NativeImage {
  return { fakeName: name } as unknown as NativeImage;
}

export class FakeNotification extends EventEmitter {
  shown = false;
  closed = false;
  constructor(readonly options: NotificationConstructorOptions) {
    super();
  }
  show(): void {
    this.shown = true;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }
  click(): void {
    this.emit('click');
  }
  /** What macOS does to an unsigned app since Electron 42. */
  fail(error: string): void {
    this.emit('failed', { preventDefault() {} }, error);
  }
}

export function fakeNotificationFactory() {
  const made: FakeNotification[] = [];
  const create = (options: NotificationConstructorOptions): Notification => {
    const notification = new FakeNotification(options);
    made.push(notification);
    return notification as unknown as Notification;
  };
  return { made, create };
}
