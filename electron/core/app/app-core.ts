/**
 * The headless core behind both shells (Electron over IPC, `tally serve` over a WebSocket): one object that
 * owns settings, credentials, the service client (or the embedded demo sandbox), the live poller and the
 * recording pipeline, and implements every request of the contract.
 *
 * Everything that changes what runs (settings, credentials, demo mode) goes through one serial
 * `reconcile`: it works out the wanted mode, client and pipeline configuration from the settings file and
 * the keychain, and restarts only what differs. Cheap changes (folder, concurrency, pause, auto-register)
 * are applied to the running pipeline; anything the pipeline is built from restarts it.
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  AppInfo,
  ChannelView,
  CredentialsInput,
  CredentialsStatus,
  ErrorView,
  GapReport,
  RecordingView,
  RequestHandlers,
  SettingsPatch,
  SettingsView,
  TunnelStatus,
} from '../../contract.js';
import { ChannelApi } from '../api-client.js';
import { CredentialStore, PROJECT_ACCOUNT, credentialsFromEnv, type SecretStore } from '../credentials.js';
import { resolveEndpoints, type Endpoints } from '../endpoints.js';
import { BadCredentialsError, ConfigError, TallyError, ValidationError } from '../errors.js';
import { channelToJson, type Channel, type Credentials } from '../model.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { defaultRecordingsDir } from '../paths.js';
import type { GapReportResult } from '../recordings/gap-report.js';
import { RecordingPipeline, type PipelineEvents, type PipelineOptions } from '../recordings/pipeline.js';
import type { RecordingJob } from '../recordings/types.js';
import type { Sandbox, SandboxOptions } from '../sandbox/index.js';
import {
  applySettingsPatch,
  effectiveDemoMode,
  openSettingsStore,
  type SettingsBackendFactory,
  type Settings,
  type SettingsStore,
} from '../settings.js';
import { demoRecordingsDir, demoStateDir, startDemoSandbox, type DemoSandbox } from './demo.js';
import { checkFolder } from './folder-check.js';
import { HiddenRecordings } from './hidden-recordings.js';
import { LivePoller } from './live-poller.js';
import {
  ProgressThrottle,
  UPLOAD_KEY_PREFIX,
  changeSignature,
  newestFirst,
  recordingView,
  uploadView,
} from './recording-views.js';
import { toSettingsView, toStorePatch } from './settings-view.js';
import type { AppCore, AppCoreEvents, PlatformHooks, TraySnapshot } from './types.js';

/** Keychain entry binding the secret to the hosts it was entered for. */
const HOSTS_TOKEN = 'hosts';
const HOSTS_CHANGED =
  'The service hosts changed since the secret was entered, so it is not sent to them: enter the secret again to use the new hosts.';

export interface AppCoreOptions {
  /** State folder: settings, journal, tokens (appDataDir() or Electron's userData). */
  home: string;
  secrets: SecretStore;
  hooks?: PlatformHooks;
  transport: 'ipc' | 'ws';
  /** Force demo mode (`tally serve --sandbox`, TALLY_DEMO=1) until credentials are entered. */
  demo?: boolean;
  env?: NodeJS.ProcessEnv;
  version?: string;
  /**
   * Set when `secrets` is a stand-in because the OS keychain could not be used: the reason shown to the
   * producer. Credentials then come from the environment only and `credentials:set` refuses.
   */
  keychainUnavailable?: string | null;
  log?: (line: string) => void;
  /** How the settings file is opened: `conf` by default, `electron-store` in the Electron shell. */
  settingsBackend?: SettingsBackendFactory;
  /** Tests: options of the demo sandbox (timeFactor, seed, searchIndexDelayMs...). */
  sandboxOptions?: SandboxOptions;
  /** Demo mode: let the sandbox's web client upload a client recording whenever a broadcast ends (default on). */
  demoWebClient?: boolean;
  /** Tests: the live poll interval, instead of the pollIntervalSec setting. */
  pollIntervalMs?: number;
  /** Tests: pipeline options such as retryBaseMs or ngrokSdk. */
  pipelineOverrides?: Partial<PipelineOptions>;
}

/** The core plus accessors that exist for tests only. */
export interface TallyAppCore extends AppCore {
  readonly testOnly: {
    sandbox(): Sandbox | null;
    pipeline(): RecordingPipeline | null;
  };
}

/** Hidden polling (tray only) runs this many times slower than visible polling. */
export const BACKGROUND_POLL_FACTOR = 4;
/** At most four progress pushes per second and recording. */
const PROGRESS_INTERVAL_MS = 250;
/** A failed or expired recording asks for attention for a day; older ones are history. */
const ATTENTION_WINDOW_MS = 24 * 60 * 60 * 1000;

const NO_CREDENTIALS =
  'No credentials: enter the service ID and secret in Settings (or set TALLY_SERVICE_ID and TALLY_SECRET), or turn on demo mode.';
const NOT_STARTED = 'Tally is still starting; try again in a moment.';
const STOPPED = 'Tally is shutting down.';
const NO_PUBLIC_URL = 'Choose a tunnel provider first: the service cannot reach a loopback URL.';

type Phase = 'new' | 'running' | 'stopping' | 'stopped';

/** The version in the nearest package.json named tally (source tree, dist or the packaged app). */
export function readPackageVersion(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'tally' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // Not here; look one folder up.
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return '0.0.0';
}

function errorView(error: unknown): ErrorView {
  if (error instanceof TallyError) return { code: error.code, message: error.message };
  return { code: 'internal', message: 'Something went wrong inside Tally. Try again.' };
}

function describe(error: unknown): string {
  return error instanceof TallyError ? error.message : error instanceof Error ? error.name : 'unknown error';
}

function isAddressInUse(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return error instanceof ConfigError && cause?.code === 'EADDRINUSE';
}

/** Control characters in hostile text (channel IDs) must not forge log lines. */
function clean(text: string, max = 120): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function gapView(report: GapReportResult | null): GapReport {
  if (!report) return { since: null, checkedAt: null, missing: [], error: null };
  return {
    since: report.since ? report.since.toISOString() : null,
    checkedAt: report.checkedAt.toISOString(),
    missing: report.missing.map((m) => ({ channelId: m.channelId, endedAt: m.endedAt.toISOString() })),
    error: report.error,
  };
}

class Core implements TallyAppCore {
  readonly handlers: RequestHandlers;
  readonly testOnly = {
    sandbox: (): Sandbox | null => this.#sandbox,
    pipeline: (): RecordingPipeline | null => this.#pipeline,
  };

  readonly #opts: AppCoreOptions;
  readonly #env: NodeJS.ProcessEnv;
  readonly #hooks: PlatformHooks;
  readonly #log: (line: string) => void;
  readonly #settings: SettingsStore;
  readonly #creds: CredentialStore;
  readonly #events = new EventEmitter();
  readonly #poller: LivePoller;
  readonly #progress: ProgressThrottle;
  readonly #signatures = new Map<string, string>();
  #version = '0.0.0';
  #keychain: { available: boolean; message: string | null } = { available: true, message: null };
  /**
   * The service hosts the credentials are trusted with (see #loadCredentials). Null until first loaded.
   * The renderer may change the hosts through settings; it must never be able to send the secret elsewhere.
   */
  #trustedHosts: string | null = null;
  #hostsChanged = false;

  #phase: Phase = 'new';
  #queue: Promise<void> = Promise.resolve();
  #startPromise: Promise<void> | null = null;
  #stopPromise: Promise<void> | null = null;

  /** Demo mode was forced by the shell and not yet left by entering credentials. */
  #forceDemo: boolean;
  #demo = false;
  #sandbox: DemoSandbox | null = null;
  #detachWebClient: (() => void) | null = null;
  #api: ChannelApi | null = null;
  #apiCredentials: Credentials | null = null;
  #apiKey: string | null = null;
  #pipeline: RecordingPipeline | null = null;
  /** State folder of the pipeline last configured (where its removed-from-list keys live). */
  #pipelineStateDir: string | null = null;
  #hidden: { dir: string; keys: HiddenRecordings } | null = null;
  #pipelineKey: string | null = null;
  #detachPipeline: (() => void) | null = null;
  #pipelineError: string | null = null;
  #portNote: string | null = null;
  #receivingPaused = false;
  #folder = '';

  #live: Channel[] = [];
  #pollErrorKey: string | null = null;
  #badCredentials = false;
  #unreachableNotified = false;
  #lastTray = '';

  constructor(opts: AppCoreOptions) {
    this.#opts = opts;
    this.#env = opts.env ?? process.env;
    this.#hooks = opts.hooks ?? {};
    this.#log = opts.log ?? (() => {});
    this.#forceDemo = opts.demo === true;
    this.#events.setMaxListeners(0);
    this.#settings = openSettingsStore(opts.home, opts.settingsBackend);
    for (const warning of this.#settings.warnings) this.#log(`settings: ${warning}`);
    this.#creds = new CredentialStore(opts.secrets);
    this.#poller = new LivePoller({
      intervalMs: this.#pollIntervalMs(this.#settings.get()),
      backgroundFactor: BACKGROUND_POLL_FACTOR,
      wantsBackground: () => this.#events.listenerCount('tray:snapshot') > 0,
      canPoll: () => this.#api !== null,
      fetch: (signal) => this.#requireApi().listLive({ signal }),
      onResult: (channels) => this.#onLive(channels),
      onError: (error) => this.#onPollError(error),
    });
    this.#progress = new ProgressThrottle({
      minIntervalMs: PROGRESS_INTERVAL_MS,
      push: (key, progress) => {
        const job = this.#pipeline?.inbox.get(key);
        if (!job || job.state !== 'downloading') return;
        this.#emit('recordings:progress', recordingView(job, progress));
        this.#updateTray();
      },
    });
    this.handlers = this.#buildHandlers();
  }

  /** Probes the keychain once and works out the starting mode, so views before `start()` are right. */
  async init(): Promise<void> {
    this.#version = this.#opts.version ?? readPackageVersion();
    if (this.#opts.keychainUnavailable) {
      this.#keychain = { available: false, message: this.#opts.keychainUnavailable };
    } else {
      try {
        await this.#opts.secrets.get(PROJECT_ACCOUNT);
      } catch (error) {
        this.#keychain = {
          available: false,
          message: error instanceof ConfigError ? error.message : 'The OS keychain could not be used.',
        };
      }
    }
    const credentials = await this.#loadCredentials();
    this.#demo = this.#forceDemo || effectiveDemoMode(this.#settings.get(), credentials !== null);
    this.#folderFor(this.#settings.get());
  }

  // -------------------------------------------------------------------------------------------------
  // Lifecycle

  start(): Promise<void> {
    this.#startPromise ??= this.#serial(async () => {
      if (this.#phase !== 'new') return;
      this.#phase = 'running';
      try {
        await this.#reconcile();
      } finally {
        // stop() may have come in meanwhile: then nothing may start polling again.
        if (this.#phase === 'running') this.#poller.start();
        this.#updateTray();
      }
    });
    return this.#startPromise;
  }

  stop(): Promise<void> {
    this.#stopPromise ??= (async () => {
      this.#phase = 'stopping';
      this.#poller.stop();
      await this.#queue;
      this.#api = null;
      await this.#stopPipeline();
      await this.#closeSandbox();
      this.#progress.clearAll();
      this.#phase = 'stopped';
    })();
    return this.#stopPromise;
  }

  setVisible(visible: boolean): void {
    this.#poller.setVisible(visible);
  }

  on<E extends keyof AppCoreEvents>(event: E, listener: (payload: AppCoreEvents[E]) => void): () => void {
    const safe = (payload: AppCoreEvents[E]) => {
      try {
        listener(payload);
      } catch (error) {
        // One broken listener (a closed window) must not break the core or the other listeners.
        this.#log(`a ${event} listener failed: ${describe(error)}`);
      }
    };
    this.#events.on(event, safe);
    if (event === 'tray:snapshot') {
      // Snapshots are not computed while nobody listens: the next change must reach the new listener.
      this.#lastTray = '';
      this.#poller.reschedule();
    }
    return () => {
      this.#events.off(event, safe);
      if (event === 'tray:snapshot') this.#poller.reschedule();
    };
  }

  traySnapshot(): TraySnapshot {
    const jobs = this.#pipeline?.inbox.list() ?? [];
    let downloading = 0;
    let done = 0;
    let total = 0;
    let failed = 0;
    const now = Date.now();
    for (const job of jobs) {
      if (job.state === 'downloading') {
        downloading++;
        const live = this.#progress.get(job.key);
        const size = live?.total ?? job.totalBytes ?? job.announcedBytes;
        if (size) {
          total += size;
          done += Math.min(size, live?.bytes ?? job.bytes ?? 0);
        }
      } else if (
        (job.state === 'failed' || job.state === 'expired') &&
        now - Date.parse(job.updatedAt) < ATTENTION_WINDOW_MS
      ) {
        failed++;
      }
    }
    return {
      liveCount: this.#live.length,
      liveChannels: this.#live.map((c) => ({ id: c.id, watchers: c.watchers })),
      downloading,
      progress: downloading > 0 && total > 0 ? done / total : null,
      attention: this.#attention(failed),
      receivingPaused: this.#receivingPaused,
      recordingsFolder: this.#folder,
    };
  }

  #attention(failedRecordings: number): string | null {
    if (this.#badCredentials) return 'The service refused the credentials';
    if (this.#pipelineError) return 'Recordings are not being received';
    const tunnel = this.#pipeline?.supervisor.status;
    if (tunnel?.state === 'unreachable') return 'The webhook URL is unreachable';
    if (tunnel?.state === 'error') return 'The tunnel could not start';
    if (failedRecordings === 1) return '1 recording failed';
    if (failedRecordings > 1) return `${failedRecordings} recordings failed`;
    return null;
  }

  // -------------------------------------------------------------------------------------------------
  // Handlers

  #buildHandlers(): RequestHandlers {
    return {
      'app:info': async (): Promise<AppInfo> => ({
        version: this.#version,
        platform: process.platform,
        transport: this.#opts.transport,
        demo: this.#demo,
        native: this.#opts.transport === 'ipc',
      }),

      'channels:live': async (): Promise<ChannelView[]> => {
        const channels = await this.#track(this.#requireApi().listLive());
        this.#live = channels;
        this.#updateTray();
        return channels.map(channelToJson);
      },

      'channels:search': async (query) => {
        const api = this.#requireApi();
        const result = await this.#track(
          api.search({
            since: new Date(query.since),
            until: new Date(query.until),
            ...(query.keyword ? { keyword: query.keyword } : {}),
          }),
        );
        return {
          totalCount: result.totalCount,
          channels: result.channels.map(channelToJson),
          truncated: result.truncated,
        };
      },

      'channels:end': async (channelId) => {
        await this.#track(this.#requireApi().endChannel(channelId));
        this.#log('a channel was force-ended');
        // The list pushed next must not show the ended channel: refresh waits out a poll already running.
        await this.#poller.refresh();
        return { ended: true };
      },

      'recordings:list': async () => this.#listRecordings(),

      'recordings:retry': async (key) => {
        const pipeline = this.#requirePipeline();
        if (!pipeline.inbox.get(key)) throw new ValidationError(['key'], 'No recording with this key is known.');
        await pipeline.downloads.retry(key);
        this.#updateTray();
        return recordingView(pipeline.inbox.get(key) as RecordingJob, this.#progress.get(key));
      },

      'recordings:reveal': async (key) => this.#withSavedFile(key, this.#hooks.revealFile?.bind(this.#hooks)),
      'recordings:open': async (key) => this.#withSavedFile(key, this.#hooks.openFile?.bind(this.#hooks)),
      'recordings:path': async (key) => ({ path: this.#savedPath(key) }),
      'recordings:remove': async (key) => {
        const view = this.#listRecordings().find((r) => r.key === key);
        // Only finished entries: hiding a download in progress would hide whether it still needs attention.
        if (!view || view.state === 'pending' || view.state === 'downloading') return { ok: false };
        await this.#hiddenRecordings().add(key);
        return { ok: true };
      },
      'recordings:gaps': async () => gapView(this.#pipeline?.lastGapReport ?? null),

      'settings:get': async () => this.#settingsView(),
      'settings:checkFolder': async (path) => checkFolder(path),
      'settings:update': async (patch) => this.#serial(() => this.#updateSettings(patch)),
      'settings:chooseFolder': async () => {
        const choose = this.#hooks.chooseFolder;
        if (!choose) throw new ConfigError('Choosing a folder needs the desktop app: type the folder path instead.');
        const chosen = await choose.call(this.#hooks, this.#folderFor(this.#settings.get()));
        if (chosen === null) return null;
        return this.#serial(() => this.#updateSettings({ recordingsFolder: chosen }));
      },

      'credentials:status': async () => this.#credentialsStatus(),
      'credentials:setNgrokToken': async (token) => this.#setNgrokToken(token),
      'credentials:clearNgrokToken': async () => this.#setNgrokToken(null),
      'credentials:set': async (input) => this.#setCredentials(input),
      'credentials:clear': async () =>
        this.#serial(async () => {
          if (this.#keychain.available) {
            await this.#creds.clear();
            await this.#creds.deleteToken(HOSTS_TOKEN).catch(() => false);
          }
          this.#trustedHosts = null;
          this.#badCredentials = false;
          await this.#reconcile();
          return this.#credentialsChanged();
        }),
      'credentials:test': async (input) => this.#testCredentials(input),

      'tunnel:status': async () => this.#tunnelView(),
      'webhook:register': async () => this.#registerWebhook(),

      'clipboard:write': async (text) => {
        if (!this.#hooks.writeClipboard) return { ok: false };
        await this.#hooks.writeClipboard(text);
        return { ok: true };
      },
    };
  }

  #listRecordings(): RecordingView[] {
    const jobs = this.#pipeline?.inbox.list() ?? [];
    const uploads = this.#pipeline?.uploadLog?.list() ?? [];
    const hidden = this.#hiddenRecordings();
    return [...jobs.map((job) => recordingView(job, this.#progress.get(job.key))), ...uploads.map(uploadView)]
      .filter((view) => !hidden.has(view.key))
      .sort(newestFirst);
  }

  /** The removed-from-list keys of the state folder in use (demo and real service keep separate lists). */
  #hiddenRecordings(): HiddenRecordings {
    const dir = this.#pipelineStateDir ?? this.#opts.home;
    if (this.#hidden?.dir !== dir) this.#hidden = { dir, keys: new HiddenRecordings(dir) };
    return this.#hidden.keys;
  }

  /** The saved file behind a view key, of either source; null when there is none (yet). */
  #savedPath(key: string): string | null {
    if (key.startsWith(UPLOAD_KEY_PREFIX)) {
      return this.#pipeline?.uploadLog?.get(key.slice(UPLOAD_KEY_PREFIX.length))?.path ?? null;
    }
    const job = this.#pipeline?.inbox.get(key);
    return job?.state === 'saved' ? job.path : null;
  }

  async #withSavedFile(
    key: string,
    hook: ((path: string) => Promise<void> | void) | undefined,
  ): Promise<{ ok: boolean }> {
    const path = this.#savedPath(key);
    if (!hook || !path) return { ok: false };
    try {
      await hook(path);
      return { ok: true };
    } catch (error) {
      this.#log(`could not show a recording: ${describe(error)}`);
      return { ok: false };
    }
  }

  // -------------------------------------------------------------------------------------------------
  // Settings

  #settingsView(settings: Settings = this.#settings.get()): SettingsView {
    return toSettingsView(settings, {
      recordingsFolder: this.#folderFor(settings),
      demoMode: this.#demo,
      receivingPaused: this.#receivingPaused,
    });
  }

  /** The demo keeps its recordings apart unless the producer chose a folder of their own. */
  #folderFor(settings: Settings): string {
    const folder =
      this.#demo && settings.recordingsFolder === defaultRecordingsDir()
        ? demoRecordingsDir(this.#opts.home)
        : settings.recordingsFolder;
    // Remembered for the tray, which asks often and should not read the settings file every time.
    this.#folder = folder;
    return folder;
  }

  #pollIntervalMs(settings: Settings): number {
    return this.#opts.pollIntervalMs ?? settings.pollIntervalSec * 1000;
  }

  async #updateSettings(patch: SettingsPatch): Promise<SettingsView> {
    const storePatch = toStorePatch(patch);
    // A form sent back while in demo mode carries the demo folder; it must not become the real folder.
    if (this.#demo && storePatch.recordingsFolder === demoRecordingsDir(this.#opts.home)) {
      delete storePatch.recordingsFolder;
    }
    const before = this.#settings.get();
    // Validate before any side effect, so a bad field changes nothing at all.
    const next = applySettingsPatch(before, storePatch);
    if (next.launchAtLogin !== before.launchAtLogin) await this.#hooks.setLaunchAtLogin?.(next.launchAtLogin);
    if (Object.keys(storePatch).length > 0) this.#settings.update(storePatch);
    if (patch.demoMode === false) this.#forceDemo = false;
    if (patch.receivingPaused !== undefined) this.#receivingPaused = patch.receivingPaused;
    if (this.#phase === 'running') await this.#reconcile();
    else
      this.#demo = this.#forceDemo || effectiveDemoMode(this.#settings.get(), (await this.#loadCredentials()) !== null);
    const view = this.#settingsView();
    this.#emit('settings:changed', view);
    // New hosts may have put the secret out of use (or back in use): the credentials view must say so.
    if (patch.endpoints !== undefined) await this.#credentialsChanged();
    this.#updateTray();
    return view;
  }

  // -------------------------------------------------------------------------------------------------
  // Credentials

  /**
   * Credentials for the configured hosts, or null. The secret is bound to the hosts it was entered for:
   * when the hosts change afterwards (settings are writable from the renderer), the secret is not sent to
   * the new ones until it is entered again (`credentials:set`). The binding lives in the keychain beside
   * the secret, and is taken on first use for credentials stored before it existed (e.g. by `tally login`).
   */
  async #loadCredentials(): Promise<Credentials | null> {
    let credentials: Credentials | null;
    try {
      credentials = credentialsFromEnv(this.#env);
    } catch (error) {
      this.#log(`credentials: ${describe(error)}`);
      return null;
    }
    if (!credentials && this.#keychain.available) {
      try {
        credentials = await this.#creds.stored();
      } catch (error) {
        this.#log(`credentials: ${describe(error)}`);
        return null;
      }
    }
    if (!credentials) return null;
    const hosts = this.#hostsKey();
    if (this.#trustedHosts === null) {
      const bound = this.#keychain.available ? await this.#creds.getToken(HOSTS_TOKEN).catch(() => null) : null;
      this.#trustedHosts = bound ?? hosts;
      if (bound === null && this.#keychain.available) await this.#creds.setToken(HOSTS_TOKEN, hosts).catch(() => {});
    }
    this.#hostsChanged = this.#trustedHosts !== hosts;
    if (this.#hostsChanged) {
      this.#log('credentials: the service hosts changed since the secret was entered; it is not sent to them');
      return null;
    }
    return credentials;
  }

  #hostsKey(settings: Settings = this.#settings.get()): string {
    const e = this.#configuredEndpoints(settings);
    return JSON.stringify([e.baseUrl, e.consoleApiUrl, e.adminUrl]);
  }

  #configuredEndpoints(settings: Settings = this.#settings.get()): Endpoints {
    return resolveEndpoints({ env: this.#env, settings: settings.endpoints });
  }

  /** Stores (or, with null, deletes) the ngrok authtoken in the keychain and restarts the tunnel with it. */
  async #setNgrokToken(token: string | null): Promise<CredentialsStatus> {
    if (!this.#keychain.available) {
      throw new ConfigError(
        `The ngrok authtoken cannot be stored: ${this.#keychain.message ?? 'the OS keychain is not available.'}`,
      );
    }
    return this.#serial(async () => {
      if (token === null) await this.#creds.deleteToken('ngrok');
      else await this.#creds.setToken('ngrok', token);
      if (this.#phase === 'running') await this.#reconcile();
      return this.#credentialsChanged();
    });
  }

  async #credentialsStatus(): Promise<CredentialsStatus> {
    const status = await this.#projectCredentialsStatus();
    const ngrok = this.#keychain.available ? await this.#creds.getToken('ngrok').catch(() => null) : null;
    // Only present when true, so the status reads as before for everyone without an ngrok tunnel.
    return ngrok === null ? status : { ...status, ngrokTokenStored: true };
  }

  async #projectCredentialsStatus(): Promise<CredentialsStatus> {
    const keychain = { keychainAvailable: this.#keychain.available, keychainMessage: this.#keychain.message };
    if (this.#sandbox && this.#demo) {
      return { configured: true, serviceId: this.#sandbox.credentials.serviceId, source: 'sandbox', ...keychain };
    }
    let fromEnv: Credentials | null;
    try {
      fromEnv = credentialsFromEnv(this.#env);
    } catch {
      fromEnv = null;
    }
    if (fromEnv && this.#hostsChanged) {
      return {
        configured: false,
        serviceId: fromEnv.serviceId,
        source: 'env',
        ...keychain,
        keychainMessage: HOSTS_CHANGED,
      };
    }
    if (fromEnv) return { configured: true, serviceId: fromEnv.serviceId, source: 'env', ...keychain };
    const stored = this.#keychain.available ? await this.#creds.stored().catch(() => null) : null;
    if (stored && this.#hostsChanged) {
      return {
        configured: false,
        serviceId: stored.serviceId,
        source: 'keychain',
        keychainAvailable: this.#keychain.available,
        keychainMessage: HOSTS_CHANGED,
      };
    }
    if (stored) return { configured: true, serviceId: stored.serviceId, source: 'keychain', ...keychain };
    return { configured: false, serviceId: null, source: null, ...keychain };
  }

  async #credentialsChanged(): Promise<CredentialsStatus> {
    const status = await this.#credentialsStatus();
    this.#emit('credentials:changed', status);
    this.#updateTray();
    return status;
  }

  #testClient(input: CredentialsInput): ChannelApi {
    return new ChannelApi({
      endpoints: this.#configuredEndpoints(),
      credentials: { serviceId: input.serviceId.trim(), secret: input.secret.trim() },
      retries: 1,
      userAgent: `Tally/${this.#version}`,
    });
  }

  async #setCredentials(input: CredentialsInput): Promise<CredentialsStatus> {
    if (!this.#keychain.available) {
      throw new ConfigError(
        `The credentials cannot be stored: ${this.#keychain.message ?? 'the OS keychain is not available.'}`,
      );
    }
    // Nothing is stored unless the service accepts the pair.
    await this.#testClient(input).testConnection();
    return this.#serial(async () => {
      await this.#creds.save(input);
      // Entered (and accepted) for the configured hosts: trusted with those from now on.
      this.#trustedHosts = this.#hostsKey();
      this.#hostsChanged = false;
      await this.#creds.setToken(HOSTS_TOKEN, this.#trustedHosts);
      this.#forceDemo = false;
      this.#badCredentials = false;
      if (this.#settings.get().demoMode === true) this.#settings.update({ demoMode: false });
      if (this.#phase === 'running') await this.#reconcile();
      else this.#demo = false;
      this.#emit('settings:changed', this.#settingsView());
      return this.#credentialsChanged();
    });
  }

  async #testCredentials(input: CredentialsInput | undefined): Promise<{ ok: boolean; message: string }> {
    try {
      const api = input ? this.#testClient(input) : this.#requireApi();
      const { liveCount } = await api.testConnection();
      if (!input && this.#badCredentials) {
        this.#badCredentials = false;
        this.#updateTray();
      }
      return { ok: true, message: `Connected: ${liveCount} channel${liveCount === 1 ? '' : 's'} live now.` };
    } catch (error) {
      if (!input && error instanceof BadCredentialsError) this.#markBadCredentials();
      return { ok: false, message: errorView(error).message };
    }
  }

  #markBadCredentials(): void {
    if (this.#badCredentials) return;
    this.#badCredentials = true;
    this.#updateTray();
  }

  /** Notes refused credentials on the way through, for the tray. */
  async #track<T>(promise: Promise<T>): Promise<T> {
    try {
      return await promise;
    } catch (error) {
      if (error instanceof BadCredentialsError) this.#markBadCredentials();
      throw error;
    }
  }

  #requireApi(): ChannelApi {
    if (this.#api) return this.#api;
    throw new ConfigError(this.#phase === 'new' ? NOT_STARTED : this.#phase === 'running' ? NO_CREDENTIALS : STOPPED);
  }

  #requirePipeline(): RecordingPipeline {
    if (this.#pipeline) return this.#pipeline;
    if (this.#phase !== 'running') throw new ConfigError(this.#phase === 'new' ? NOT_STARTED : STOPPED);
    throw new ConfigError(this.#pipelineError ?? 'The webhook receiver is not running.');
  }

  // -------------------------------------------------------------------------------------------------
  // Live list

  #onLive(channels: Channel[]): void {
    this.#live = channels;
    this.#pollErrorKey = null;
    this.#badCredentials = false;
    this.#emit('channels:live', channels.map(channelToJson));
    this.#updateTray();
  }

  #onPollError(error: unknown): void {
    const view = errorView(error);
    if (!(error instanceof TallyError)) this.#log(`live poll failed: ${describe(error)}`);
    if (error instanceof BadCredentialsError) this.#markBadCredentials();
    const key = `${view.code}\u0000${view.message}`;
    // Once per distinct problem, not on every poll while it lasts.
    if (key === this.#pollErrorKey) return;
    this.#pollErrorKey = key;
    this.#emit('app:error', view);
  }

  // -------------------------------------------------------------------------------------------------
  // Tunnel and webhook registration

  #tunnelView(): TunnelStatus {
    const settings = this.#settings.get();
    const pipeline = this.#pipeline;
    if (!pipeline) {
      return {
        provider: settings.tunnel.provider,
        state: 'off',
        publicUrl: null,
        localUrl: null,
        uploadUrl: null,
        lastCheckedAt: null,
        message: this.#pipelineError ?? (this.#phase === 'new' ? NOT_STARTED : 'The webhook receiver is not running.'),
        registered: false,
      };
    }
    const status = pipeline.supervisor.status;
    let localUrl: string | null;
    try {
      localUrl = pipeline.receiver.localUrl;
    } catch {
      localUrl = null;
    }
    const demoNote =
      this.#sandbox && this.#demo
        ? 'Demo mode: the embedded sandbox sends its webhooks straight to this computer.'
        : null;
    const message = [this.#portNote, demoNote, status.message].filter(Boolean).join(' ') || null;
    const registered =
      this.#sandbox && this.#demo
        ? localUrl !== null && this.#sandbox.control.webhookUrl === localUrl
        : status.registered;
    const uploadUrl = status.uploadUrl ?? pipeline.ready().localUploadUrl;
    return { ...status, localUrl, uploadUrl, registered, message };
  }

  async #registerWebhook(): Promise<TunnelStatus> {
    const pipeline = this.#requirePipeline();
    if (this.#sandbox && this.#demo) {
      this.#sandbox.control.setWebhookUrl(pipeline.receiver.localUrl);
    } else {
      const url = pipeline.supervisor.status.publicUrl;
      if (!url) throw new ConfigError(NO_PUBLIC_URL);
      const api = this.#requireApi();
      if (pipeline.registrar) await this.#track(pipeline.registrar.registerNow(url));
      else {
        await this.#track(api.setRecordHook(url));
        pipeline.supervisor.setRegisteredUrl(url);
      }
    }
    const view = this.#tunnelView();
    this.#emit('tunnel:status', view);
    return view;
  }

  #onTunnel(status: TunnelStatus): void {
    if (status.state === 'unreachable' && !this.#unreachableNotified) {
      this.#unreachableNotified = true;
      this.#emit('notify', {
        kind: 'unreachable',
        title: 'Webhook unreachable',
        body: clean(status.message ?? 'The service cannot reach this computer: recordings will not arrive.', 200),
      });
    } else if (status.state === 'reachable') {
      this.#unreachableNotified = false;
    }
    this.#emit('tunnel:status', this.#tunnelView());
    this.#updateTray();
  }

  // -------------------------------------------------------------------------------------------------
  // Reconcile: mode, client and pipeline from settings + credentials

  async #reconcile(): Promise<void> {
    if (this.#phase !== 'running') return;
    const settings = this.#settings.get();
    const credentials = await this.#loadCredentials();
    const demo = this.#forceDemo || effectiveDemoMode(settings, credentials !== null);
    const modeChanged = demo !== this.#demo || (demo && !this.#sandbox) || (!demo && this.#sandbox !== null);
    this.#demo = demo;

    if (modeChanged) {
      // The old pipeline downloads from the old backend: it goes first.
      await this.#stopPipeline();
      await this.#closeSandbox();
      this.#live = [];
      this.#emit('channels:live', []);
      if (demo) {
        this.#sandbox = await startDemoSandbox(this.#opts.home, this.#opts.sandboxOptions);
        // The demo also shows client recordings: the sandbox's web client uploads one like the web SDK
        // does whenever a broadcast ends, from its own page origin (which demo mode allows).
        if (this.#opts.demoWebClient !== false) {
          const { attachDemoWebClient } = await import('../sandbox/index.js');
          const sandbox = this.#sandbox;
          this.#detachWebClient = attachDemoWebClient(sandbox, () => this.#pipeline?.ready().localUploadUrl ?? null, {
            origin: sandbox.apiUrl,
          });
        }
        this.#log('demo mode: the embedded sandbox is running');
      }
    }

    this.#api = this.#buildApi(settings, credentials);
    this.#apiCredentials = this.#sandbox && demo ? this.#sandbox.credentials : credentials;
    const apiKey = this.#api
      ? JSON.stringify([
          this.#sandbox?.apiUrl ?? null,
          this.#configuredEndpoints(settings),
          this.#apiCredentials?.serviceId,
        ])
      : null;
    const apiChanged = apiKey !== this.#apiKey;
    this.#apiKey = apiKey;
    this.#poller.setIntervalMs(this.#pollIntervalMs(settings));

    try {
      await this.#reconcilePipeline(settings);
      this.#pipelineError = null;
    } catch (error) {
      this.#pipelineError = `Recordings are not being received: ${describe(error)}`;
      this.#log(this.#pipelineError);
      this.#emit('app:error', { code: errorView(error).code, message: this.#pipelineError });
      throw error;
    } finally {
      this.#emit('tunnel:status', this.#tunnelView());
      this.#poller.reschedule();
      if (apiChanged) {
        // Another backend or project: the list on screen is stale and its errors no longer apply.
        this.#pollErrorKey = null;
        if (this.#poller.currentDelayMs !== null) void this.#poller.refresh();
      }
      this.#updateTray();
    }
  }

  #buildApi(settings: Settings, credentials: Credentials | null): ChannelApi | null {
    if (this.#demo && this.#sandbox) {
      return new ChannelApi({
        endpoints: this.#sandbox.endpoints,
        credentials: this.#sandbox.credentials,
        retries: 1,
        userAgent: `Tally/${this.#version}`,
      });
    }
    if (!credentials) return null;
    return new ChannelApi({
      endpoints: this.#configuredEndpoints(settings),
      credentials,
      userAgent: `Tally/${this.#version}`,
    });
  }

  async #pipelineSpec(settings: Settings): Promise<{ spec: PipelineOptions; key: string }> {
    const demo = this.#demo && this.#sandbox !== null;
    const base = DownloadOriginPolicy.fromEnv(this.#env, settings.downloadOrigins);
    // The sandbox serves recordings from loopback: allowed for its exact origin only, and only in demo mode.
    const origins = demo && this.#sandbox ? [...base.origins, this.#sandbox.downloadOrigin] : base.origins;
    const policy = demo ? new DownloadOriginPolicy(origins) : base;
    const hasApi = this.#api !== null;
    const endpoints = this.#configuredEndpoints(settings);
    const scope = !demo && this.#apiCredentials ? `${this.#apiCredentials.serviceId} ${endpoints.adminUrl}` : null;
    const tunnel = {
      provider: settings.tunnel.provider,
      publicUrl: settings.tunnel.publicUrl ?? null,
      ngrokDomain: settings.tunnel.ngrokDomain ?? null,
      localtunnelHost: settings.tunnel.localtunnelHost ?? null,
    };
    const ngrokAuthtoken =
      tunnel.provider === 'ngrok' && this.#keychain.available
        ? await this.#creds.getToken('ngrok').catch(() => null)
        : null;
    const api = hasApi
      ? {
          setRecordHook: (url: string) => this.#requireApi().setRecordHook(url),
          search: (q: { since: Date; until: Date }) => this.#requireApi().search(q),
        }
      : null;
    this.#pipelineStateDir = demo ? demoStateDir(this.#opts.home) : this.#opts.home;
    const spec: PipelineOptions = {
      stateDir: this.#pipelineStateDir,
      folder: this.#folderFor(settings),
      policy,
      host: settings.receiverHost,
      port: settings.receiverPort,
      tunnel,
      ngrokAuthtoken,
      // The demo sandbox gets the local URL directly; only the real service needs the public one.
      register: hasApi && !demo ? settings.autoRegisterWebhook : undefined,
      api,
      projectScope: scope,
      concurrency: settings.concurrency,
      fileNameTemplate: settings.fileNameTemplate,
      uploads: {
        subfolder: settings.clientUploadsSubfolder,
        maxBytes: settings.uploadMaxBytes,
        // Read on every request, so a changed origin list applies without restarting the receiver.
        allowedOrigins: () => {
          const current = this.#settings.get().uploadOrigins;
          return demo && this.#sandbox ? [...current, this.#sandbox.apiUrl] : current;
        },
      },
      ...this.#opts.pipelineOverrides,
    };
    const key = JSON.stringify({
      stateDir: spec.stateDir,
      origins,
      host: spec.host,
      port: spec.port,
      tunnel,
      ngrok: ngrokAuthtoken !== null,
      registrar: spec.register !== undefined,
      hasApi,
      scope,
      template: spec.fileNameTemplate,
      uploads: [settings.clientUploadsSubfolder, settings.uploadMaxBytes],
      sandbox: demo ? this.#sandbox?.apiUrl : null,
    });
    return { spec, key };
  }

  async #reconcilePipeline(settings: Settings): Promise<void> {
    const { spec, key } = await this.#pipelineSpec(settings);
    if (key !== this.#pipelineKey || !this.#pipeline) {
      await this.#stopPipeline();
      await mkdir(spec.folder, { recursive: true });
      await this.#openPipeline(spec);
      this.#pipelineKey = key;
    }
    const pipeline = this.#pipeline as RecordingPipeline | null;
    if (!pipeline) return;
    if (pipeline.downloads.folder !== spec.folder) {
      await mkdir(spec.folder, { recursive: true });
      pipeline.downloads.setFolder(spec.folder);
    }
    pipeline.downloads.setConcurrency(settings.concurrency);
    if (pipeline.registrar && pipeline.registrar.enabled !== settings.autoRegisterWebhook) {
      pipeline.registrar.setEnabled(settings.autoRegisterWebhook);
    }
    await pipeline.setDownloadsPaused(this.#receivingPaused);
    if (this.#sandbox && this.#demo && this.#sandbox.control.webhookUrl !== pipeline.receiver.localUrl) {
      this.#sandbox.control.setWebhookUrl(pipeline.receiver.localUrl);
    }
  }

  async #openPipeline(spec: PipelineOptions): Promise<void> {
    this.#portNote = null;
    let pipeline = await RecordingPipeline.open(spec);
    let detach = this.#attach(pipeline);
    await pipeline.setDownloadsPaused(this.#receivingPaused);
    try {
      await pipeline.start();
    } catch (error) {
      detach();
      await pipeline.stop().catch(() => {});
      if (!isAddressInUse(error) || !spec.port) throw error;
      // Another program (or another Tally) holds the port: receive on any free port rather than not at all.
      this.#portNote = `Port ${spec.port} is in use, so the receiver listens on another port this time: a webhook URL registered with port ${spec.port} does not reach it.`;
      this.#log(this.#portNote);
      pipeline = await RecordingPipeline.open({ ...spec, port: 0 });
      detach = this.#attach(pipeline);
      await pipeline.setDownloadsPaused(this.#receivingPaused);
      try {
        await pipeline.start();
      } catch (second) {
        detach();
        await pipeline.stop().catch(() => {});
        throw second;
      }
    }
    this.#pipeline = pipeline;
    this.#detachPipeline = detach;
    this.#log(`receiving recordings on port ${pipeline.receiver.port}`);
  }

  async #stopPipeline(): Promise<void> {
    const pipeline = this.#pipeline;
    if (!pipeline) return;
    this.#pipeline = null;
    this.#pipelineKey = null;
    // Listeners stay attached while stopping so the jobs it sets back to pending reach the views.
    await pipeline.stop().catch((error: unknown) => this.#log(`the pipeline did not stop cleanly: ${describe(error)}`));
    this.#detachPipeline?.();
    this.#detachPipeline = null;
    this.#progress.clearAll();
  }

  async #closeSandbox(): Promise<void> {
    const sandbox = this.#sandbox;
    this.#sandbox = null;
    this.#detachWebClient?.();
    this.#detachWebClient = null;
    if (sandbox) await sandbox.close();
  }

  #attach(pipeline: RecordingPipeline): () => void {
    const offs: (() => void)[] = [];
    const on = <K extends keyof PipelineEvents>(event: K, listener: (...args: PipelineEvents[K]) => void) => {
      // Node's typed EventEmitter cannot relate a generic key to its listener; the signature above does.
      pipeline.on(event, listener as never);
      offs.push(() => pipeline.off(event, listener as never));
    };
    on('changed', (job) => this.#onJobChanged(job, pipeline));
    on('progress', (e) =>
      this.#progress.update(e.key, { bytes: e.bytes, total: e.total, rate: e.rate, etaSeconds: e.etaSeconds }),
    );
    on('saved', (e) => {
      this.#emit('notify', {
        kind: 'saved',
        title: 'Recording saved',
        body: clean(basename(e.path), 200),
        path: e.path,
      });
    });
    on('failed', (e) => {
      if (e.willRetry) return;
      this.#emit('notify', {
        kind: 'failed',
        title: 'Recording failed',
        body: clean(`${e.job.channelId}: ${e.job.error ?? describe(e.error)}`, 200),
      });
    });
    on('expired', (e) => {
      this.#emit('notify', {
        kind: 'expired',
        title: 'Recording expired',
        body: clean(`${e.job.channelId}: the service deleted it before it could be downloaded.`, 200),
      });
    });
    on('uploaded', (e) => {
      this.#emit('recordings:changed', uploadView(e));
      this.#emit('notify', { kind: 'saved', title: 'Upload saved', body: clean(e.fileName, 200), path: e.path });
    });
    on('tunnel', (status) => this.#onTunnel(status));
    on('gaps', (report) => this.#emit('recordings:gaps', gapView(report)));
    on('registered', () => this.#emit('tunnel:status', this.#tunnelView()));
    on('registration-failed', (info) =>
      this.#emit('app:error', {
        code: 'registration',
        message: `The webhook URL could not be registered: ${info.message}`,
      }),
    );
    on('rejected', (r) => this.#log(`webhook refused (${r.status}): ${clean(r.reason)}`));
    return () => {
      for (const off of offs) off();
    };
  }

  #onJobChanged(job: RecordingJob, pipeline: RecordingPipeline): void {
    if (pipeline !== this.#pipeline && this.#pipeline !== null) return;
    if (job.state !== 'downloading') this.#progress.clear(job.key);
    const view = recordingView(job, this.#progress.get(job.key));
    const signature = changeSignature(view);
    if (this.#signatures.get(job.key) !== signature) {
      this.#signatures.set(job.key, signature);
      this.#emit('recordings:changed', view);
    }
    this.#updateTray();
  }

  // -------------------------------------------------------------------------------------------------
  // Plumbing

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  #emit<E extends keyof AppCoreEvents>(event: E, payload: AppCoreEvents[E]): void {
    this.#events.emit(event, payload);
  }

  #updateTray(): void {
    if (this.#events.listenerCount('tray:snapshot') === 0) return;
    const snapshot = this.traySnapshot();
    const text = JSON.stringify(snapshot);
    if (text === this.#lastTray) return;
    this.#lastTray = text;
    this.#emit('tray:snapshot', snapshot);
  }
}

/**
 * Creates the core: opens the settings file and probes the keychain, but starts nothing that listens or
 * polls until `start()`. Every request handler of the contract works before `start()` where it can
 * (settings, credentials status, app info) and answers "still starting" where it cannot.
 */
export async function createAppCore(options: AppCoreOptions): Promise<TallyAppCore> {
  const core = new Core(options);
  await core.init();
  return core;
}
