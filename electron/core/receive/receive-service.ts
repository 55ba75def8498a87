/**
 * The one receive service behind every face (the tray app and `tally serve` through the app core, `tally listen`
 * directly): opens the recording pipeline (receiver, tunnel, registration, public-path check, upload route)
 * under the port policy, keeps its health (health.ts) up to date, answers `tally status` and `tally retry`
 * (control.ts), and tells its face when the health changes. A face only prints or shows what it is told.
 *
 * A studio's receiver also shares what it saves: the face says which publisher it wants (`publish`), and the
 * service runs one beside every pipeline it opens, stops it before the pipeline, with the studio link judged from
 * its events (studio/publisher-link.ts). The faces only print or show the publisher's events and its link (the
 * `publisher` event hands both over).
 *
 * What only the face knows (demo mode, keychain, its own studio link, paused, why nothing receives, the rows the
 * producer removed) the face pushes with `setFacts` whenever it changes: the service never asks its face back.
 *
 * Port policy: the receiver takes its configured port. Where the public address follows the port (ngrok,
 * localtunnel, the demo sandbox) another free port is used when that one is taken (the same one as last time
 * when it is still free), and the health says which. Where the address is fixed (an own URL, no tunnel) the port
 * never moves: the pipeline runs without listening, the receiver is in error naming the port and what holds
 * it, and the port is tried again until it is free.
 */
import { EventEmitter } from 'node:events';
import type { HealthView } from '../health-view.js';
import type { Note } from '../notes.js';
import type { PublisherOptions, StudioPublisher } from '../studio/publisher.js';
import type { PublisherLink } from '../studio/publisher-link.js';
import type { StudioLink } from '../studio/studio-link.js';
import { describeError, silentLogger, type Logger } from '../logger.js';
import { errorNote } from '../notes.js';
import { wallNow } from '../time.js';
import { RecordingPipeline, type PipelineEvents, type PipelineOptions } from '../pipeline/pipeline.js';
import type { RecordingJob } from '../recordings/types.js';
import { ControlServer, type Face } from './control.js';
import { diskFacts } from './disk-facts.js';
import { countedJob, jobCounts, mayCount, type CountedJob } from './counted-jobs.js';
import { ATTENTION_MS, judgeHealth, type DiskFacts, type HealthFacts } from './health.js';
import { findPortHolder, type PortHolder } from './port-holder.js';
import { holderText, portFollowsAddress } from './port-policy.js';
import {
  forwardPipeline,
  forwardPublisher,
  type ReceiveEmit,
  type ReceiveEvents,
  type ReceiveReady,
} from './receive-events.js';
import { logHealth, tracePipeline, tracePublisher } from './event-trail.js';

/** What only the face knows, pushed by the face (`setFacts`) whenever it changes. */
export interface FaceFacts {
  demo: boolean;
  member: boolean;
  /** Nothing receives: why (a failed restart of the app with no previous setup to fall back on). */
  down: Note[] | null;
  keychain: HealthFacts['keychain'];
  studio: HealthFacts['studio'];
  /** Recordings the producer removed from the list (by row key) no longer count. */
  hidden: { has(key: string): boolean };
  downloadsPaused: boolean;
  /**
   * A studio member's member service, handed down while this face follows a studio: its health (judged by it) is
   * this face's health (a member runs no receiver of its own, so no receiver port is judged; issue 31).
   */
  memberHealth: MemberHealthSource | null;
}

/** What the receive service reads of a member service: its health, judged by it. */
export interface MemberHealthSource {
  health(): HealthView;
}

export interface ReceiveServiceOptions {
  face: Face;
  /** TALLY_HOME: where `tally status` finds this process. */
  home: string;
  log: (line: string) => void;
  /**
   * The event trail (event-trail.ts): webhooks, download attempts, saves, health changes, tunnel and studio
   * events, for the face's log file. Silent when not given.
   */
  trail?: Logger;
  /** The face's facts as they stand at the start (then pushed with `setFacts`). */
  facts?: Partial<FaceFacts>;
  /** How often the health is judged again without an event (disk space, stalled downloads). Default 5 s. */
  recheckMs?: number;
  now?: () => number;
  /** How long a saved recording may fail to reach the team store before the studio turns amber (SHARE_STUCK_MS). */
  shareStuckMs?: number;
  /** Who holds a port (tests may replace the OS lookup). */
  findHolder?: (port: number) => Promise<PortHolder | null>;
  /** Opens each pipeline (default `RecordingPipeline.open`); a test passes one that keeps what it opened. */
  openPipeline?: (options: PipelineOptions) => Promise<RecordingPipeline>;
}

/**
 * The service's one event stream: the running pipeline's and publisher's events as a face reads them
 * (receive-events.ts), and the service's own judgements.
 */
export interface ReceiveServiceEvents extends ReceiveEvents {
  /** The health changed (any component's state or reason). */
  health: [view: HealthView, previous: HealthView | null];
  /**
   * New webhooks started being refused with 503 (why, and its note in the producer's language), or stopped being
   * refused (null).
   */
  refusing: [reason: string | null, reasonNote: Note | null];
  /**
   * A studio publisher was created for the running pipeline (before it starts, so its first events reach the
   * face), with its link as the service judges it, or the running one stopped (nulls).
   */
  publisher: [publisher: StudioPublisher | null, link: PublisherLink | null];
}

/** The studio publisher a studio's receiver runs beside its pipeline. */
export interface PublisherSetup {
  /** What identifies these options: the same key keeps the running publisher, another replaces it. */
  key: string;
  options: PublisherOptions;
}

/** A started pipeline and the function that detaches the face's listeners from it. */
export interface OpenedPipeline {
  pipeline: RecordingPipeline;
  detach: () => void;
}

/** How long job changes are gathered before the health is judged again. */
const SOON_MS = 200;

export class ReceiveService extends EventEmitter<ReceiveServiceEvents> {
  readonly #opts: ReceiveServiceOptions;
  readonly #now: () => number;
  #pipeline: RecordingPipeline | null = null;
  #detachOwn: (() => void) | null = null;
  #spec: PipelineOptions | null = null;
  #portFollows = false;
  /** The free port used last time the configured one was taken (reused while free, so the URL stays put). */
  #fallbackPort: number | null = null;
  #holder: PortHolder | null = null;
  /** The port last said to be receiving: a pipeline rebuilt on the same port (a settings change) says nothing new. */
  #saidPort: number | null = null;
  #refusing: { reason: string; note: Note | null; full: boolean } | null = null;
  readonly #progressAt = new Map<string, number>();
  #missing: number[] = [];
  #disks: DiskFacts[] = [];
  #diskCheckedAt = 0;
  #registrationFailed: string | null = null;
  #view: HealthView | null = null;
  #signature = '';
  #timer: NodeJS.Timeout | null = null;
  #control: ControlServer | null = null;
  #judging = false;
  #soonTimer: NodeJS.Timeout | null = null;
  /**
   * The recordings that count for the health, kept from the pipeline's `changed` events: judging never reads the
   * journal. It used to ask the inbox for them on every judgement (every 200 ms while anything changes), and
   * beyond the inbox's 1,000 cached jobs each is read back and parsed: during a burst of 4,000 webhooks that held
   * the event loop 85-200 ms per judgement, the acks' p99 with it (issue 22). Keyed by the recording's row key:
   * twins (one recording in both webhook forms) are one entry, the one further along.
   */
  #jobs = new Map<string, CountedJob>();
  /** The publisher wanted beside every pipeline (a studio's receiver), and the one running now. */
  #publishSetup: PublisherSetup | null = null;
  #publisher: StudioPublisher | null = null;
  /** What the running publisher was started for: its setup's key and the pipeline it listens to. */
  #publishing: { key: string; pipeline: RecordingPipeline } | null = null;
  /**
   * Publisher changes (publish, open, close) one at a time, each after the one before: starting one awaits its
   * modules, and two overlapping calls that each found none running once started two publishers.
   */
  #publisherTurn: Promise<unknown> = Promise.resolve();
  /** The running publisher's link, as the health shows it. */
  #link: PublisherLink | null = null;
  /** What only the face knows, as it last pushed it. */
  #facts: Partial<FaceFacts>;
  readonly #trail: Logger;
  #untracePublisher: (() => void) | null = null;

  /** `emit` for the stream's forwarders (node:events cannot relate a generic event name to its arguments). */
  readonly #emit: ReceiveEmit = (event, ...args) =>
    void (this.emit as (e: string, ...a: unknown[]) => boolean)(event, ...args);

  constructor(opts: ReceiveServiceOptions) {
    super();
    this.#opts = opts;
    this.#facts = { ...opts.facts };
    // Wall time: health judges stored times (deadlines, updates) that a wall-clock step moves with it.
    this.#now = opts.now ?? wallNow;
    this.#trail = opts.trail ?? silentLogger;
  }

  get pipeline(): RecordingPipeline | null {
    return this.#pipeline;
  }

  /** The running publisher's link as the health judges it (stuck shares included), or null without one. */
  get studioLink(): StudioLink | null {
    return this.#link?.current(this.#now()) ?? null;
  }

  /** The studio publisher running beside the pipeline, or null. */
  get publisher(): StudioPublisher | null {
    return this.#publisher;
  }

  /** Where the running pipeline receives (its webhook URLs, the web client's recordUrl), or null when none runs. */
  ready(): ReceiveReady | null {
    const pipeline = this.#pipeline;
    if (!pipeline) return null;
    const { localUrl, publicUrl, uploadUrl } = pipeline.ready();
    return { localUrl, publicUrl, uploadUrl, uploadOrigins: [...(this.#spec?.uploads?.allowedOrigins() ?? [])] };
  }

  /** Why new webhooks are refused with 503 now, or null. */
  get refusing(): string | null {
    return this.#refusing?.reason ?? null;
  }

  /** Starts judging the health now and then, and answering `tally status` on this home. */
  async start(): Promise<void> {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.refresh(), this.#opts.recheckMs ?? 5_000);
    this.#timer.unref();
    try {
      this.#control = await ControlServer.open(this.#opts.home, this.#opts.face, {
        health: () => this.health(),
        retry: (target) => this.retry(target),
        channelOf: (key) => this.#pipeline?.inbox.get(key)?.channelId ?? null,
      });
    } catch (error) {
      // Everything else works without it; only `tally status` and `tally retry` cannot reach this process.
      this.#opts.log(`tally status cannot reach this process: ${describeError(error)}`);
    }
    // Judged, not announced: "starting" is not news; the first view worth a line comes once the pipeline opens.
    await this.refresh(false);
  }

  /** Stops the pipeline, the checks and the control socket. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#soonTimer) clearTimeout(this.#soonTimer);
    this.#soonTimer = null;
    await this.close();
    await this.#control?.close();
    this.#control = null;
  }

  /**
   * Opens and starts a pipeline from `spec` under the port policy, with the face's listeners attached first (so
   * what start does reaches the face). A pipeline that fails to start is stopped again before the error is thrown.
   */
  async open(
    spec: PipelineOptions,
    options: { paused: boolean; demo: boolean; attach?: (pipeline: RecordingPipeline) => () => void },
  ): Promise<OpenedPipeline> {
    await this.close();
    const portFollows = portFollowsAddress(spec.tunnel?.provider ?? 'none', options.demo);
    this.#portFollows = portFollows;
    this.#holder = null;
    const configured = spec.port ?? 0;
    // A fixed public address never moves the port (it waits for it); one that follows it takes the configured port,
    // else last time's free one, else any free one (see the file comment).
    const follows = portFollows && configured !== 0;
    const fallbackPorts = follows ? [...new Set([this.#fallbackPort ?? 0, 0])] : [];
    const opening = { ...spec, port: configured, waitForPort: !follows, fallbackPorts };
    const pipeline = await (this.#opts.openPipeline?.(opening) ?? RecordingPipeline.open(opening));
    // The face's listeners first (its own, or the service's stream), so what start does reaches the face.
    const detachFace = options.attach?.(pipeline);
    const detachStream = forwardPipeline(pipeline, this.#emit);
    const detachOwn = this.#watch(pipeline);
    const detach = () => {
      detachFace?.();
      detachStream();
      detachOwn();
    };
    try {
      await pipeline.setDownloadsPaused(options.paused);
      await pipeline.start();
    } catch (error) {
      detach();
      // The start error is what the producer sees; a failed clean-up after it still gets a line.
      await pipeline
        .stop()
        .catch((e: unknown) => this.#opts.log(`the pipeline did not stop cleanly: ${describeError(e)}`));
      throw error;
    }
    const opened: OpenedPipeline = { pipeline, detach };
    if (follows && pipeline.receiver.listening && pipeline.receiver.port !== configured) {
      this.#fallbackPort = pipeline.receiver.port;
      this.#holder = await this.#findHolder(configured);
      this.#opts.log(
        `port ${configured} is in use${holderText(this.#holder)}: receiving on port ${this.#fallbackPort} instead (the public address follows it)`,
      );
    }
    this.#spec = spec;
    this.#pipeline = opened.pipeline;
    this.#detachOwn = opened.detach;
    this.#trail.info(
      `receiving into ${spec.folder} (state ${spec.stateDir}, tunnel ${spec.tunnel?.provider ?? 'none'}${options.demo ? ', demo' : ''}${options.paused ? ', downloads paused' : ''})`,
    );
    // The first judgement already names what holds a taken port (when the OS says).
    const listen = opened.pipeline.listenState;
    if (listen && !listen.listening) this.#holder = await this.#findHolder(listen.port);
    await this.#settlePublisher();
    await this.refresh();
    return opened;
  }

  /**
   * Which studio publisher runs beside every pipeline (null: none). A different setup replaces the running
   * publisher at once; the pipeline itself is not touched.
   */
  async publish(setup: PublisherSetup | null): Promise<void> {
    this.#publishSetup = setup;
    if (await this.#settlePublisher()) this.changed();
  }

  /**
   * Makes the running publisher the one wanted now (the latest setup, beside the current pipeline), in turn with
   * every other change (see #publisherTurn); true when it stopped or started one.
   */
  #settlePublisher(): Promise<boolean> {
    const turn = this.#publisherTurn.then(async () => {
      const setup = this.#publishSetup;
      const pipeline = this.#pipeline;
      const running = this.#publishing;
      if (running ? running.key === setup?.key && running.pipeline === pipeline : !setup || !pipeline) return false;
      await this.#stopPublisher();
      if (setup && pipeline) await this.#startPublisher(pipeline, setup);
      return true;
    });
    this.#publisherTurn = turn.catch(() => undefined);
    return turn;
  }

  async #startPublisher(pipeline: RecordingPipeline, setup: PublisherSetup): Promise<void> {
    // Loaded only by a studio's receiver: a plain receiver never loads the team server's client.
    const { StudioPublisher } = await import('../studio/publisher.js');
    const { StudioDownloadClaims } = await import('../studio/download-claims.js');
    const { PublisherLink } = await import('../studio/publisher-link.js');
    const publisher = new StudioPublisher(pipeline, setup.options);
    this.#publisher = publisher;
    this.#publishing = { key: setup.key, pipeline };
    // One origin download per recording per studio: a recording another receiver downloads is waited for.
    pipeline.downloads.setClaims(new StudioDownloadClaims(publisher, setup.options.log));
    this.#untracePublisher = tracePublisher(publisher, this.#trail.child('studio'));
    const link = new PublisherLink(publisher, {
      app: this.#opts.face !== 'listen',
      now: this.#now,
      ...(this.#opts.shareStuckMs !== undefined ? { shareStuckMs: this.#opts.shareStuckMs } : {}),
    });
    this.#link = link;
    link.on('changed', () => this.changed());
    forwardPublisher(publisher, this.#emit);
    this.emit('publisher', publisher, link);
    try {
      await publisher.start();
    } catch (error) {
      // Its state folder (ledger) could not be opened: the receiver goes on, the studio link says why.
      this.#opts.log(`studio: the publisher did not start: ${describeError(error)}`);
      link.set('error', [errorNote({ message: describeError(error) })]);
    }
  }

  async #stopPublisher(): Promise<void> {
    const publisher = this.#publisher;
    if (!publisher) return;
    this.#publisher = null;
    this.#publishing = null;
    this.#pipeline?.downloads.setClaims(null);
    this.#untracePublisher?.();
    this.#untracePublisher = null;
    this.#trail.child('studio').info('publisher stopped');
    this.#link?.removeAllListeners();
    this.#link = null;
    await publisher
      .stop()
      .catch((error: unknown) => this.#opts.log(`studio: the publisher did not stop cleanly: ${describeError(error)}`));
    this.emit('publisher', null, null);
  }

  async #findHolder(port: number): Promise<PortHolder | null> {
    try {
      return await (this.#opts.findHolder ?? findPortHolder)(port);
    } catch {
      return null;
    }
  }

  /** Stops the running pipeline (the service keeps judging: nothing receives now). */
  async close(): Promise<void> {
    const pipeline = this.#pipeline;
    this.#pipeline = null;
    this.#refusing = null;
    this.#progressAt.clear();
    this.#jobs.clear();
    // The publisher listens to the pipeline: it goes first (in turn with a publish under way).
    await this.#settlePublisher();
    if (pipeline) {
      // The face's listeners stay attached while stopping, so the jobs it sets back to pending reach the views.
      await pipeline
        .stop()
        .catch((error: unknown) => this.#opts.log(`the pipeline did not stop cleanly: ${describeError(error)}`));
      this.#trail.info('receiver stopped (journal flushed, part files kept)');
    }
    this.#detachOwn?.();
    this.#detachOwn = null;
  }

  /** The service's own listeners on a pipeline: what the health is judged from. */
  #watch(pipeline: RecordingPipeline): () => void {
    const offs: (() => void)[] = [];
    const on = <K extends keyof PipelineEvents>(event: K, listener: (...args: PipelineEvents[K]) => void) => {
      pipeline.on(event, listener as never);
      offs.push(() => pipeline.off(event, listener as never));
    };
    const changed = () => this.#soon();
    offs.push(tracePipeline(pipeline, this.#trail));
    on('listen', (state) => {
      if (state.listening) {
        this.#holder = null;
        if (state.port !== this.#saidPort) this.#opts.log(`receiving webhooks on port ${state.port}`);
        this.#saidPort = state.port;
        changed();
        return;
      }
      this.#saidPort = null;
      void this.#findHolder(state.port).then((holder) => {
        const first = this.#holder === null && holder !== null;
        this.#holder = holder;
        // A studio member receives no webhooks: its port is nobody's concern, so nothing is said (issue 31).
        const member = this.#facts.member === true;
        if (!member && (first || this.#view?.receiver.port !== null)) {
          this.#opts.log(
            `port ${state.port} is in use${holderText(this.#holder)}: webhooks cannot reach Tally until it is free (trying again)`,
          );
        }
        changed();
      });
    });
    on('tunnel', changed);
    on('disk', changed);
    on('progress', (e) => this.#progressAt.set(e.key, this.#now()));
    const now = this.#now();
    this.#jobs.clear();
    // One entry per recording: twins (one recording in both webhook forms) count once, as the one further along,
    // under the key their row has (a forged form that is gone is no problem while the genuine one is on its way).
    const track = (job: RecordingJob, at: number): void => {
      const pair = pipeline.inbox.standing(job);
      if (pair.twin) {
        this.#jobs.delete(job.key);
        this.#jobs.delete(pair.twin.key);
      }
      const stand = pair.job;
      // Its own key inside (its progress is known by it); the row's key outside (Remove hides the row's key).
      if (jobCounts(stand, at)) this.#jobs.set(pair.key, countedJob(stand));
      else this.#jobs.delete(pair.key);
    };
    for (const job of pipeline.inbox.where((state, updatedAt) => mayCount(state, updatedAt, now))) track(job, now);
    on('changed', (job) => {
      track(job, this.#now());
      if (job.state !== 'downloading') this.#progressAt.delete(job.key);
      // A failure may be the folder itself (a file put in its place): look at the disks again before judging.
      if (job.state === 'failed' || job.error !== null) this.#diskCheckedAt = Number.NEGATIVE_INFINITY;
      if (this.#refusing?.full && !pipeline.receiver.full) this.#setRefusing(null);
      changed();
    });
    on('registered', () => {
      this.#registrationFailed = null;
      changed();
    });
    on('registration-failed', (info) => {
      this.#registrationFailed = info.message;
      changed();
    });
    // A damaged token file and copy made a new token: the URL the service holds is dead, so registration stays
    // in error until the new one is registered (issue 20).
    const tokenReplaced = (info: { why: string }): void => {
      this.#registrationFailed = `the webhook token changed (${info.why}); the URL the service holds answers 404 until the new one is registered`;
      changed();
    };
    on('token-replaced', tokenReplaced);
    if (pipeline.tokenReplaced) tokenReplaced(pipeline.tokenReplaced);
    on('rejected', (r) => {
      // A 503 is a genuine webhook turned away: its recording is lost unless someone acts. An upload's 503 (too
      // many at once) is a refused client recording, counted under Problems instead.
      if (r.status === 503 && !r.upload) {
        this.#setRefusing({ reason: r.reason, note: r.reasonNote ?? null, full: pipeline.receiver.full });
      }
    });
    on('received', () => this.#setRefusing(null));
    on('upload-refused', changed);
    on('recording-missing', () => {
      this.#missing = [this.#now(), ...this.#missing].slice(0, 1000);
      changed();
    });
    return () => {
      for (const off of offs) off();
    };
  }

  #setRefusing(next: { reason: string; note: Note | null; full: boolean } | null): void {
    if ((next === null) === (this.#refusing === null)) return;
    this.#refusing = next;
    this.emit('refusing', next?.reason ?? null, next?.note ?? null);
    void this.refresh();
  }

  /**
   * Judges again shortly: a flood of job changes costs one judgement per SOON_MS, not one per job (the judgement
   * reads the unfinished jobs).
   */
  #soon(): void {
    if (this.#soonTimer) return;
    this.#soonTimer = setTimeout(() => {
      this.#soonTimer = null;
      void this.refresh();
    }, SOON_MS);
    this.#soonTimer.unref();
  }

  /** Retries now every recording of a channel ID, or the one recording with that key; answers their keys. */
  async retry(target: string): Promise<string[]> {
    const pipeline = this.#pipeline;
    if (!pipeline) return [];
    const exact = pipeline.inbox.get(target);
    // A recording's key retries its twin too (the same recording in the other webhook form, listed as one row).
    const twin = exact ? pipeline.inbox.twinOf(exact.key) : undefined;
    const twinJob = twin === undefined ? undefined : pipeline.inbox.get(twin);
    const jobs = exact
      ? [exact, ...(twinJob ? [twinJob] : [])]
      : pipeline.inbox.where((state) => state !== 'saved').filter((j) => j.channelId === target);
    const keys: string[] = [];
    for (const job of jobs) {
      if (job.state === 'saved') continue;
      await pipeline.downloads.retry(job.key);
      keys.push(job.key);
    }
    void this.refresh();
    return keys;
  }

  /** The health judged now (the disk figures from the last look at the disks). */
  health(): HealthView {
    return this.#judge();
  }

  /** Judges the health again and emits `health` when it changed (unless `announce` is false). */
  async refresh(announce = true): Promise<HealthView> {
    if (this.#judging) return this.health();
    this.#judging = true;
    try {
      if (this.#now() - this.#diskCheckedAt > 30_000 || this.#disks.length === 0) await this.#checkDisks();
    } finally {
      this.#judging = false;
    }
    const view = this.#judge();
    // What counts as a change: states, and the reasons of what is not ok (an ok reason such as the free space
    // moves all the time and is only read, never announced).
    const signature = JSON.stringify([
      view.state,
      view.problems,
      view.receiver,
      view.components.map((c) => [c.id, c.state, c.state === 'ok' ? c.reasonNotes[0]?.code : c.reason, c.action]),
      // Which recordings are named (not their reasons or next attempts, which move with every retry).
      view.problemRecordings?.map((p) => [p.key, p.state]),
    ]);
    const previous = this.#view;
    this.#view = view;
    if (signature !== this.#signature) {
      this.#signature = signature;
      const trail = this.#trail.child('health');
      logHealth(trail, view, previous);
      if (announce) this.emit('health', view, previous);
    }
    return view;
  }

  /** The face's facts changed (demo, keychain, studio, paused, down, removed rows): judged again shortly. */
  setFacts(facts: Partial<FaceFacts>): void {
    this.#facts = { ...this.#facts, ...facts };
    this.changed();
  }

  /** Something the health is judged from changed: judge again shortly. */
  changed(): void {
    this.#soon();
  }

  async #checkDisks(): Promise<void> {
    const spec = this.#spec;
    const pipeline = this.#pipeline;
    this.#diskCheckedAt = this.#now();
    if (!spec) {
      this.#disks = [];
      return;
    }
    // An upload refused for space stays said until the disk has room for it: looked at with the disks.
    if (pipeline) await pipeline.downloads.diskBudget.recheckUploads(pipeline.downloads.folder);
    this.#disks = await diskFacts([pipeline?.downloads.folder ?? spec.folder, spec.stateDir]);
  }

  #judge(): HealthView {
    const face = this.#facts;
    if (face.memberHealth) return face.memberHealth.health();
    const pipeline = this.#pipeline;
    const now = this.#now();
    const spec = this.#spec;
    const listen = pipeline?.listenState ?? null;
    const hidden = (key: string) => face.hidden?.has(key) ?? false;
    const shown: (CountedJob & { nextAttemptAt: string | null })[] = [];
    if (pipeline) {
      for (const [row, job] of this.#jobs) {
        if (!jobCounts(job, now)) this.#jobs.delete(row);
        // The deadline as the download queue keeps it (monotonic), so a wall-clock step changes no urgency.
        else if (!hidden(row))
          shown.push({
            ...job,
            deadline: pipeline.downloads.deadlineAt(job.key) ?? job.deadline,
            nextAttemptAt: pipeline.downloads.nextAttemptAt(job.key),
          });
      }
    }
    let neededBytes = 0;
    for (const job of shown) {
      if (job.state === 'pending' || job.state === 'downloading') {
        neededBytes += Math.max(0, (job.totalBytes ?? job.announcedBytes ?? 0) - (job.bytes ?? 0));
      }
    }
    const refusedUploads = (pipeline?.uploadLog?.listRefused() ?? []).filter(
      (r) => now - Date.parse(r.at) < ATTENTION_MS && !hidden(`refused:${r.id}`),
    ).length;
    this.#missing = this.#missing.filter((at) => now - at < ATTENTION_MS);
    const facts: HealthFacts = {
      face: this.#opts.face === 'listen' ? 'cli' : 'app',
      now,
      demo: face.demo ?? false,
      member: face.member ?? false,
      receiver: {
        host: spec?.host ?? '127.0.0.1',
        configuredPort: spec?.port ?? 0,
        portFollows: this.#portFollows,
        listening: listen ? listen.listening : null,
        port: listen?.listening ? listen.port : null,
        holder: this.#holder,
        down: pipeline ? null : (face.down ?? null),
        refusing: this.#refusing?.reason ?? null,
        refusingNote: this.#refusing?.note ?? null,
      },
      tunnel: pipeline && listen?.listening ? pipeline.supervisor.status : null,
      registration: {
        enabled: pipeline?.registrar?.enabled ?? false,
        registeredUrl: null,
        failed: this.#registrationFailed,
      },
      downloads: {
        paused: face.downloadsPaused ?? pipeline?.downloadsPaused ?? false,
        jobs: shown,
        lastProgressAt: this.#progressAt,
        refusedUploads,
        missing: this.#missing.length,
        neededBytes,
      },
      disks: this.#disks,
      diskWait: pipeline?.diskStatus
        ? {
            folder: pipeline.diskStatus.folder,
            waiting: pipeline.diskStatus.waiting,
            neededBytes: pipeline.diskStatus.neededBytes,
            freeBytes: pipeline.diskStatus.freeBytes,
            uploadsRefused: pipeline.diskStatus.uploadsRefused,
          }
        : null,
      keychain: face.keychain ?? null,
      studio: this.#link?.current(now) ?? face.studio ?? null,
    };
    return judgeHealth(facts);
  }
}
