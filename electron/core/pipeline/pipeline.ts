/**
 * The recording pipeline as one unit: durable inbox, webhook receiver, download manager, tunnel supervisor,
 * optional auto-registration of the public webhook URL, and the gap report. `tally listen` and the app
 * core both run exactly this, so headless and tray behave the same.
 *
 * Start order matters for "nothing lost": the inbox is replayed first, the downloader resumes pending jobs,
 * then the receiver starts accepting, then the tunnel exposes it. Stop is the reverse, and the journal is
 * closed last so every acknowledged webhook is on disk.
 */
import { note, noteText } from '../notes.js';
import { EventEmitter } from 'node:events';
import { ensureWritableFolder } from '../folder-check.js';
import { DownloadManager, type DiskStatus } from './download-manager.js';
import { AutoRegistrar, TunnelSupervisor, tunnelProviderFor } from '../tunnels/index.js';
import { WebhookReceiver, isAddressInUse } from '../webhook/receiver.js';
import { TokenStore } from '../webhook/token.js';
import { DEFAULT_RECORDING_GRACE_MS, ExpectedRecordings } from './expected-recordings.js';
import { UploadLog, newUploadId, type RefusedUploadRecord } from '../uploads/upload-log.js';
import { mountUploads, type UploadRoute, type UploadSpace } from '../uploads/upload-route.js';
import { findGaps, readHeartbeat, writeHeartbeat, type GapReportResult } from '../recordings/gap-report.js';
import { Inbox } from '../recordings/inbox.js';
import { originIdentifier } from '../download/origin-probe.js';
import { keepNewestRecordings } from '../recordings/keep-newest.js';
import { describeError, silentLogger } from '../logger.js';
import { RetryLoop } from '../retry-loop.js';
import { acquireStateLock, type StateLock } from '../recordings/state-lock.js';
import type { DownloadOriginPolicy } from '../net/url-policy.js';
import { isoAt, systemClock } from '../time.js';
import { wallClockStepSince, writeClockAnchor } from '../clock-anchor.js';
import type {
  ListenState,
  PipelineEvents,
  PipelineOptions,
  PipelineReady,
  PipelineUploadOptions,
} from './pipeline-types.js';

/** First wait before trying a taken port again, and the longest (see `waitForPort`). */
export const LISTEN_RETRY_FIRST_MS = 2_000;
export const LISTEN_RETRY_MAX_MS = 30_000;

export type {
  ListenState,
  PipelineApi,
  PipelineEvents,
  PipelineOptions,
  PipelineReady,
  PipelineRejection,
  PipelineUploadOptions,
  PipelineUploadedEvent,
} from './pipeline-types.js';

export class RecordingPipeline extends EventEmitter<PipelineEvents> {
  readonly inbox: Inbox;
  readonly receiver: WebhookReceiver;
  readonly downloads: DownloadManager;
  readonly supervisor: TunnelSupervisor;
  readonly registrar: AutoRegistrar | null;
  readonly #opts: PipelineOptions;
  #heartbeat: NodeJS.Timeout | null = null;
  #detachRegistrar: (() => void) | null = null;
  #downloadsPaused = false;
  #running = false;
  /** Whether the clock anchor follows the download queue's wall-clock steps (core/clock-anchor.ts). */
  #anchored = false;
  #lastGaps: GapReportResult | null = null;
  readonly #lock: StateLock;
  #uploads: UploadRoute | null = null;
  #uploadLog: UploadLog | null = null;
  readonly expected: ExpectedRecordings;
  #pruning: Promise<unknown> = Promise.resolve();
  #tokenReplaced: { name: string; why: string } | null = null;
  #listen: ListenState | null = null;
  /** Tries a taken port again (see `waitForPort`); exact waits: one receiver, nobody retries in step with it. */
  readonly #listenRetry = new RetryLoop({
    policy: { baseMs: LISTEN_RETRY_FIRST_MS, maxMs: LISTEN_RETRY_MAX_MS },
    clock: systemClock,
  });

  private constructor(opts: PipelineOptions, inbox: Inbox, tokens: TokenStore, lock: StateLock) {
    super();
    this.#opts = opts;
    this.#lock = lock;
    this.inbox = inbox;
    this.receiver = new WebhookReceiver({
      inbox,
      policy: opts.policy,
      tokens,
      host: opts.host ?? '127.0.0.1',
      port: opts.port ?? 0,
      ...(opts.maxUnfinishedJobs !== undefined ? { maxUnfinishedJobs: opts.maxUnfinishedJobs } : {}),
      ...(opts.uploads ? { timeouts: { requestMs: opts.uploads.requestTimeoutMs ?? 6 * 60 * 60 * 1000 } } : {}),
    });
    this.downloads = new DownloadManager({
      store: inbox,
      folder: opts.folder,
      policy: opts.policy,
      concurrency: opts.concurrency,
      fileNameTemplate: opts.fileNameTemplate,
      maxRecordingBytes: opts.maxRecordingBytes,
      segments: opts.segments,
      retryBaseMs: opts.retryBaseMs,
      ...(opts.retryMaxMs !== undefined ? { retryMaxMs: opts.retryMaxMs } : {}),
      ...(opts.stallRule !== undefined ? { stallRule: opts.stallRule } : {}),
      ...(opts.diskFloorBytes !== undefined ? { diskFloorBytes: opts.diskFloorBytes } : {}),
      ...(opts.diskRecheckMs !== undefined ? { diskRecheckMs: opts.diskRecheckMs } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      // Webhooks are answered before the downloads they bring start (the service never resends one).
      acksFirst: {
        busy: () => this.receiver.busy,
        onQuiet: (listener) => {
          this.receiver.on('quiet', listener);
          return () => this.receiver.off('quiet', listener);
        },
      },
    });
    // A tunnel setting that cannot work shows in the tunnel status; the receiver starts all the same.
    const provider = tunnelProviderFor(opts.tunnel ?? { provider: 'none' }, {
      ngrokAuthtoken: opts.ngrokAuthtoken ?? null,
      ngrokSdk: opts.ngrokSdk,
    });
    const receiver = this.receiver;
    this.supervisor = new TunnelSupervisor({
      provider,
      get local() {
        return { host: opts.host ?? '127.0.0.1', port: receiver.port };
      },
      localUrl: null,
      webhookUrl: (base) => `${base}${receiver.hookPath}`,
      selfCheckUrl: (base) => `${base}${receiver.healthPath}`,
      ...(opts.uploads
        ? {
            uploadUrl: (base: string) => `${base}${receiver.routePath('uploads')}`,
            uploadOrigins: opts.uploads.allowedOrigins,
          }
        : {}),
      expectedId: receiver.instanceId,
      signProbe: (nonce) => receiver.signProbe(nonce),
      checkIntervalMs: opts.tunnelCheckIntervalMs,
      ...(opts.connectTo ? { connectTo: opts.connectTo } : {}),
      // A failed check is repeated sooner, but never later than the regular period.
      ...(opts.tunnelCheckIntervalMs ? { retryCheckIntervalMs: Math.min(10_000, opts.tunnelCheckIntervalMs) } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    });
    this.registrar =
      opts.api && opts.register !== undefined
        ? new AutoRegistrar({
            api: opts.api,
            stateDir: opts.stateDir,
            enabled: opts.register,
            scope: opts.projectScope ?? null,
          })
        : null;

    const expect = opts.expectRecordings ?? 'auto';
    this.expected = new ExpectedRecordings({
      graceMs: opts.recordingGraceMs ?? DEFAULT_RECORDING_GRACE_MS,
      expecting: () => (expect === 'auto' ? inbox.keys().length > 0 : expect),
      onMissing: (missing) => this.emit('recording-missing', missing),
    });
    this.receiver.on('received', (job, warnings) => {
      this.expected.received(job.channelId);
      this.emit('received', job, warnings);
    });
    this.receiver.on('duplicate', (job) => {
      this.expected.received(job.channelId);
      this.emit('duplicate', job);
    });
    this.receiver.on('channel', (call) => {
      if (call.action === 'close') this.expected.closed(call.channelId);
      else this.expected.opened(call.channelId);
      this.emit('channel', call);
    });
    this.receiver.on('rejected', (r) => this.emit('rejected', r));
    this.downloads.on('progress', (e) => this.emit('progress', e));
    this.downloads.on('saved', (e) => {
      this.emit('saved', e);
      this.#keepNewest(this.downloads.folder);
    });
    this.downloads.on('failed', (e) => this.emit('failed', e));
    this.downloads.on('expired', (e) => this.emit('expired', e));
    this.downloads.on('disk', (status) => this.emit('disk', status));
    this.inbox.on('restored', (info) => void this.#restoreState(tokens, info));
    tokens.on('replaced', (name, why) => {
      this.#tokenReplaced = { name, why };
      (opts.log ?? silentLogger).warn(
        `token: ${why}; a new ${name} token was made, so the URL the service holds no longer works until it is registered again`,
      );
      this.emit('token-replaced', { name, why });
    });
    this.inbox.on('added', (job) => this.emit('changed', job));
    this.inbox.on('updated', (job) => this.emit('changed', job));
    this.supervisor.on('status', (s) => this.emit('tunnel', s));
    this.registrar?.on('registered', (r) =>
      this.emit('registered', { url: r.url, channelHookError: r.channelHookError ?? null }),
    );
    this.registrar?.on('failed', ({ url, error }) => this.emit('registration-failed', { url, message: error.message }));
  }

  /** Opens the journal and the token store; nothing listens yet. */
  static async open(opts: PipelineOptions): Promise<RecordingPipeline> {
    await ensureWritableFolder(opts.stateDir, { source: 'the state folder (TALLY_HOME)' });
    await ensureWritableFolder(opts.folder, { source: 'the recordings folder' });
    const lock = await acquireStateLock(opts.stateDir);
    if (lock.tookOver) (opts.log ?? silentLogger).warn(`state: ${lock.tookOver}`);
    try {
      // A webhook for a URL already saved is a duplicate only while the origin serves the same object (issue 31).
      // Within 5 s: the webhook waits for its answer meanwhile (and no answer means a new job, never a lost one).
      const identify = originIdentifier(opts.policy, { timeoutMs: 5_000 });
      const inbox = await Inbox.open(opts.stateDir, {
        identify,
        ...(opts.log ? { log: opts.log } : {}),
        ...(opts.retentionMs === undefined ? {} : { retentionMs: opts.retentionMs }),
      });
      const tokens = await TokenStore.open(opts.stateDir);
      const pipeline = new RecordingPipeline(opts, inbox, tokens, lock);
      if (opts.uploads)
        await pipeline.#mountUploads(opts.uploads).catch(async (error: unknown) => {
          await inbox.close();
          throw error;
        });
      return pipeline;
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /**
   * With `keepNewestRecordings` (the demo's own folder), deletes the oldest finished files of `dir` beyond
   * that many: the downloads folder after a save, the web client's uploads folder after an upload.
   */
  #keepNewest(dir: string): void {
    const keep = this.#opts.keepNewestRecordings;
    if (keep === undefined) return;
    // One prune at a time; a failed one is only a note (the next save or upload tries again).
    this.#pruning = this.#pruning
      .then(() => keepNewestRecordings(dir, keep))
      .catch((error: unknown) => this.#opts.log?.warn(`demo: pruning old recordings failed: ${describeError(error)}`));
  }

  async #mountUploads(uploads: PipelineUploadOptions): Promise<void> {
    const log = await UploadLog.open(this.#opts.stateDir);
    try {
      this.#uploads = await mountUploads(this.receiver, {
        folder: this.#opts.folder,
        subfolder: uploads.subfolder,
        maxBytes: uploads.maxBytes,
        maxConcurrent: uploads.maxConcurrent,
        allowedOrigins: uploads.allowedOrigins,
        log,
        space: this.#uploadSpace(),
      });
    } catch (error) {
      await log.close();
      throw error;
    }
    this.#uploadLog = log;
    const uploadsDir = this.#uploads.dir;
    this.#uploads.on('uploaded', (e) => {
      this.downloads.diskBudget.uploadSaved();
      this.emit('uploaded', {
        id: e.id,
        path: e.path,
        bytes: e.bytes,
        contentType: e.contentType,
        fileName: e.fileName,
        origin: e.origin,
        receivedAt: e.receivedAt,
        sha256: e.sha256,
        ...(e.warning ? { warning: e.warning } : {}),
        channelId: e.channelId ?? null,
        track: e.track ?? null,
      });
      this.#keepNewest(uploadsDir);
    });
    this.#uploads.on('rejected', (r) => {
      // Refused for space: the health says uploads are refused until there is room.
      const disk = this.diskStatus;
      if (r.status === 507 && disk?.uploadsRefused) this.emit('disk', { ...disk });
      this.emit('rejected', {
        status: r.status,
        reason: `upload: ${r.reason}`,
        remoteAddress: r.remoteAddress,
        upload: { channelId: r.channelId, track: r.track, fileName: r.fileName, origin: r.origin },
      });
      if (!r.recording) return;
      const record: RefusedUploadRecord = {
        id: newUploadId(),
        status: r.status,
        reason: r.reason,
        reasonNote: r.reasonNote,
        fileName: r.fileName,
        channelId: r.channelId,
        track: r.track,
        origin: r.origin,
        at: new Date().toISOString(),
      };
      // Listed even when the line cannot be written (a full disk may be the very reason for the refusal).
      log.appendRefused(record).catch((error: unknown) => {
        (this.#opts.log ?? silentLogger).warn(`uploads: a refusal could not be logged: ${describeError(error)}`);
      });
      this.emit('upload-refused', record);
    });
  }

  /**
   * Uploads draw from the downloads' disk budget (one budget for everything written to the recordings folder),
   * so neither can take the free space the journal keeps for webhooks.
   */
  #uploadSpace(): UploadSpace {
    const budget = this.downloads.diskBudget;
    const key = (id: string): string => `upload:${id}`;
    return {
      claim: (id, bytes) => budget.claim(key(id), this.downloads.folder, bytes),
      wrote: (id, bytes) => budget.wrote(key(id), bytes),
      release: (id) => budget.release(key(id)),
    };
  }

  /** The upload route when uploads are on (its folder, cap and events). */
  get uploads(): UploadRoute | null {
    return this.#uploads;
  }

  /** The durable list of saved web client uploads, when uploads are on (`list()` after a restart too). */
  get uploadLog(): UploadLog | null {
    return this.#uploadLog;
  }

  get running(): boolean {
    return this.#running;
  }

  /** The download-origin policy every fetch of a webhook's URL goes through. */
  get policy(): DownloadOriginPolicy {
    return this.#opts.policy;
  }

  /**
   * Disk health of the recordings folder (free bytes, reserved, the journal's floor, recordings waiting for
   * space), or null before the first download measured it. The `disk` event says when it changes.
   */
  get diskStatus(): DiskStatus | null {
    return this.downloads.diskStatus;
  }

  /**
   * A token file and its copy were found damaged at open and a new token was made: the URL the service holds is
   * dead until the new one is registered (the health model reads this), else null.
   */
  get tokenReplaced(): { name: string; why: string } | null {
    return this.#tokenReplaced;
  }

  /** The state folder vanished and the journal was written again from memory: the tokens and the lock follow. */
  async #restoreState(tokens: TokenStore, info: { dir: string; jobs: number }): Promise<void> {
    const log = this.#opts.log ?? silentLogger;
    try {
      await tokens.restore();
      await this.#lock.restore();
      log.warn(`state: ${info.dir} was deleted while Tally was running; made it again from memory (${info.jobs} jobs)`);
    } catch (error) {
      log.warn(`state: ${info.dir} was deleted and could not be made again in full: ${describeError(error)}`);
    }
    this.emit('state-restored', info);
  }

  get lastGapReport(): GapReportResult | null {
    return this.#lastGaps;
  }

  /**
   * Starts everything; resolves when the receiver listens and the tunnel has been asked to open. With
   * `waitForPort`, a port held by another program does not fail the start: the rest runs, `listen` says why
   * nothing is received, and the port is tried again (2 s, doubling to 30 s) until it is free.
   */
  async start(): Promise<PipelineReady> {
    if (this.#running) return this.ready();
    this.#running = true;
    const lastRunning = await readHeartbeat(this.#opts.stateDir, this.#opts.projectScope ?? null);
    if (!this.#downloadsPaused) await this.#startDownloads();
    let listening = true;
    try {
      await this.#listenWithFallbacks();
    } catch (error) {
      if (this.#opts.waitForPort && isAddressInUse(error)) {
        listening = false;
        this.#cannotListen(error as Error);
      } else {
        // Not running after all: `stop()` then only closes the journal and leaves the heartbeat alone, so
        // the gap report of the next start still covers the time before this failed one.
        this.#running = false;
        await this.downloads.stop();
        throw error;
      }
    }
    await writeHeartbeat(this.#opts.stateDir, new Date(), this.#opts.projectScope ?? null);
    const every = this.#opts.heartbeatIntervalMs ?? 60_000;
    this.#heartbeat = setInterval(() => void this.#beat(), every);
    this.#heartbeat.unref();
    if (listening) this.#expose();
    void this.checkGaps(lastRunning);
    return this.ready();
  }

  /**
   * Starts the download queue after moving the journal's deadlines by any wall-clock step made while it did not
   * run (core/clock-anchor.ts), and keeps the clocks' offset for the next start (again after every step seen).
   */
  async #startDownloads(): Promise<void> {
    const dir = this.#opts.stateDir;
    const step = await wallClockStepSince(dir);
    if (step !== 0) await this.downloads.moveStoredDeadlines(step);
    await writeClockAnchor(dir).catch(() => undefined);
    if (!this.#anchored) {
      this.#anchored = true;
      this.downloads.on('clock-step', () => void writeClockAnchor(dir).catch(() => undefined));
    }
    this.downloads.start();
  }

  /** The configured port, then each fallback port while the one before is taken by another program. */
  async #listenWithFallbacks(): Promise<void> {
    const ports = [this.receiver.configured.port, ...(this.#opts.fallbackPorts ?? [])];
    for (const [i, port] of ports.entries()) {
      try {
        await this.receiver.start(port);
        return;
      } catch (error) {
        if (i === ports.length - 1 || !isAddressInUse(error)) throw error;
      }
    }
  }

  /** Whether the receiver listens (null before `start`). */
  get listenState(): ListenState | null {
    return this.#listen;
  }

  /** The receiver listens: the tunnel may open and registration follow it. */
  #expose(): void {
    this.#listen = { listening: true, port: this.receiver.port };
    this.#listenRetry.reset();
    this.emit('listen', this.#listen);
    if (this.registrar) this.#detachRegistrar = this.registrar.attach(this.supervisor);
    this.supervisor.start();
  }

  #cannotListen(error: Error): void {
    // No deadline and no signal: the loop always schedules.
    const wait = this.#listenRetry.retry(() => void this.#tryListen())!.delayMs;
    const retryAt = isoAt(systemClock.now() + wait);
    this.#listen = { listening: false, port: this.receiver.configured.port, error, retryAt };
    this.emit('listen', this.#listen);
  }

  async #tryListen(): Promise<void> {
    if (!this.#running) return;
    try {
      await this.receiver.start();
    } catch (error) {
      if (this.#running) this.#cannotListen(error as Error);
      return;
    }
    if (!this.#running) {
      await this.receiver.stop();
      return;
    }
    this.#expose();
  }

  ready(): PipelineReady {
    const tunnel = this.supervisor.status;
    const listening = this.receiver.listening;
    const localUploadUrl =
      this.#uploads && listening ? `${this.receiver.origin}${this.receiver.routePath('uploads')}` : null;
    return {
      localUrl: listening ? this.receiver.localUrl : null,
      publicUrl: tunnel.publicUrl,
      tunnel: { ...tunnel, localUrl: listening ? this.receiver.localUrl : null },
      uploadUrl: this.#uploads ? (tunnel.uploadUrl ?? localUploadUrl) : null,
      localUploadUrl,
    };
  }

  /**
   * Channels that ended since `since` (default: the last heartbeat before this start) with no recording in
   * the inbox. Emits `gaps` and remembers the result.
   */
  async checkGaps(since: Date | null): Promise<GapReportResult> {
    const api = this.#opts.api;
    const known = new Set(this.inbox.list().map((j) => j.channelId));
    const report = api
      ? await findGaps({ since, search: (q) => api.search(q), knownChannelIds: known })
      : {
          since,
          checkedAt: new Date(),
          missing: [],
          ...(since
            ? { error: noteText(note('gapNoCredentials')), errorNotes: [note('gapNoCredentials')] }
            : { error: null }),
        };
    this.#lastGaps = report;
    this.emit('gaps', report);
    return report;
  }

  /**
   * Pauses or resumes downloading. Webhooks are still received and journalled while paused: refusing them
   * would lose recordings, because the service does not resend.
   */
  async setDownloadsPaused(paused: boolean): Promise<void> {
    if (paused === this.#downloadsPaused) return;
    this.#downloadsPaused = paused;
    if (!this.#running) return;
    if (paused) await this.downloads.stop();
    else await this.#startDownloads();
  }

  get downloadsPaused(): boolean {
    return this.#downloadsPaused;
  }

  /** Graceful stop: tunnel closed, receiver drained, downloads aborted with part files kept, journal closed. */
  /**
   * A missed heartbeat only makes the next gap report search a longer period, so it never stops the
   * pipeline; a disk that refuses it is still worth a line, since the journal lives on the same disk.
   */
  async #beat(): Promise<void> {
    try {
      // First: a state folder deleted under Tally is made again (journal, lock, tokens) before anything else.
      await this.inbox.checkHome();
      await writeHeartbeat(this.#opts.stateDir, new Date(), this.#opts.projectScope ?? null);
    } catch (error) {
      (this.#opts.log ?? silentLogger).warn(`heartbeat: could not be written: ${describeError(error)}`);
    }
  }

  async stop(): Promise<void> {
    if (!this.#running) {
      await this.inbox.close();
      await this.#uploadLog?.close();
      await this.#lock.release();
      return;
    }
    this.#running = false;
    this.#listenRetry.cancel();
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
    this.#detachRegistrar?.();
    this.expected.stop();
    await this.supervisor.stop();
    await this.receiver.stop();
    await this.downloads.stop();
    await this.#pruning;
    await this.#beat();
    await this.inbox.close();
    await this.#uploadLog?.close();
    await this.#lock.release();
  }
}
