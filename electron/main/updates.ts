/**
 * Updates of the tray app, through electron-updater (electron-builder's own updater): a check at start and once
 * a day, the download in the background (electron-updater verifies its SHA-512 against the feed's
 * `latest*.yml` before it keeps the file), the install when the app quits, and "Update ready: restart" in the
 * tray menu once a verified update is staged. Off in demo mode and in an unpackaged (development) run.
 *
 * The updater object comes in through the options, as every Electron object of this folder does: the app passes
 * electron-updater's `autoUpdater` (which needs Electron's `app` and `net`), the tests a real electron-updater
 * class built over a stand-in app adapter and Node's HTTP, so the feed, the version rule and the verification
 * are electron-updater's own in both.
 */
import { describeError } from './log.js';
import type { Log } from './log.js';

/** What this service uses of electron-updater's `AppUpdater` (its `autoUpdater` is one). */
export interface Updater {
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  allowDowngrade: boolean;
  logger: UpdaterLogger | null;
  setFeedURL(options: { provider: 'generic'; url: string }): void;
  checkForUpdates(): Promise<{ updateInfo: { version: string }; downloadPromise?: Promise<unknown> | null } | null>;
  on(event: 'update-downloaded', listener: (info: { version: string; downloadedFile?: string }) => void): unknown;
  on(event: 'update-not-available', listener: (info: { version: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** electron-updater's logger shape; its lines go to the app's log. */
export interface UpdaterLogger {
  info(message?: unknown): void;
  warn(message?: unknown): void;
  error(message?: unknown): void;
  debug?(message: string): void;
}

/** How often a running app looks for an update (once at start, then daily). */
export const UPDATE_CHECK_INTERVAL_MS = 24 * 60 * 60 * 1000;

export type UpdateState =
  | { state: 'off'; reason: 'demo' | 'development' }
  | { state: 'idle' }
  | { state: 'checking' }
  | { state: 'downloading'; version: string }
  | { state: 'ready'; version: string }
  | { state: 'failed'; message: string };

export interface UpdateServiceOptions {
  /** The updater, or null when this run cannot update itself (not packaged: development). */
  updater: Updater | null;
  /** The version running now (`app.getVersion()`), for the log. */
  currentVersion: string;
  /** The Update feed URL setting (null: the feed the build was published with, in its app-update.yml). */
  feedUrl: () => string | null;
  /** Demo mode: the sandbox stands in for the service, and the app does not change under a demo. */
  demo: () => boolean;
  /** A verified update is staged (version), or none is (null): the tray shows or hides its line. */
  onReadyChange: (version: string | null) => void;
  /**
   * Quits so that the staged update installs (electron-updater installs it as the app quits) and starts the app
   * again once this process has exited: relaunching after the exit, not before it, so the new instance does not
   * meet this one's single-instance lock.
   */
  restart: () => void;
  log: Log;
  /** Tests: the daily timer (default setInterval, unref'd so it never holds the process). */
  every?: (ms: number, run: () => void) => () => void;
}

const defaultEvery = (ms: number, run: () => void) => {
  const timer = setInterval(run, ms);
  timer.unref();
  return () => clearInterval(timer);
};

export class UpdateService {
  readonly #options: UpdateServiceOptions;
  #state: UpdateState = { state: 'idle' };
  #stopTimer: (() => void) | null = null;
  #feed: string | null | undefined = undefined;
  #check: Promise<void> | null = null;

  constructor(options: UpdateServiceOptions) {
    this.#options = options;
    const updater = options.updater;
    if (!updater) return;
    // Downloaded as soon as found (in the background), installed when the app quits; never to an older version.
    updater.autoDownload = true;
    updater.autoInstallOnAppQuit = true;
    updater.allowDowngrade = false;
    updater.logger = updaterLogger(options.log);
    updater.on('update-downloaded', (info) => {
      this.#set({ state: 'ready', version: info.version });
      options.log(`update ${info.version} downloaded and verified; it installs when Tally quits`);
    });
    updater.on('error', (error) => {
      if (this.#state.state === 'ready') return;
      this.#set({ state: 'failed', message: error.message });
    });
  }

  get state(): UpdateState {
    return this.#state;
  }

  /** Checks now and then daily. Does nothing in demo mode or in development. */
  start(): void {
    const off = this.#offReason();
    if (off) {
      this.#set({ state: 'off', reason: off });
      return;
    }
    void this.check();
    this.#stopTimer ??= (this.#options.every ?? defaultEvery)(UPDATE_CHECK_INTERVAL_MS, () => void this.check());
  }

  stop(): void {
    this.#stopTimer?.();
    this.#stopTimer = null;
  }

  /**
   * Settings changed: demo mode turned on stops the checks, turned off starts them; a new feed URL is used
   * from the next check.
   */
  settingsChanged(): void {
    const off = this.#offReason();
    if (off && this.#state.state !== 'ready') {
      this.stop();
      this.#set({ state: 'off', reason: off });
    } else if (!off && this.#state.state === 'off') {
      this.#set({ state: 'idle' });
      this.start();
    }
  }

  /**
   * One check, which downloads (and verifies) what it finds. Resolves when the check and any download it started
   * have ended; a failure is a state and a log line, never a throw.
   */
  check(): Promise<void> {
    const updater = this.#options.updater;
    if (!updater || this.#offReason() || this.#state.state === 'ready') return Promise.resolve();
    this.#check ??= this.#runCheck(updater).finally(() => (this.#check = null));
    return this.#check;
  }

  /** Quits, installs the staged update and starts again (the tray's "Update ready: restart"). */
  restartToUpdate(): void {
    if (this.#state.state !== 'ready') return;
    this.#options.log(`restarting to install update ${this.#state.version}`);
    this.#options.restart();
  }

  async #runCheck(updater: Updater): Promise<void> {
    const feed = this.#options.feedUrl();
    if (feed !== this.#feed && feed !== null) updater.setFeedURL({ provider: 'generic', url: feed });
    // electron-updater reads the build's own feed (app-update.yml) only until a feed is set: back to it at next start.
    if (feed === null && typeof this.#feed === 'string') {
      this.#options.log(`the Update feed URL was cleared: ${this.#feed} is used until Tally starts again`);
    }
    if (feed !== null || this.#feed === undefined) this.#feed = feed;
    this.#set({ state: 'checking' });
    try {
      const found = await updater.checkForUpdates();
      const download = found?.downloadPromise;
      if (!found || !download) {
        if (this.#state.state === 'checking') this.#set({ state: 'idle' });
        return;
      }
      this.#set({ state: 'downloading', version: found.updateInfo.version });
      this.#options.log(`update ${found.updateInfo.version} found (running ${this.#options.currentVersion})`);
      await download;
    } catch (error) {
      // electron-updater emits 'error' too (a refused checksum, an unreachable feed): one line here, with the why.
      this.#options.log(`update check failed: ${describeError(error)}`);
      if (this.#state.state !== 'ready') {
        this.#set({ state: 'failed', message: error instanceof Error ? error.message : String(error) });
      }
    }
  }

  #offReason(): 'demo' | 'development' | null {
    if (!this.#options.updater) return 'development';
    return this.#options.demo() ? 'demo' : null;
  }

  #set(state: UpdateState): void {
    const wasReady = this.#state.state === 'ready' ? this.#state.version : null;
    this.#state = state;
    const ready = state.state === 'ready' ? state.version : null;
    if (ready !== wasReady) this.#options.onReadyChange(ready);
  }
}

/** electron-updater's own lines, into the app's log under the service's scope. */
function updaterLogger(log: Log): UpdaterLogger {
  const line = (level: string) => (message?: unknown) =>
    log(`updater ${level}: ${message instanceof Error ? describeError(message) : String(message)}`);
  return { info: line('info'), warn: line('warn'), error: line('error') };
}
