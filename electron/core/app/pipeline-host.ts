/**
 * The app core's side of the recording pipeline: opens it (on another port when the configured one is
 * taken), keeps it in step with the settings, turns its events into view pushes and notifications, and
 * answers what the views ask about recordings, the tunnel and the tray's progress.
 */
import { errorNote, note, notesText, type Note, type RecordingView, type TunnelStatus } from '../../contract.js';
import { ConfigError, TallyError } from '../errors.js';
import { ensureWritableFolder } from '../folder-check.js';
import { RetryLoop } from '../retry-loop.js';
import type { RecordingPipeline, PipelineEvents, PipelineOptions } from '../pipeline/pipeline.js';
import type { RecordingJob } from '../recordings/types.js';
import type { ChannelHookCall } from '../webhook/channel-hook.js';
import type { MissingRecording } from '../pipeline/expected-recordings.js';
import type { GapReport } from '../../contract.js';
import type { Settings, SettingsStore } from '../settings.js';
import { systemClock, wallNow } from '../time.js';
import { NO_PUBLIC_URL, clean, describe, errorView, withSettingsField } from './core-messages.js';
import { LiveMissing } from './live-missing.js';
import { PROGRESS_INTERVAL_MS, type Phase } from './app-options.js';
import { REOPEN_BACKOFF } from './reopen-backoff.js';
import type { DemoWebhookTarget } from './demo.js';
import { trayCountsOf, type TrayCounts } from './tray-counts.js';
import {
  ReceiveService,
  type FaceFacts,
  type PublisherSetup,
  type ReceiveServiceOptions,
} from '../receive/receive-service.js';
import type { Logger } from '../logger.js';
import type { PublisherLink } from '../studio/publisher-link.js';
import type { StudioPublisher } from '../studio/publisher.js';
import type { HealthView } from '../../contract.js';
import { tunnelView } from './tunnel-view.js';
import {
  ProgressThrottle,
  UPLOAD_KEY_PREFIX,
  changeSignature,
  newestFirst,
  recordingView,
  refusedView,
  uploadView,
} from './recording-views.js';
import { HiddenRecordings, type HiddenKeys } from './hidden-recordings.js';
import {
  expiredNotice,
  failedNotice,
  liveNotice,
  missingNotice,
  refusedNotice,
  refusingNotice,
  savedNotice,
  unreachableNotice,
  uploadedNotice,
} from './pipeline-notices.js';
import type { AppCoreEvents } from './types.js';

const RECORDINGS_FOLDER = note('folderSourceSettings');

/** What the host needs from the core around it. */
export interface PipelineHostDeps {
  emit<E extends keyof AppCoreEvents>(event: E, payload: AppCoreEvents[E]): void;
  log(line: string): void;
  /** The event trail (see ReceiveServiceOptions.trail). */
  trail?: Logger;
  updateTray(): void;
  /** The settings, read by the host itself for its tunnel view (the store re-reads the file). */
  settings: Pick<SettingsStore, 'get'>;
  /** The app's state folder: removed-from-list keys live there until a pipeline says otherwise. */
  home: string;
  /** The channel lifecycle hook said a channel opened or closed (the live list updates at once). */
  onChannel?(call: ChannelHookCall): void;
  /** Which face `tally status` names: the tray app, or `tally serve`. */
  face: 'app' | 'serve';
  /** The health changed. */
  onHealth(view: HealthView, previous: HealthView | null): void;
  /** The receive service started a studio publisher beside the pipeline, with its link, or stopped it (nulls). */
  onPublisher?(publisher: StudioPublisher | null, link: PublisherLink | null): void;
  /**
   * The rows removed from the Recordings list, handed up for the studio host at once and whenever the host keeps
   * them elsewhere (another state folder): the host owns them and pushes them down; nobody asks it back.
   */
  hiddenChanged?(keys: HiddenKeys): void;
  /** Options handed to the receive service as they are (the app core's own options: see AppCoreOptions). */
  receive?: Pick<ReceiveServiceOptions, 'openPipeline'>;
}

/** What only the app core knows about the health, pushed down (PipelineHost.setFacts). */
export type AppFacts = Partial<Omit<FaceFacts, 'hidden' | 'down'>>;

export class PipelineHost {
  readonly #deps: PipelineHostDeps;
  readonly progress: ProgressThrottle;
  readonly #signatures = new Map<string, string>();
  #pipeline: RecordingPipeline | null = null;
  #key: string | null = null;
  /** Reopens while nothing receives: one attempt pending at a time, a replaced one waits the same. */
  readonly #reopen = new RetryLoop({ policy: REOPEN_BACKOFF, clock: systemClock });
  /** The options and key of the last pipeline that started: reopened when a change cannot start. */
  #working: { spec: PipelineOptions; key: string } | null = null;
  #detach: (() => void) | null = null;
  #unreachableNotified = false;
  /** The app core's phase and demo sandbox, pushed by the core (setPhase, setDemo), for the tunnel view. */
  #phase: Phase = 'new';
  #viewDemo: DemoWebhookTarget | null = null;
  /** Demo mode as the core last pushed it (setFacts): the port policy moves the port for the demo sandbox. */
  #factsDemo = false;
  /** The demo sandbox the pipeline receives from, pointed at the receiver whenever it (re)listens. */
  #demo: DemoWebhookTarget | null = null;
  /** The one receive service (port policy, health, `tally status`), as `tally listen` uses it too. */
  readonly #service: ReceiveService;
  /** State folder of the pipeline last configured (where its removed-from-list keys live). */
  #stateDir: string | null = null;
  #hidden: { dir: string; keys: HiddenRecordings } | null = null;
  /** Closed channels whose recording webhook never came (newest first), the live twin of the gap report. */
  readonly #liveMissing = new LiveMissing();
  /** Why the last reconcile failed (nothing receives, or a change was not applied), until the next one succeeds. */
  error: string | null = null;
  /** `error` as notes for the popover (see core/notes.ts); set with it. */
  errorNotes: Note[] | null = null;

  /**
   * Reports a failed reconcile: a change that was not applied while a pipeline (the previous setup) still
   * receives, else why nothing does; then `retry` runs again later and later (bounded: see REOPEN_BACKOFF).
   */
  failed(error: unknown, retry: () => void): void {
    const cause = errorNote(error instanceof TallyError ? error : { message: describe(error) });
    const waitMs = this.#pipeline ? null : (this.#reopen.retry(retry)?.delayMs ?? null);
    const again = waitMs === null ? [] : [note('retryingSeconds', { seconds: Math.ceil(waitMs / 1000) })];
    this.errorNotes = this.#pipeline ? [note('changeNotApplied'), cause] : [note('notReceiving'), cause, ...again];
    this.error = notesText(this.errorNotes);
    // Why nothing receives, for the health (the service says it only while no pipeline runs): the cause alone,
    // after its own "The webhook receiver is not running:" (not "... not running: Recordings are not being
    // received: ...", and no "Retrying in 1 s" frozen into a line `tally status` shows minutes later).
    this.#service.setFacts({ down: [cause] });
    this.#deps.log(this.error);
    this.#deps.emit('app:error', { code: errorView(error).code, message: this.error });
  }

  /** The reconcile succeeded (or the app stops): no error, and no retry pending. */
  clearError(): void {
    this.error = this.errorNotes = null;
    this.#reopen.reset();
    this.#service.setFacts({ down: null });
  }

  constructor(deps: PipelineHostDeps) {
    this.#deps = deps;
    // The removed-from-list rows of the state folder in use, handed down (and again whenever that folder changes).
    this.#hidden = { dir: deps.home, keys: new HiddenRecordings(deps.home) };
    this.#service = new ReceiveService({
      face: deps.face,
      home: deps.home,
      log: deps.log,
      ...(deps.trail ? { trail: deps.trail } : {}),
      facts: { hidden: this.#hidden.keys },
      ...deps.receive,
    });
    deps.hiddenChanged?.(this.#hidden.keys);
    this.#service.on('health', (view, previous) => {
      deps.onHealth(view, previous);
      deps.updateTray();
    });
    this.#service.on('publisher', (publisher, link) => deps.onPublisher?.(publisher, link));
    this.#service.on('refusing', (reason, reasonNote) => {
      if (reason !== null) {
        deps.emit('notify', refusingNotice(reason, reasonNote));
      }
      deps.updateTray();
    });
    this.progress = new ProgressThrottle({
      minIntervalMs: PROGRESS_INTERVAL_MS,
      push: (key, progress) => {
        const inbox = this.#pipeline?.inbox;
        const job = inbox?.get(key);
        if (!inbox || !job || job.state !== 'downloading') return;
        // Under its recording's row key (twins share one row; the one downloading is the one that stands).
        const row = inbox.standing(job).key;
        deps.emit('recordings:progress', { ...recordingView(job, progress), key: row });
        deps.updateTray();
      },
    });
  }

  get pipeline(): RecordingPipeline | null {
    return this.#pipeline;
  }

  /** Why new recording webhooks are being refused, while they are (the tray asks for attention). */
  get refusing(): string | null {
    return this.#service.refusing;
  }

  /** Whatever can cost a recording, judged (see receive/health.ts). */
  health(): HealthView {
    return this.#service.health();
  }

  /**
   * What only the app core knows about the health (demo mode, keychain, its studio link, paused), pushed by the
   * core whenever it changes: the host and its service never ask the core back (issue 35).
   */
  setFacts(facts: AppFacts): void {
    if (facts.demo !== undefined) this.#factsDemo = facts.demo;
    this.#service.setFacts(facts);
  }

  /** Starts the health checks and `tally status`'s socket (before any pipeline: health exists without one). */
  start(): Promise<void> {
    return this.#service.start();
  }

  /** Which studio publisher runs beside every pipeline (a studio's receiver), or none. */
  publish(setup: PublisherSetup | null): Promise<void> {
    return this.#service.publish(setup);
  }

  /** Retries now a channel's recordings or one recording key (`tally retry`). */
  retryNow(target: string): Promise<string[]> {
    return this.#service.retry(target);
  }

  /** Stops the pipeline, the health checks and the socket. */
  async shutdown(): Promise<void> {
    await this.stop(true);
    await this.#service.stop();
  }

  /** Rebuilds the pipeline when `key` (see pipelineOptions) changed, else applies the cheap settings to it. */
  async reconcile(
    spec: PipelineOptions,
    key: string,
    settings: Settings,
    paused: boolean,
    demo: DemoWebhookTarget | null,
  ): Promise<void> {
    this.#stateDir = spec.stateDir;
    this.#hiddenRecordings();
    if (key !== this.#key || !this.#pipeline) {
      const previous = this.#working;
      await this.stop();
      try {
        await this.#open(spec, paused);
      } catch (error) {
        // Nothing receives now: the last configuration that worked is reopened so webhooks keep arriving,
        // and the change is still reported as failed.
        if (previous && previous.key !== key) await this.#reopenPrevious(previous, paused, demo);
        throw withSettingsField(error);
      }
      this.#key = key;
      this.#working = { spec, key };
    }
    const pipeline = this.#pipeline as RecordingPipeline | null;
    if (!pipeline) return;
    if (pipeline.downloads.folder !== spec.folder) {
      await ensureWritableFolder(spec.folder, { source: RECORDINGS_FOLDER });
      pipeline.downloads.setFolder(spec.folder);
    }
    pipeline.downloads.setConcurrency(settings.concurrency);
    // spec.register, not the setting itself: a studio member never registers (see autoRegisterFor).
    if (pipeline.registrar && spec.register !== undefined && pipeline.registrar.enabled !== spec.register) {
      pipeline.registrar.setEnabled(spec.register);
    }
    await pipeline.setDownloadsPaused(paused);
    this.#pointDemo(pipeline, demo);
  }

  /** The last configuration that opened, reopened after a change failed; a failure here only gets a line. */
  async #reopenPrevious(
    previous: { spec: PipelineOptions; key: string },
    paused: boolean,
    demo: DemoWebhookTarget | null,
  ) {
    try {
      this.#stateDir = previous.spec.stateDir;
      this.#hiddenRecordings();
      await this.#open(previous.spec, paused);
      this.#key = previous.key;
      this.#pointDemo(this.#pipeline as RecordingPipeline, demo);
      this.#deps.log('the previous receiver setup was reopened and is receiving recordings');
    } catch (error) {
      this.#deps.log(`the previous receiver setup could not be reopened either: ${describe(error)}`);
    }
  }

  #pointDemo(pipeline: RecordingPipeline, demo: DemoWebhookTarget | null): void {
    this.#demo = demo;
    // Not listening yet (its port is taken): pointed once it listens (see the `listen` listener).
    if (!pipeline.receiver.listening) return;
    if (demo && demo.control.webhookUrl !== pipeline.receiver.localUrl) {
      demo.control.setWebhookUrl(pipeline.receiver.localUrl);
      // The demo sandbox gets the lifecycle hook too, so its live list updates at once.
      demo.control.setChannelWebhookUrl(pipeline.receiver.localUrl);
    }
  }

  /** Stops the pipeline; `forget` when its backend goes too, so its setup is never reopened. */
  async stop(forget = false): Promise<void> {
    if (forget) this.#working = null;
    const pipeline = this.#pipeline;
    if (!pipeline) return;
    this.#pipeline = null;
    this.#key = null;
    // Listeners stay attached while stopping so the jobs it sets back to pending reach the views.
    await this.#service.close();
    this.#detach?.();
    this.#detach = null;
    this.progress.clearAll();
  }

  /**
   * What the app core tells the host about itself: its phase, and the demo sandbox while it stands in for the
   * service. The core pushes them when they change; the host never asks the core back (issue 35).
   */
  setPhase(phase: Phase): void {
    this.#phase = phase;
  }

  setDemo(demo: DemoWebhookTarget | null): void {
    this.#viewDemo = demo;
  }

  /** The tunnel status with the receiver's URLs, the port note, the demo's registration and any restart problem. */
  view(): TunnelStatus {
    const { error, errorNotes } = this;
    const settings = this.#deps.settings.get();
    return tunnelView({
      pipeline: this.#pipeline,
      settings,
      phase: this.#phase,
      demo: this.#viewDemo,
      error,
      errorNotes,
    });
  }

  /**
   * Registers the public webhook URL now (or points the demo sandbox at the local one), then pushes and
   * returns the tunnel view that shows it.
   */
  async register(
    pipeline: RecordingPipeline,
    demo: DemoWebhookTarget | null,
    setRecordHook: (url: string) => Promise<void>,
    track: <T>(promise: Promise<T>) => Promise<T>,
  ): Promise<TunnelStatus> {
    if (demo) {
      demo.control.setWebhookUrl(pipeline.receiver.localUrl);
      demo.control.setChannelWebhookUrl(pipeline.receiver.localUrl);
    } else {
      const url = pipeline.supervisor.status.publicUrl;
      if (!url) throw new ConfigError(NO_PUBLIC_URL);
      if (pipeline.registrar) await track(pipeline.registrar.registerNow(url));
      else {
        await track(setRecordHook(url));
        pipeline.supervisor.setRegisteredUrl(url);
      }
    }
    const view = this.view();
    this.#deps.emit('tunnel:status', view);
    return view;
  }

  /** A download as the views show it: its live progress, and when it is tried again while it waits. */
  viewOf(job: RecordingJob): RecordingView {
    // One row per recording: twins (one recording in both webhook forms) show as the one further along, under the
    // earlier one's key, whichever of the two changed.
    const pair = this.#pipeline?.inbox.standing(job) ?? { key: job.key, job };
    const stand = pair.job;
    const next = this.#pipeline?.downloads.nextAttemptAt(stand.key) ?? null;
    const view = recordingView(stand, this.progress.get(stand.key), 'server', next);
    return view.key === pair.key ? view : { ...view, key: pair.key };
  }

  /** Downloads and client uploads together, newest first, without those the producer removed from the list. */
  /**
   * Recordings that come from elsewhere than this pipeline (a studio member's mirrored copies): one list, one
   * key space, the same actions.
   */
  mirrored: { list(): RecordingView[]; savedPath(key: string): string | null } | null = null;

  list(): RecordingView[] {
    const jobs = this.#pipeline?.inbox.list() ?? [];
    const uploads = this.#pipeline?.uploadLog?.list() ?? [];
    const refused = this.#pipeline?.uploadLog?.listRefused() ?? [];
    const hidden = this.#hiddenRecordings();
    const inbox = this.#pipeline?.inbox;
    // A twin's row is its recording's row, listed once under the earlier twin's key (see viewOf).
    const rows = jobs.filter((job) => !job.twin || inbox?.twinOf(job.key) === undefined);
    return [
      ...rows.map((job) => this.viewOf(job)),
      ...uploads.map(uploadView),
      ...refused.map(refusedView),
      ...(this.mirrored?.list() ?? []),
    ]
      .filter((view) => !hidden.has(view.key))
      .sort(newestFirst);
  }

  /**
   * Removes a finished entry from the list (the file stays). Only finished ones: hiding a download in progress
   * would hide whether it still needs attention.
   */
  async remove(key: string): Promise<{ ok: boolean }> {
    const view = this.list().find((r) => r.key === key);
    if (!view || view.state === 'pending' || view.state === 'downloading') return { ok: false };
    // A row may stand for twins (one recording in both webhook forms): both go, with their parts.
    const twin = this.#pipeline?.inbox.twinOf(key);
    for (const each of twin === undefined ? [key] : [key, twin]) {
      await this.#hiddenRecordings().add(each);
      // The part of a recording that will not be finished holds disk the others need (issue 20).
      await this.#pipeline?.downloads.releasePart(each).catch(() => 0);
    }
    return { ok: true };
  }

  /** The removed-from-list keys of the state folder in use (demo and real service keep separate lists). */
  #hiddenRecordings(): HiddenRecordings {
    const dir = this.#stateDir ?? this.#deps.home;
    if (this.#hidden?.dir !== dir) {
      this.#hidden = { dir, keys: new HiddenRecordings(dir) };
      this.#service.setFacts({ hidden: this.#hidden.keys });
      this.#deps.hiddenChanged?.(this.#hidden.keys);
    }
    return this.#hidden.keys;
  }

  /** The saved file behind a view key, of either source; null when there is none (yet). */
  savedPath(key: string): string | null {
    const mirrored = this.mirrored?.savedPath(key);
    if (mirrored) return mirrored;
    if (key.startsWith(UPLOAD_KEY_PREFIX)) {
      return this.#pipeline?.uploadLog?.get(key.slice(UPLOAD_KEY_PREFIX.length))?.path ?? null;
    }
    const inbox = this.#pipeline?.inbox;
    const job = inbox?.get(key);
    // A row of twins: the file is the saved one's, whichever of the two saved it.
    const stand = job && inbox ? inbox.standing(job).job : undefined;
    return stand?.state === 'saved' ? stand.path : null;
  }

  trayCounts(now: number = wallNow()): TrayCounts {
    return trayCountsOf(
      {
        pipeline: this.#pipeline,
        progress: this.progress,
        liveMissing: this.#liveMissing.list,
        hidden: (key) => this.#hiddenRecordings().has(key),
      },
      now,
    );
  }

  async #open(spec: PipelineOptions, paused: boolean): Promise<void> {
    // Not a recursive mkdir: where a file system refuses folders it would spin (see folder-check.ts).
    await ensureWritableFolder(spec.folder, { source: RECORDINGS_FOLDER });
    const opened = await this.#service.open(spec, { paused, demo: this.#factsDemo, attach: (p) => this.#attach(p) });
    this.#pipeline = opened.pipeline;
    this.#detach = opened.detach;
  }

  #attach(pipeline: RecordingPipeline): () => void {
    const { emit, log } = this.#deps;
    const offs: (() => void)[] = [];
    const on = <K extends keyof PipelineEvents>(event: K, listener: (...args: PipelineEvents[K]) => void) => {
      // Node's typed EventEmitter cannot relate a generic key to its listener; the signature above does.
      pipeline.on(event, listener as never);
      offs.push(() => pipeline.off(event, listener as never));
    };
    on('changed', (job) => this.#onJobChanged(job, pipeline));
    on('progress', (e) =>
      this.progress.update(e.key, { bytes: e.bytes, total: e.total, rate: e.rate, etaSeconds: e.etaSeconds }),
    );
    on('saved', (e) => emit('notify', savedNotice(e)));
    on('failed', (e) => {
      // Now that the next attempt is scheduled, the views can say when (the change itself came before it).
      if (e.willRetry) {
        const job = pipeline.inbox.get(e.job.key);
        if (job && pipeline === this.#pipeline) emit('recordings:changed', this.viewOf(job));
        return;
      }
      emit('notify', failedNotice(e));
    });
    on('expired', (e) => emit('notify', expiredNotice(e)));
    on('uploaded', (e) => {
      emit('recordings:changed', uploadView(e));
      emit('notify', uploadedNotice(e));
    });
    on('upload-refused', (record) => {
      emit('recordings:changed', refusedView(record));
      emit('notify', refusedNotice(record));
      this.#deps.updateTray();
    });
    on('tunnel', (status) => this.#onTunnel(status));
    on('listen', (state) => {
      if (state.listening && pipeline === this.#pipeline) this.#pointDemo(pipeline, this.#demo);
      emit('tunnel:status', this.view());
    });
    on('gaps', () => emit('recordings:gaps', this.gaps()));
    on('channel', (call) => {
      this.#deps.onChannel?.(call);
      if (call.action === 'create') emit('notify', liveNotice(call.channelId));
    });
    on('recording-missing', (m) => this.#onMissing(m));
    on('registered', () => emit('tunnel:status', this.view()));
    on('registration-failed', (info) =>
      emit('app:error', { code: 'registration', message: `The webhook URL could not be registered: ${info.message}` }),
    );
    on('rejected', (r) => {
      const channel = r.channelId !== undefined ? ` channel ${clean(r.channelId, 200)}` : '';
      log(`webhook refused (${r.status})${channel}: ${clean(r.reason)}`);
    });
    return () => {
      for (const off of offs) off();
    };
  }

  #onJobChanged(job: RecordingJob, pipeline: RecordingPipeline): void {
    if (pipeline !== this.#pipeline && this.#pipeline !== null) return;
    if (job.state !== 'downloading') this.progress.clear(job.key);
    const view = this.viewOf(job);
    const signature = changeSignature(view);
    // By the row's key: twins share one row, and a change of the one not shown changes nothing there.
    if (this.#signatures.get(view.key) !== signature) {
      this.#signatures.set(view.key, signature);
      this.#deps.emit('recordings:changed', view);
    }
    this.#deps.updateTray();
  }

  /** The gap report with the live twin's findings (closed channels whose recording never came) added. */
  gaps(): GapReport {
    return this.#liveMissing.report(this.#pipeline?.lastGapReport ?? null);
  }

  #onMissing(m: MissingRecording): void {
    this.#liveMissing.add(m);
    this.#deps.emit('recordings:gaps', this.gaps());
    this.#deps.emit('notify', missingNotice(m));
    this.#deps.updateTray();
  }

  #onTunnel(status: TunnelStatus): void {
    if (status.state === 'unreachable' && !this.#unreachableNotified) {
      this.#unreachableNotified = true;
      this.#deps.emit('notify', unreachableNotice(status));
    } else if (status.state === 'reachable') {
      this.#unreachableNotified = false;
    }
    this.#deps.emit('tunnel:status', this.view());
    this.#deps.updateTray();
  }
}
