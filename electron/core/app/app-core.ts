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
import type {
  AppInfo,
  CredentialsInput,
  CredentialsStatus,
  HealthView,
  RequestHandlers,
  SettingsPatch,
  SettingsView,
  TunnelStatus,
} from '../../contract.js';
import type { ChannelApi } from '../api-client.js';
import { resolveEndpoints, type Endpoints } from '../endpoints.js';
import { BadCredentialsError, ConfigError, TallyError, ValidationError } from '../errors.js';
import { expandFolder } from '../paths.js';
import { note } from '../notes.js';
import { channelToJson, type Channel, type Credentials } from '../model.js';
import { recordingsFolderFor } from '../pipeline/options.js';
import {
  applySettingsPatch,
  effectiveDemoMode,
  followsStudio,
  openSettingsStore,
  type Settings,
  type SettingsStore,
} from '../settings.js';
import { checkFolder } from './settings-folder-check.js';
import { BACKGROUND_POLL_FACTOR, readPackageVersion, type AppCoreOptions, type Phase } from './app-options.js';
import { NOT_STARTED, NO_CREDENTIALS, STOPPED, requirePipeline, clean, describe, errorView } from './core-messages.js';
import { LiveState } from './live-state.js';
import { RendererErrors } from './renderer-errors.js';
import { lineLogger } from '../logger.js';
import { SerialQueue } from './serial-queue.js';
import { checkFolderChange } from './folder-change.js';
import { traySnapshotOf } from './tray-snapshot.js';
import { appPipelineSpec, buildAppApi } from './app-pipeline.js';
import { CoreEvents } from './core-events.js';
import { DemoRunner, demoRecordingsDir, demoStateDir, type DemoSandbox } from './demo.js';
import { LivePoller } from './live-poller.js';
import { AppCredentials } from './app-credentials.js';
import {
  crashFacts,
  diagnosticsText,
  journalCounts,
  recentLogs,
  secretsInEnv,
  stateFolderSecrets,
} from './diagnostics.js';
import { channelAndRecordingHandlers } from './handlers.js';
import { PipelineHost } from './pipeline-host.js';
import { StudioHost } from './studio-host.js';
import { toSettingsView, toStorePatch } from './settings-view.js';
import type { AppCore, AppCoreEvents, PlatformHooks, TraySnapshot } from './types.js';

export { BACKGROUND_POLL_FACTOR, readPackageVersion, type AppCoreOptions } from './app-options.js';
export type { AppCore } from './types.js';

/**
 * The app core behind the tray app and `tally serve`: the one serial reconcile of mode (demo or the service),
 * API client and receive pipeline from the settings and credentials, and the request handlers over them.
 */
class ReconcilingAppCore implements AppCore {
  readonly handlers: RequestHandlers;

  readonly #opts: AppCoreOptions;
  readonly #env: NodeJS.ProcessEnv;
  readonly #hooks: PlatformHooks;
  readonly #log: (line: string) => void;
  readonly #settings: SettingsStore;
  /** Keychain, the one CredentialResolver (the secret's binding to its hosts) and the refused flag. */
  readonly #creds: AppCredentials;
  readonly #events: CoreEvents;
  readonly #poller: LivePoller;
  readonly #host: PipelineHost;
  readonly #studio: StudioHost;
  #version = '0.0.0';

  #phaseNow: Phase = 'new';
  /** The phase, pushed to the pipeline host whenever it changes (the host never asks for it). */
  get #phase(): Phase {
    return this.#phaseNow;
  }
  set #phase(phase: Phase) {
    this.#phaseNow = phase;
    this.#host.setPhase(phase);
  }
  readonly #queue = new SerialQueue();
  #startPromise: Promise<void> | null = null;
  #stopPromise: Promise<void> | null = null;

  /** Demo mode was forced by the shell and not yet left by entering credentials. */
  #forceDemo: boolean;
  #demoOn = false;
  /** Demo mode; the pipeline host is told which sandbox stands in for the service whenever it changes. */
  get #demo(): boolean {
    return this.#demoOn;
  }
  set #demo(on: boolean) {
    this.#demoOn = on;
    this.#pushDemo();
    this.#pushFacts();
  }
  readonly #demoRun: DemoRunner;
  #api: ChannelApi | null = null;
  #apiCredentials: Credentials | null = null;
  #apiKey: string | null = null;
  #receivingPaused = false;
  #folder = '';

  readonly #live = new LiveState();
  /** Errors the page did not catch, into the trail (or the warnings' log without one). */
  readonly #rendererErrors: RendererErrors;

  constructor(opts: AppCoreOptions) {
    this.#opts = opts;
    this.#env = opts.env ?? process.env;
    this.#hooks = opts.hooks ?? {};
    this.#log = opts.log ?? (() => {});
    this.#rendererErrors = new RendererErrors(opts.trail?.child('renderer') ?? lineLogger(this.#log));
    this.#forceDemo = opts.demo === true;
    this.#demoRun = new DemoRunner({
      home: opts.home,
      overrides: opts.sandboxOptions,
      start: opts.startSandbox,
      webClient: opts.demoWebClient !== false,
      uploadUrl: () => this.#host.pipeline?.ready().localUploadUrl ?? null,
      folder: () => this.#folderFor(this.#settings.get()),
    });
    this.#events = new CoreEvents(
      this.#log,
      () => this.traySnapshot(),
      () => this.#poller.reschedule(),
    );
    this.#settings = openSettingsStore(opts.home);
    // The warnings are those of the last read: read once, so what was reset or dropped at start-up is logged.
    this.#settings.get();
    for (const warning of this.#settings.warnings) this.#log(`settings: ${warning}`);
    this.#creds = new AppCredentials({
      secrets: opts.secrets,
      env: this.#env,
      home: opts.home,
      keychainUnavailable: opts.keychainUnavailable ?? null,
      log: this.#log,
      onBadChange: () => this.#events.updateTray(),
    });
    this.#poller = new LivePoller({
      intervalMs: this.#pollIntervalMs(this.#settings.get()),
      backgroundFactor: BACKGROUND_POLL_FACTOR,
      wantsBackground: () => this.#events.trayListening,
      canPoll: () => this.#api !== null,
      fetch: (signal) => this.#requireApi().listLive({ signal }),
      onResult: (channels) => this.#onLive(channels),
      onError: (error) => this.#onPollError(error),
    });
    // The studio host first: the pipeline host pushes it the removed rows as soon as it is made.
    this.#studio = new StudioHost(opts, this.#env, this.#settings, {
      emit: (view) => this.#emit('studio:changed', view),
      // Rows the producer removed are left out by the studio host itself (setHidden below).
      recordingChanged: (view) => this.#emit('recordings:changed', view),
      error: (view) => this.#emit('app:error', view),
      publish: (setup) => this.#host.publish(setup),
      // The studio's own link (a member's follower, a receiver held back), pushed down for the health.
      linkChanged: (link) => this.#host.setFacts({ studio: link }),
      // The member service while this computer follows a studio: its health is this face's (issue 31).
      memberChanged: (member) => this.#host.setFacts({ memberHealth: member }),
      assertStorable: () => this.#creds.assertStorable(),
      // Following a studio or not may leave or enter demo mode (effectiveDemoMode): the views must say so.
      save: (studio) =>
        this.#queue.run(async () => {
          this.#settings.update({ studio });
          await this.#reconcile();
          this.#emit('settings:changed', this.#settingsView());
        }),
    });
    this.#host = new PipelineHost({
      emit: (event, payload) => this.#emit(event, payload),
      log: this.#log,
      ...(opts.trail ? { trail: opts.trail.child('receive') } : {}),
      updateTray: () => this.#events.updateTray(),
      settings: this.#settings,
      onChannel: (call) => this.#poller.hook(call),
      home: this.#opts.home,
      face: opts.transport === 'ipc' ? 'app' : 'serve',
      onHealth: (view, previous) => this.#onHealth(view, previous),
      onPublisher: (publisher, link) => this.#studio.watchPublisher(publisher, link),
      // The removed rows, owned by the pipeline host and pushed down to the studio host (never asked for).
      hiddenChanged: (keys) => this.#studio.setHidden(keys),
      ...(opts.openPipeline ? { receive: { openPipeline: opts.openPipeline } } : {}),
    });
    this.#host.mirrored = {
      list: () => this.#studio.memberRecordings(),
      savedPath: (key) => this.#studio.savedPath(key),
    };
    this.handlers = this.#buildHandlers();
  }

  /**
   * Pushes what only the app core knows about the health to the pipeline host (and its receive service) after
   * every change of mode, settings or pause: they never ask the core back (issue 35). The studio link is pushed by
   * the studio host itself (linkChanged).
   */
  #pushFacts(): void {
    const member = followsStudio(this.#settings.get());
    this.#host.setFacts({
      demo: this.#demo,
      member,
      // Without a keychain nothing can be stored. Nothing needs to be in demo mode, on a studio member (it
      // uses no service credentials) or with the credentials in the environment: then it costs nothing.
      keychain: this.#creds.keychain.available
        ? { available: true, reason: [] }
        : this.#demo || member || this.#envCredentials()
          ? null
          : { available: false, reason: this.#creds.keychain.notes },
      downloadsPaused: this.#receivingPaused,
    });
  }

  /** The service credentials come from the environment (TALLY_SERVICE_ID and TALLY_SECRET): no keychain needed. */
  #envCredentials(): boolean {
    return Boolean(this.#env.TALLY_SERVICE_ID?.trim() && this.#env.TALLY_SECRET?.trim());
  }

  /** Probes the keychain once and works out the starting mode, so views before `start()` are right. */
  async init(): Promise<void> {
    this.#version = this.#opts.version ?? readPackageVersion();
    await this.#creds.probe();
    const credentials = await this.#loadCredentials();
    this.#demo = this.#demoWanted(this.#settings.get(), credentials !== null);
    this.#folderFor(this.#settings.get());
  }

  // ---- Lifecycle -------------------------------------------------------------------------------

  start(): Promise<void> {
    this.#startPromise ??= this.#queue.run(async () => {
      if (this.#phase !== 'new') return;
      this.#phase = 'running';
      try {
        await this.#host.start();
        await this.#reconcile();
      } finally {
        // stop() may have come in meanwhile: then nothing may start polling again.
        if (this.#phase === 'running') this.#poller.start();
        this.#events.updateTray();
      }
    });
    return this.#startPromise;
  }

  stop(): Promise<void> {
    this.#stopPromise ??= (async () => {
      this.#phase = 'stopping';
      this.#poller.stop();
      await this.#queue.idle();
      this.#host.clearError();
      this.#api = null;
      await this.#studio.stop();
      await this.#host.shutdown();
      await this.#demoRun.close();
      this.#pushDemo();
      this.#phase = 'stopped';
    })();
    return this.#stopPromise;
  }

  setVisible(visible: boolean): void {
    this.#poller.setVisible(visible);
  }

  on<E extends keyof AppCoreEvents>(event: E, listener: (payload: AppCoreEvents[E]) => void): () => void {
    return this.#events.on(event, listener);
  }

  #emit<E extends keyof AppCoreEvents>(event: E, payload: AppCoreEvents[E]): void {
    this.#events.emit(event, payload);
  }

  /**
   * Pushes the health; a turn to error is worth a notification (it may be costing recordings now), unless only the
   * downloads are red: each failed, expired, gone or refused recording has a notification of its own already.
   */
  #onHealth(view: HealthView, previous: HealthView | null): void {
    this.#emit('health:changed', view);
    const red = view.components.filter((c) => c.state === 'error' && c.id !== 'downloads');
    if (red.length > 0 && previous?.state !== 'error' && this.#phase === 'running') {
      const body = clean(red[0]!.reason, 200);
      this.#emit('notify', {
        kind: 'health',
        title: 'Recordings are at risk',
        body,
        bodyNotes: red[0]!.reasonNotes,
        text: { title: { key: 'healthTitle' } },
      });
    }
  }

  traySnapshot(): TraySnapshot {
    return traySnapshotOf(this.#live.channels, this.#host, {
      credentialsRefused: this.#creds.bad,
      receivingPaused: this.#receivingPaused,
      recordingsFolder: this.#folder,
    });
  }

  #buildHandlers(): RequestHandlers {
    return {
      'app:info': async (): Promise<AppInfo> => ({
        version: this.#version,
        platform: process.platform,
        transport: this.#opts.transport,
        demo: this.#demo,
        native: this.#opts.transport === 'ipc',
        fileActions: Boolean(this.#hooks.openFile && this.#hooks.revealFile),
      }),
      'app:diagnostics': async () => ({ text: await this.#diagnostics() }),
      'app:rendererError': async (report) => ({ logged: this.#rendererErrors.report(report) }),

      ...channelAndRecordingHandlers({
        api: () => this.#requireApi(),
        track: (promise) => this.#creds.track(promise),
        pipeline: () => requirePipeline(this.#host, this.#phase),
        host: this.#host,
        hooks: this.#hooks,
        log: this.#log,
        setLive: (channels) => {
          this.#live.channels = channels;
          this.#events.updateTray();
        },
        refreshLive: () => this.#poller.refresh(),
        updateTray: () => this.#events.updateTray(),
      }),

      'settings:get': async () => this.#settingsView(),
      'settings:checkFolder': async (path) => checkFolder(path),
      'settings:update': async (patch) => this.#queue.run(() => this.#updateSettings(patch)),
      'settings:chooseFolder': async () => {
        const choose = this.#hooks.chooseFolder;
        if (!choose) throw new ConfigError('Choosing a folder needs the desktop app: type the folder path instead.');
        const chosen = await choose.call(this.#hooks, this.#folderFor(this.#settings.get()));
        if (chosen === null) return null;
        return this.#queue.run(() => this.#updateSettings({ recordingsFolder: chosen }));
      },

      'credentials:status': async () => this.#credentialsStatus(),
      'credentials:setNgrokToken': async (token) => this.#afterCredentials(() => this.#creds.setNgrokToken(token)),
      'credentials:clearNgrokToken': async () => this.#afterCredentials(() => this.#creds.setNgrokToken(null)),
      'credentials:set': async (input) => this.#setCredentials(input),
      'credentials:clear': async () => this.#afterCredentials(() => this.#creds.clear()),
      'credentials:test': async (input) => this.#testCredentials(input),

      'tunnel:status': async () => this.#tunnelView(),
      'health:get': async () => this.#host.health(),
      'webhook:register': async () => this.#registerWebhook(),
      ...this.#studio.handlers(),
    };
  }

  // ---- Settings --------------------------------------------------------------------------------

  #settingsView(settings: Settings = this.#settings.get()): SettingsView {
    return toSettingsView(settings, {
      recordingsFolder: this.#folderFor(settings),
      ownRecordingsFolder: recordingsFolderFor(settings, null),
      demoMode: this.#demo,
      receivingPaused: this.#receivingPaused,
    });
  }

  /** The demo keeps its recordings apart unless the producer chose a folder of their own. */
  #folderFor(settings: Settings): string {
    const folder = recordingsFolderFor(settings, this.#demo ? { folder: demoRecordingsDir(this.#opts.home) } : null);
    // Remembered for the tray, which asks often and should not read the settings file every time.
    this.#folder = folder;
    return folder;
  }

  /**
   * Demo mode as the settings (or `tally serve --sandbox`) ask for it. Following a studio wins even over a
   * forced demo: a member mirrors the team's real recordings and needs no service for that (docs/studio.md).
   */
  #demoWanted(settings: Settings, hasCredentials: boolean): boolean {
    if (followsStudio(settings)) return false;
    return this.#forceDemo || effectiveDemoMode(settings, hasCredentials);
  }

  #pollIntervalMs(settings: Settings): number {
    return this.#opts.pollIntervalMs ?? settings.pollIntervalSec * 1000;
  }

  async #updateSettings(patch: SettingsPatch): Promise<SettingsView> {
    const storePatch = toStorePatch(patch);
    // The demo's own folder never becomes the real one (a demo run deletes older recordings there): said, not
    // silently dropped, however the path was typed.
    const demoFolder = demoRecordingsDir(this.#opts.home);
    if (storePatch.recordingsFolder !== undefined && expandFolder(storePatch.recordingsFolder) === demoFolder) {
      throw new ValidationError(['recordingsFolder'], note('demoFolderRefused', { folder: demoFolder }));
    }
    const before = this.#settings.get();
    // Validate before any side effect, so a bad field changes nothing at all.
    const next = applySettingsPatch(before, storePatch);
    await checkFolderChange(before, next, storePatch);
    if (next.launchAtLogin !== before.launchAtLogin) await this.#hooks.setLaunchAtLogin?.(next.launchAtLogin);
    if (Object.keys(storePatch).length > 0) this.#settings.update(storePatch);
    if (patch.demoMode === false) this.#forceDemo = false;
    if (patch.receivingPaused !== undefined) this.#receivingPaused = patch.receivingPaused;
    this.#pushFacts();
    try {
      if (this.#phase === 'running') await this.#reconcile();
      else this.#demo = this.#demoWanted(this.#settings.get(), (await this.#loadCredentials()) !== null);
    } catch (error) {
      // The change is saved even when what it restarts failed: the page must show it (and the fields it
      // brings) at once, beside the error the request answers with.
      this.#emit('settings:changed', this.#settingsView());
      throw error;
    }
    const view = this.#settingsView();
    this.#emit('settings:changed', view);
    // New hosts may have put the secret out of use (or back in use): the credentials view must say so.
    if (patch.endpoints !== undefined) await this.#credentialsChanged();
    this.#events.updateTray();
    return view;
  }

  /** Settings → Advanced → Copy diagnostics: the report `tally doctor` prints, from this face. */
  async #diagnostics(): Promise<string> {
    const settings = this.#settings.get();
    const credentials = await this.#loadCredentials().catch(() => null);
    const face = this.#opts.transport === 'ipc' ? 'app' : 'serve';
    return diagnosticsText({
      madeBy: face === 'app' ? 'Tally, Settings → Advanced → Copy diagnostics' : 'tally serve, Copy diagnostics',
      version: this.#version,
      home: this.#opts.home,
      settings,
      settingsWarnings: this.#settings.warnings,
      health: [{ who: face === 'app' ? 'the tray app' : 'tally serve', health: await this.#host.health() }],
      journal: await journalCounts(this.#opts.home),
      demoJournal: await journalCounts(demoStateDir(this.#opts.home)),
      logs: await recentLogs(this.#opts.home, [face]),
      crashes: crashFacts(this.#opts.home),
      secrets: [
        ...secretsInEnv(this.#env),
        ...(credentials ? [credentials.secret] : []),
        ...(await this.#creds.keychainSecrets()),
        ...(await stateFolderSecrets(this.#opts.home)),
      ],
    });
  }

  // ---- Credentials -----------------------------------------------------------------------------

  /** Credentials for the configured hosts, or null (none, or withheld: see CredentialResolver). */
  #loadCredentials(): Promise<Credentials | null> {
    return this.#creds.load(this.#configuredEndpoints());
  }

  #configuredEndpoints(settings: Settings = this.#settings.get()): Endpoints {
    return resolveEndpoints({ env: this.#env, settings: settings.endpoints });
  }

  /** A credentials change (keychain entry, ngrok authtoken), then what depends on it rebuilt and the views told. */
  #afterCredentials(change: () => Promise<void>): Promise<CredentialsStatus> {
    return this.#queue.run(async () => {
      await change();
      await this.#reconcile();
      return this.#credentialsChanged();
    });
  }

  #credentialsStatus(): Promise<CredentialsStatus> {
    const sandbox = this.#demoTarget();
    return this.#creds.status(this.#configuredEndpoints(), sandbox ? sandbox.credentials.serviceId : null);
  }

  async #credentialsChanged(): Promise<CredentialsStatus> {
    const status = await this.#credentialsStatus();
    this.#emit('credentials:changed', status);
    this.#events.updateTray();
    return status;
  }

  async #setCredentials(input: CredentialsInput): Promise<CredentialsStatus> {
    this.#creds.assertStorable();
    // Nothing is stored unless the service accepts the pair.
    await this.#creds.testClient(input, this.#configuredEndpoints(), this.#version).testConnection();
    return this.#queue.run(async () => {
      // Entered (and accepted) for the configured hosts: trusted with those from now on.
      await this.#creds.store(input, this.#configuredEndpoints());
      this.#forceDemo = false;
      if (this.#settings.get().demoMode === true) this.#settings.update({ demoMode: false });
      if (this.#phase === 'running') await this.#reconcile();
      else this.#demo = false;
      this.#emit('settings:changed', this.#settingsView());
      return this.#credentialsChanged();
    });
  }

  #testCredentials(input: CredentialsInput | undefined): Promise<{ ok: boolean; message: string }> {
    const api = () =>
      input ? this.#creds.testClient(input, this.#configuredEndpoints(), this.#version) : this.#requireApi();
    return this.#creds.test(api, input === undefined);
  }

  #requireApi(): ChannelApi {
    if (this.#api) return this.#api;
    throw new ConfigError(this.#phase === 'new' ? NOT_STARTED : this.#phase === 'running' ? NO_CREDENTIALS : STOPPED);
  }

  #onLive(channels: Channel[]): void {
    this.#creds.setBad(false, false);
    this.#emit('channels:live', this.#live.succeeded(channels).map(channelToJson));
    this.#events.updateTray();
  }

  #onPollError(error: unknown): void {
    const view = errorView(error);
    if (!(error instanceof TallyError)) this.#log(`live poll failed: ${describe(error)}`);
    if (error instanceof BadCredentialsError) this.#creds.setBad(true);
    if (this.#live.failed(view)) this.#emit('app:error', view);
  }

  // ---- Tunnel and webhook registration ---------------------------------------------------------

  #tunnelView(): TunnelStatus {
    return this.#host.view();
  }

  /** Tells the pipeline host which demo sandbox stands in for the service now (after every mode change). */
  #pushDemo(): void {
    this.#host.setDemo(this.#demoTarget());
  }

  /** The demo sandbox while it stands in for the service, else null. */
  #demoTarget(): DemoSandbox | null {
    return this.#demo ? this.#demoRun.sandbox : null;
  }

  #registerWebhook(): Promise<TunnelStatus> {
    this.#studio.assertMayRegister();
    const api = (url: string) => this.#requireApi().setRecordHook(url);
    return this.#host.register(requirePipeline(this.#host, this.#phase), this.#demoTarget(), api, (p) =>
      this.#creds.track(p),
    );
  }

  // ---- Reconcile: mode, client and pipeline from settings + credentials ------------------------

  async #reconcile(): Promise<void> {
    if (this.#phase !== 'running') return;
    const settings = this.#settings.get();
    const credentials = await this.#loadCredentials();
    const demo = this.#demoWanted(settings, credentials !== null);
    const running = this.#demoRun.sandbox;
    const modeChanged = demo !== this.#demo || (demo && !running) || (!demo && running !== null);
    this.#demo = demo;

    if (modeChanged) {
      // The old pipeline downloads from the old backend: it goes first, and is not to be reopened.
      await this.#host.stop(true);
      await this.#demoRun.close();
      this.#live.channels = [];
      this.#emit('channels:live', []);
      if (demo) {
        const started = await this.#demoRun.start();
        this.#log('demo mode: the embedded sandbox is running');
        this.#opts.trail?.child('demo').info(`demo mode: sandbox service at ${started.apiUrl}`);
      }
    }
    this.#pushDemo();

    const endpoints = this.#configuredEndpoints(settings);
    const sandbox = this.#demoTarget();
    this.#api = buildAppApi(sandbox, endpoints, credentials, this.#version);
    this.#apiCredentials = sandbox ? sandbox.credentials : credentials;
    const backend = [this.#demoRun.sandbox?.apiUrl ?? null, endpoints, this.#apiCredentials?.serviceId];
    const apiKey = this.#api ? JSON.stringify(backend) : null;
    const apiChanged = apiKey !== this.#apiKey;
    this.#apiKey = apiKey;
    this.#poller.setIntervalMs(this.#pollIntervalMs(settings));

    let built: ReturnType<typeof appPipelineSpec> | null = null;
    try {
      built = await this.#pipelineSpec(settings);
      await this.#host.reconcile(built.spec, built.key, settings, this.#receivingPaused, this.#demoTarget());
      this.#host.clearError();
    } catch (error) {
      // When nothing receives, not even the previous setup, the whole reconcile is tried again.
      this.#host.failed(error, () => void this.#queue.run(() => this.#reconcile()).catch(() => undefined));
      throw error;
    } finally {
      // The studio follows the pipeline that receives now (the new one, or the previous setup reopened).
      if (built) await this.#studio.reconcile(built.studio, this.#host.pipeline, built.spec.folder);
      this.#emit('tunnel:status', this.#tunnelView());
      this.#poller.reschedule();
      if (apiChanged) {
        // Another backend or project: the list on screen is stale and its errors no longer apply.
        this.#live.forgetError();
        if (this.#poller.currentDelayMs !== null) void this.#poller.refresh();
      }
      this.#events.updateTray();
    }
  }

  async #pipelineSpec(settings: Settings): Promise<ReturnType<typeof appPipelineSpec>> {
    // Keeps the tray's cached folder in step with the one the pipeline is built with.
    this.#folderFor(settings);
    return appPipelineSpec({
      settings,
      currentSettings: () => this.#settings.get(),
      env: this.#env,
      home: this.#opts.home,
      log: this.#log,
      credentials: this.#apiCredentials,
      endpoints: this.#configuredEndpoints(settings),
      api: this.#api ? () => this.#requireApi() : null,
      ngrokAuthtoken: settings.tunnel.provider === 'ngrok' ? await this.#creds.ngrokAuthtoken() : null,
      sandbox: this.#demoTarget(),
      overrides: this.#opts.pipelineOverrides,
    });
  }
}

/**
 * Creates the core: opens the settings file and probes the keychain, but starts nothing that listens or
 * polls until `start()`. Every request handler of the contract works before `start()` where it can
 * (settings, credentials status, app info) and answers "still starting" where it cannot.
 */
export async function createAppCore(options: AppCoreOptions): Promise<AppCore> {
  const core = new ReconcilingAppCore(options);
  await core.init();
  return core;
}
