/**
 * The main-process side of the IPC transport: one `ipcMain.handle` per contract request, each checking
 * its sender, validating its arguments and wrapping failures in a `{ ok: false, error }` envelope; and
 * the push side, which holds events back until the page says it is ready. This file and the preload are
 * the only places that touch `ipcMain` / `ipcRenderer` (GitHub Desktop's `ipc-main.ts` idea).
 *
 * Electron objects are injected, so everything here runs under plain Node in tests.
 */
import { REQUEST_NAMES } from '../contract.js';
import type { EventMap, EventName, RequestHandlers } from '../contract.js';
import { dispatchRequest } from '../core/app/dispatch.js';
import { describeError } from './log.js';
import type { Log } from './log.js';
import { eventChannel, READY_CHANNEL, requestChannel } from '../preload/ipc-protocol.js';
import type { IpcReply } from '../preload/ipc-protocol.js';

/** The part of a `WebFrameMain` the sender check reads. */
export interface FrameLike {
  readonly url: string;
  readonly parent: FrameLike | null;
}

/** The part of an `IpcMainInvokeEvent` / `IpcMainEvent` the sender check reads. */
export interface SenderEvent {
  readonly sender: unknown;
  readonly senderFrame: FrameLike | null;
}

/** The part of `ipcMain` used here (a fake in tests). */
export interface IpcMainLike {
  handle(channel: string, listener: (event: SenderEvent, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
  on(channel: string, listener: (event: SenderEvent, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: SenderEvent, ...args: unknown[]) => void): unknown;
}

/** Where the app's page is loaded from: its file URL, or a dev server during development. */
export interface AppPage {
  /** `file://` URL of dist/renderer/index.html. */
  fileUrl: string;
  /** Vite dev server URL; only set when explicitly running in development. */
  devServerUrl?: string | null;
}

/**
 * Whether `url` is our own page: the exact file path of the renderer's index.html, or the dev server's
 * origin when one was explicitly configured. Query and hash are allowed (the page routes with the hash).
 */
export function isAppPageUrl(url: string, page: AppPage): boolean {
  let candidate: URL;
  try {
    candidate = new URL(url);
  } catch {
    return false;
  }
  const file = new URL(page.fileUrl);
  if (candidate.protocol === 'file:') {
    return file.protocol === 'file:' && candidate.host === file.host && candidate.pathname === file.pathname;
  }
  if (!page.devServerUrl) return false;
  const dev = new URL(page.devServerUrl);
  return candidate.origin === dev.origin && (candidate.pathname === '/' || candidate.pathname === '/index.html');
}

/**
 * GitHub Desktop's trusted-sender check: a request counts only if it comes from the popover's
 * webContents, from its main frame (never an iframe), showing our own page.
 */
export function createSenderCheck(options: {
  /** The popover's webContents, or null while it does not exist. */
  getWebContents: () => unknown;
  page: AppPage;
}): (event: SenderEvent) => boolean {
  return (event) => {
    const contents = options.getWebContents();
    const frame = event.senderFrame;
    if (!contents || event.sender !== contents || !frame) return false;
    if (frame.parent !== null) return false;
    return isAppPageUrl(frame.url, options.page);
  };
}

export interface RegisterIpcOptions {
  ipcMain: IpcMainLike;
  handlers: RequestHandlers;
  isTrustedSender: (event: SenderEvent) => boolean;
  /** Called when the trusted page signals it is ready for pushed events. */
  onReady?: () => void;
  log?: Log;
}

/**
 * Registers one handler per contract request (all of them, before any window exists) plus the ready
 * signal. Returns a function that removes them again.
 */
export function registerIpc(options: RegisterIpcOptions): () => void {
  const { ipcMain, handlers, isTrustedSender } = options;
  const log = options.log ?? ((line: string) => console.error(`[ipc] ${line}`));

  for (const name of REQUEST_NAMES) {
    ipcMain.handle(requestChannel(name), async (event, ...args): Promise<IpcReply> => {
      if (!isTrustedSender(event)) {
        log(`refused ${name} from an untrusted sender`);
        return { ok: false, error: { code: 'forbidden', message: 'This request is not allowed from here.' } };
      }
      // The same dispatcher as the WebSocket of `tally serve`: validation, envelope and error mapping in one place.
      return dispatchRequest(handlers, name, args, { log, describe: describeError });
    });
  }

  const onReady = (event: SenderEvent) => {
    if (isTrustedSender(event)) options.onReady?.();
  };
  ipcMain.on(READY_CHANNEL, onReady);

  return () => {
    for (const name of REQUEST_NAMES) ipcMain.removeHandler(requestChannel(name));
    ipcMain.removeListener(READY_CHANNEL, onReady);
  };
}

/** The part of a `WebContents` events are sent to. */
export interface PushTarget {
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
}

/**
 * Pushes core events to the popover, holding them back until the page has signalled ready (after a
 * load or reload), as electron/fiddle does. The queue keeps the latest state per event (per recording
 * for recording events), so a page that loads late gets the current picture, not a replay.
 */
export class EventPusher {
  readonly #limit: number;
  readonly #queue = new Map<string, { event: EventName; payload: unknown }>();
  #target: PushTarget | null = null;
  #ready = false;
  #serial = 0;

  constructor(options: { limit?: number } = {}) {
    this.#limit = options.limit ?? 200;
  }

  /** Sets the webContents to push to (or null); it is not ready until `markReady`. */
  attach(target: PushTarget | null): void {
    this.#target = target;
    this.#ready = false;
  }

  /** The page is (re)loading: hold events until it subscribes again. */
  reset(): void {
    this.#ready = false;
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** The page subscribed: send what was held back, oldest first. */
  markReady(): void {
    if (!this.#target || this.#target.isDestroyed()) return;
    this.#ready = true;
    const pending = [...this.#queue.values()];
    this.#queue.clear();
    for (const { event, payload } of pending) this.#target.send(eventChannel(event), payload);
  }

  send<E extends EventName>(event: E, payload: EventMap[E]): void {
    const target = this.#target;
    if (target && this.#ready && !target.isDestroyed()) {
      target.send(eventChannel(event), payload);
      return;
    }
    const key = queueKey(event, payload) ?? `${event}#${this.#serial++}`;
    // Re-inserting moves the entry to the end, so the flush keeps the order of the latest updates.
    this.#queue.delete(key);
    this.#queue.set(key, { event, payload });
    while (this.#queue.size > this.#limit) {
      const oldest = this.#queue.keys().next().value;
      if (oldest === undefined) break;
      this.#queue.delete(oldest);
    }
  }

  /** Number of events held back (for tests and diagnostics). */
  get pending(): number {
    return this.#queue.size;
  }
}

/** Events that describe a whole state coalesce to the latest one; errors are all kept (up to the limit). */
function queueKey(event: EventName, payload: unknown): string | null {
  if (event === 'app:error') return null;
  if (event === 'recordings:changed' || event === 'recordings:progress') {
    const key = (payload as { key?: unknown } | null)?.key;
    return typeof key === 'string' ? `${event}:${key}` : null;
  }
  return event;
}
