/**
 * The receiver's side of studio mode: every recording the pipeline saves (server recordings and client
 * uploads) is put into the team store under its identity, verified, then announced on the studio stream with
 * the identity as message ID. Exactly once rests on the KV claim and the fixed object key, not on acks: a
 * claim is taken with `create()` (only one receiver wins it), the object is put (a repeat finds the same bytes
 * under the same key), the announcement is published (a repeat within the window is dropped by ID), and the
 * claim is marked published, after which no restart publishes it again.
 *
 * The team server being unreachable never holds up the pipeline: recordings are still received and saved,
 * and published once the server answers (connection retried with backoff, one line each time).
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { KvWatchInclude, Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { note } from '../notes.js';
import { abortableDelay, type BackoffPolicy } from '../backoff.js';
import { RetryLoop } from '../retry-loop.js';
import { describeError, silentLogger, type Logger } from '../logger.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import { serverIdentity, uploadIdentity, type Announcement } from './announcement.js';
import { TeamCatalogue } from './catalogue.js';
import { Ledger, type LedgerRecord } from './ledger.js';
import { MEMBERS_BUCKET, PRESENCE_TTL_MS } from './member-identity.js';
import { defaultLagWarnMs, lagging, membersLag, shortDuration, type MemberLag } from './lag.js';
import {
  NatsTeamStore,
  S3SetupError,
  StoreVerifyError,
  UNREADABLE_SUBJECT,
  type S3StoreOptions,
  type TeamStore,
} from './store.js';
import { ConfigError } from '../errors.js';
import type { S3TeamStore } from './s3-store.js';
import { indexAnnouncement } from './shared-index.js';
import { StudioWarnings, studioWarning, type StudioWarning } from './warnings.js';
import { TeamLink, type TeamAnswer } from './team-link.js';
import { systemClock, wallNow } from '../time.js';
import {
  CLAIMS_BUCKET,
  DEFAULT_RETENTION_MS,
  STUDIO_SUBJECT,
  TeamAuthError,
  TeamNoJetStreamError,
  TeamTlsError,
  applyBucketRetention,
  connectTeam,
  ensureStudioStream,
  jetStreamBusy,
  serverNow,
  type TeamCredentials,
  type TeamRetry,
} from './team.js';
import { counted } from '../counted.js';

/** Durations and retry times on the monotonic clock: a step of the wall clock neither freezes nor rushes them. */
const monotonic = (): number => systemClock.now();

export type StoreSpec = { kind: 'nats' } | ({ kind: 's3' } & S3StoreOptions);

export interface PublisherOptions {
  url: URL;
  /** Every server of a team cluster (`url` among them). */
  servers?: URL[];
  /**
   * How many servers of a cluster keep the stream, the claims bucket and the object store (default 1; 3 on a
   * three-node cluster, so any one node can go down). Applied to assets created before, too.
   */
  replicas?: number;
  credentials: TeamCredentials | null;
  store: StoreSpec;
  /** How long the stream and the object store keep recordings (default 7 days). */
  retentionMs?: number;
  /** The pipeline's state folder: the ledger of what was published lives there. */
  stateDir: string;
  log?: Logger;
  /** Pauses between attempts to connect (500 ms doubling to 30 s). */
  retry?: { baseDelayMs?: number; maxDelayMs?: number };
  /** A claim older than this, taken by another receiver that never finished, may be taken over (default 10 min). */
  staleClaimMs?: number;
  /**
   * Read again before each new attempt after the server refused the credentials (the keychain entry or the
   * environment may have been fixed meanwhile). Without it, the first credentials are kept.
   */
  reloadCredentials?: () => Promise<TeamCredentials | null>;
  /** First pause after refused credentials (default 30 s), doubled up to `refusedMaxDelayMs` (default 15 min). */
  refusedDelayMs?: number;
  refusedMaxDelayMs?: number;
  /** Keep the team's list of recordings (the stream's announcements) for a view: the tray app. */
  catalogue?: boolean;
  /**
   * Recordings put into the team store at once (default 8: each put is a few round trips and an fsync, so
   * several in flight keep a burst of short clips at the pace of the downloads). At most two of them are
   * large (64 MiB or more), so a short clip never waits behind long ones.
   */
  concurrency?: number;
  /** Warn when a member's oldest pending recording leaves the team server within this (default: a day). */
  lagWarnMs?: number;
  /** How often the members' lag is read (default 5 min). */
  lagCheckMs?: number;
}

/**
 * How often a publisher with work waiting looks at its queue by itself (never only when a new recording comes),
 * and, while recordings wait on a cluster that could not store them, tries one of them (the scout) and asks the
 * cluster whether it answers: every waiting recording goes within this of the cluster taking writes again.
 */
const SELF_WAKE_MS = 1_000;

/** The first connection after a failure other than a refusal (a server without JetStream, assets refused). */
const CONNECT_RETRY: BackoffPolicy = { baseMs: 2_000, maxMs: 60_000, jitter: 0.5 };

/**
 * One recording's attempts after it failed. Not the connection's pauses: two receivers racing for one recording
 * settle it by these growing apart.
 */
const ITEM_RETRY: BackoffPolicy = { baseMs: 500, maxMs: 30_000, jitter: 0.5 };

/** How often a running receiver looks for chunks no object refers to. */
const SWEEP_EVERY_MS = 10 * 60_000;

/** A recording this large takes a long time to put: at most LARGE_AT_ONCE of them go at once. */
const LARGE_BYTES = 64 * 1024 * 1024;
const LARGE_AT_ONCE = 2;

export interface PublishedEvent {
  identity: string;
  channelId: string;
  kind: 'server' | 'client';
  bytes: number;
  sha256: string;
}

export interface PublisherEvents {
  connected: [info: { url: string }];
  waiting: [info: TeamRetry];
  /** The link after the first connection: lost (the client reconnects by itself), or back. */
  connection: [state: 'disconnected' | 'reconnected'];
  /**
   * Whether the team server answers on an open connection: a hung server (named) or a cluster that cannot
   * store or announce says `answering: false` until it answers again.
   */
  answering: [answer: TeamAnswer];
  published: [e: PublishedEvent];
  /** The claim says another receiver (or this one before its ledger was lost) already published it. */
  alreadyShared: [info: { identity: string; channelId: string }];
  /**
   * The server refused the credentials or the URL's TLS does not match: nothing helps but a change by the
   * user. Said once per distinct reason; attempts go on with long pauses (and new credentials, if reloaded).
   */
  refused: [info: { error: TeamAuthError | TeamTlsError; retryInMs: number }];
  /** The team's list of recordings changed (with `catalogue`). */
  catalogue: [];
  /** Every member's lag was read again (`membersLag`). */
  lag: [];
  failed: [info: { identity: string; channelId: string; message: string }];
  /** Something only the user or the team server's admin can fix, in one line (also kept in `warnings`). */
  warning: [w: StudioWarning];
  /** A warning's cause went away (its kind). */
  warningCleared: [kind: string];
}

interface Item {
  identity: string;
  kind: 'server' | 'client';
  channelId: string;
  path: string;
  bytes: number;
  savedAt: string;
  contentType?: string;
  /**
   * Its failed attempts in a row and the pause before the next (a stubborn one waits; the others go on): made at
   * its first failure; while an attempt is pending the workers pass it by, and its timer wakes them.
   */
  retry?: RetryLoop;
  /**
   * The last failure was the cluster's (no answer, no leader), not the recording's: it waits on the cluster, not
   * on a pause of its own (`#scoutDue`), and goes as soon as the cluster takes a write again.
   */
  busy?: boolean;
}

interface PublishedRecord extends LedgerRecord {
  state: 'published' | 'missing';
  /** Since the view lists them (older records have only identity, state and at). */
  channelId?: string;
  bytes?: number;
  fileName?: string;
}

interface Claim {
  /** `gone`: the team store lost its bytes and no receiver has the file any more (members stop asking). */
  state: 'claimed' | 'published' | 'gone';
  by: string;
  at: string;
  /** With `published`: what was announced, so a receiver that waited for it saves the copy (download-claims.ts). */
  announcement?: Announcement;
}

/** Who downloads a recording from the origin (see claimDownload). */
export type DownloadClaim =
  { state: 'mine' | 'taken' | 'offline' } | { state: 'published'; announcement: Announcement | null };

const isPublished = (v: unknown): v is PublishedRecord =>
  typeof v === 'object' && v !== null && typeof (v as PublishedRecord).identity === 'string';

export class StudioPublisher extends EventEmitter<PublisherEvents> {
  readonly #opts: PublisherOptions;
  readonly #pipeline: RecordingPipeline;
  readonly #by: string;
  readonly #stop = new AbortController();
  readonly #queue = new Map<string, Item>();
  readonly #inFlight = new Map<string, Item>();
  readonly #wakers = new Set<() => void>();
  #credentials: TeamCredentials | null;
  #ledger: Ledger<PublishedRecord> | null = null;
  #nc: NatsConnection | null = null;
  #kv: KV | null = null;
  #store: TeamStore | null = null;
  #loop: Promise<void> | null = null;
  #catalogue: TeamCatalogue | null = null;
  #sweeper: NodeJS.Timeout | null = null;
  readonly #warnings = new StudioWarnings();
  #lag: MemberLag[] = [];
  #lagTimer: NodeJS.Timeout | null = null;
  #link: TeamLink | null = null;
  /** When the cluster last answered again after failing (monotonic; -Infinity before). */
  #answeredAt = -Infinity;
  /**
   * Set every SELF_WAKE_MS while recordings wait on the cluster: the next free worker tries one of them (the
   * longest waiting), whose success sends every other at once (`#outageOver`). One attempt per tick asks the
   * cluster whether it takes writes again, the very writes a publish makes, whatever a probe of it says: a
   * stream answers its info before it has a leader to store (each replicated stream elects its own once a lost
   * majority returns), and recordings that failed again after the link said "answering" used to wait out
   * pauses of their own, grown through the outage, when nothing would say "answering" a second time (issue 30).
   */
  #scoutDue = false;
  /** Ends the wait for each attempt in flight (a reconnect: its answers would come from the server left behind). */
  readonly #abandon = new Set<(error: Error) => void>();
  #selfWake: NodeJS.Timeout | null = null;
  readonly #detach: () => void;

  constructor(pipeline: RecordingPipeline, opts: PublisherOptions) {
    super();
    this.#pipeline = pipeline;
    this.#opts = opts;
    this.#credentials = opts.credentials;
    this.#by = `${hostname()}-${createHash('sha256').update(path.resolve(opts.stateDir)).digest('hex').slice(0, 8)}`;
    const onSaved = (e: { job: { key: string; channelId: string; updatedAt: string }; path: string; bytes: number }) =>
      this.#enqueue({
        identity: serverIdentity(e.job.key),
        kind: 'server',
        channelId: e.job.channelId,
        path: e.path,
        bytes: e.bytes,
        savedAt: new Date().toISOString(),
      });
    const onUploaded = (e: {
      id: string;
      path: string;
      bytes: number;
      fileName: string;
      contentType: string;
      receivedAt: string;
    }) =>
      this.#enqueue({
        identity: uploadIdentity(e.id),
        kind: 'client',
        channelId: path.basename(e.fileName, path.extname(e.fileName)) || 'client',
        path: e.path,
        bytes: e.bytes,
        savedAt: e.receivedAt,
        contentType: e.contentType,
      });
    pipeline.on('saved', onSaved);
    pipeline.on('uploaded', onUploaded);
    this.#detach = () => {
      pipeline.off('saved', onSaved);
      pipeline.off('uploaded', onUploaded);
    };
  }

  get #log(): Logger {
    return this.#opts.log ?? silentLogger;
  }

  get #retentionMs(): number {
    return this.#opts.retentionMs ?? DEFAULT_RETENTION_MS;
  }

  /** Opens the ledger, queues what was saved but never published, and connects in the background. */
  async start(): Promise<void> {
    this.#ledger = await Ledger.open(`${this.#opts.stateDir}/studio`, 'published.jsonl', isPublished);
    // Stored times (journal, upload log) against the wall clock: what outlives the process is kept in it.
    const since = wallNow() - this.#retentionMs;
    // Only saved jobs of the retention period are read back from the journal.
    for (const job of this.#pipeline.inbox.where((state, updatedAtMs) => state === 'saved' && updatedAtMs >= since)) {
      // Saved by its twin's file (one recording in both webhook forms): the twin's save is what is published.
      if (!job.path || job.bytes === null || job.savedBy !== undefined) continue;
      this.#enqueue({
        identity: serverIdentity(job.key),
        kind: 'server',
        channelId: job.channelId,
        path: job.path,
        bytes: job.bytes,
        savedAt: job.updatedAt,
      });
    }
    for (const u of this.#pipeline.uploadLog?.list() ?? []) {
      if (Date.parse(u.receivedAt) < since) continue;
      this.#enqueue({
        identity: uploadIdentity(u.id),
        kind: 'client',
        channelId: path.basename(u.fileName, path.extname(u.fileName)) || 'client',
        path: u.path,
        bytes: u.bytes,
        savedAt: u.receivedAt,
        contentType: u.contentType,
      });
    }
    this.#loop = this.#run();
  }

  /** Recordings saved here and not yet in the team store. */
  get pending(): number {
    return this.#queue.size;
  }

  /** Whether a recording still waits to be shared (the health's check, without building the views' list). */
  isQueued(identity: string): boolean {
    return this.#queue.has(identity);
  }

  /** What waits to be shared, for views. */
  waiting(): { identity: string; channelId: string; bytes: number; fileName: string; savedAt: string }[] {
    return [...this.#queue.values()].map((i) => ({
      identity: i.identity,
      channelId: i.channelId,
      bytes: i.bytes,
      fileName: path.basename(i.path),
      savedAt: i.savedAt,
    }));
  }

  /** What this receiver's ledger says it shared (or found already shared). */
  shared(): PublishedRecord[] {
    return (this.#ledger?.list() ?? []).filter((r) => r.state === 'published');
  }

  /** The team's announcements still on the stream, oldest first (with `catalogue`, once connected). */
  announcements(): Announcement[] {
    return this.#catalogue?.list() ?? [];
  }

  /**
   * Warnings in force, for the health model's studio link: refused credentials, a server without JetStream,
   * refused S3 keys or no S3 endpoint, members falling behind the retention.
   */
  get warnings(): StudioWarning[] {
    return this.#warnings.list();
  }

  /** Keeps the warning for `warnings`; says it (log, `warning` event) when its kind is new. */
  #warn(w: StudioWarning, log = true): void {
    if (!this.#warnings.set(w)) return;
    if (log) this.#log.warn(`studio: ${w.message}`);
    this.emit('warning', w);
  }

  #clear(kind: string): void {
    if (this.#warnings.clear(kind)) this.emit('warningCleared', kind);
  }

  /** Whether the team server answered when last asked (null before the first answer). */
  get answer(): TeamAnswer | null {
    return this.#link?.answer ?? null;
  }

  /** Each member's lag as last read (every few minutes while connected), for the studio view and health. */
  get membersLag(): MemberLag[] {
    return this.#lag;
  }

  /** Whether a member's oldest pending recording leaves the team server soon enough to warn about it. */
  isLagging(lag: MemberLag): boolean {
    return lagging(lag, this.#opts.lagWarnMs ?? defaultLagWarnMs(this.#retentionMs));
  }

  /** Reads every member's lag; warns about those whose oldest pending recording expires soon. */
  async #checkLag(): Promise<void> {
    const nc = this.#nc;
    if (!nc || this.#stop.signal.aborted) return;
    try {
      this.#lag = await membersLag(await jetstreamManager(nc), this.#retentionMs);
    } catch (error) {
      this.#log.warn(`studio: could not read how far the members are behind (${describeError(error)}).`);
      return;
    }
    const late = new Set<string>();
    for (const lag of this.#lag) {
      if (!this.isLagging(lag)) continue;
      const kind = `lag:${lag.consumer}`;
      late.add(kind);
      const n = note('studioMemberLagging', {
        member: lag.label,
        count: lag.pending,
        left: shortDuration(lag.expiresInMs ?? 0),
      });
      this.#warn(studioWarning(kind, n));
    }
    for (const w of this.#warnings.list()) if (w.kind.startsWith('lag:') && !late.has(w.kind)) this.#clear(w.kind);
    this.emit('lag');
  }

  async stop(): Promise<void> {
    this.#detach();
    this.#catalogue?.stop();
    // Also drops every recording's pending retry (their loops listen to it).
    this.#stop.abort(new Error('stopped'));
    if (this.#sweeper) clearInterval(this.#sweeper);
    if (this.#lagTimer) clearInterval(this.#lagTimer);
    if (this.#selfWake) clearInterval(this.#selfWake);
    for (const renew of this.#downloadClaims.values()) clearInterval(renew);
    this.#downloadClaims.clear();
    this.#link?.stop();
    this.#wakeAll();
    await this.#loop?.catch(() => undefined);
    await this.#nc?.close().catch(() => undefined);
    await this.#ledger?.close();
  }

  #enqueue(item: Item): void {
    if (this.#ledger?.get(item.identity)) return;
    this.#queue.set(item.identity, item);
    this.#wakeAll();
  }

  async #connect(): Promise<void> {
    const nc = await connectTeam({
      url: this.#opts.url,
      ...(this.#opts.servers ? { servers: this.#opts.servers } : {}),
      credentials: this.#credentials,
      name: `tally listen ${this.#by}`,
      signal: this.#stop.signal,
      onRetry: (info) => this.emit('waiting', info),
      ...this.#opts.retry,
    });
    this.#nc = nc;
    void this.#watchStatus(nc);
    const link = new TeamLink(nc, { scheme: this.#opts.url.protocol, role: 'receiver' });
    link.on('change', (answer) => {
      // The cluster answers again: what failed for want of it goes now, not after its own growing pause.
      if (answer.answering) this.#outageOver();
      this.emit('answering', answer);
    });
    this.#link = link;
    const replicas = this.#opts.replicas;
    const jsm = await ensureStudioStream(nc, { retentionMs: this.#retentionMs, owner: true, replicas });
    this.#kv = await new Kvm(nc).create(CLAIMS_BUCKET, {
      history: 1,
      ttl: this.#retentionMs,
      ...(replicas ? { replicas } : {}),
    });
    await applyBucketRetention(jsm, this.#retentionMs, replicas);
    // The members' presence bucket too, at the same replicas: a member that first joins while a server of the
    // cluster is down then only opens it (creating a replicated bucket needs every server it is placed on).
    // Best effort: a member creates it itself when this fails.
    await new Kvm(nc)
      .create(MEMBERS_BUCKET, { history: 1, ttl: PRESENCE_TTL_MS, ...(replicas ? { replicas } : {}) })
      .catch((error: unknown) =>
        this.#log.warn(`studio: could not prepare the members' bucket yet (${describeError(error)}).`),
      );
    const spec = this.#opts.store;
    this.#store =
      spec.kind === 'nats'
        ? new NatsTeamStore(nc, { retentionMs: this.#retentionMs, replicas })
        : new (await import('./s3-store.js')).S3TeamStore(spec);
    if (this.#store instanceof NatsTeamStore) {
      // Created now at the cluster's replicas, so nothing else creates it first with one copy (best effort: the
      // first put creates it otherwise).
      await this.#store
        .open()
        .catch((error: unknown) =>
          this.#log.warn(`studio: could not prepare the team's object store yet (${describeError(error)}).`),
        );
      await this.#sweep(this.#store);
      // Also while running: a receiver killed mid-upload elsewhere leaves chunks this one would keep until restart.
      const store = this.#store;
      this.#sweeper = setInterval(() => void this.#sweep(store), SWEEP_EVERY_MS);
      this.#sweeper.unref();
    } else {
      await this.#sweepUploads(this.#store as S3TeamStore);
    }
    if (this.#opts.catalogue) {
      const catalogue = new TeamCatalogue();
      catalogue.on('changed', () => this.emit('catalogue'));
      await catalogue.start(nc, this.#log);
      this.#catalogue = catalogue;
    }
    // A member that cannot read a recording's bytes asks: put it again from the file here, or say it is gone.
    nc.subscribe(UNREADABLE_SUBJECT, { callback: (error, m) => void (error ? null : this.#restore(m.data)) });
    this.#clear('jetstream');
    this.#clear('refused');
    void this.#checkLag();
    this.#lagTimer = setInterval(() => void this.#checkLag(), this.#opts.lagCheckMs ?? 5 * 60_000);
    this.#lagTimer.unref();
    link.start();
    // The server of a cluster it reached (the first in the list may be the one that is down).
    this.emit('connected', { url: `${this.#opts.url.protocol}//${nc.getServer()}` });
  }

  /**
   * After the first connection the client reconnects by itself: the link's state is said, and once it is back
   * every waiting recording is tried at once (their failures were the outage's, not theirs).
   */
  async #watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') this.emit('connection', 'disconnected');
      if (s.type !== 'reconnect') continue;
      this.emit('connection', 'reconnected');
      for (const item of this.#queue.values()) {
        item.retry?.recover();
        item.busy = false;
      }
      // Attempts in flight through the server left behind are not waited for: a hung one never answers, and a
      // chunk's put waits 30 s for its answer (tests/studio-hung-server.spec.ts: published 35 s after the hang).
      for (const abandon of [...this.#abandon]) abandon(new MovedOnError());
      this.#wakeAll();
    }
  }

  /** Every recording that failed for want of the cluster is tried at once (no pause carried over from the outage). */
  #outageOver(): void {
    this.#answeredAt = monotonic();
    let any = false;
    for (const item of this.#queue.values()) {
      if (!item.busy) continue;
      item.busy = false;
      item.retry?.recover();
      any = true;
    }
    if (any) this.#wakeAll();
  }

  /**
   * The publisher's own clock: every SELF_WAKE_MS the workers look at the queue (a recording whose pause ended
   * goes then even if its timer was lost), and while recordings wait on a cluster that did not answer, it is
   * asked again, so they go within seconds of it answering (issue 30: a recording stayed claimed and unshared
   * for 9 minutes until an unrelated webhook woke the publisher).
   */
  #startSelfWake(): void {
    this.#selfWake = setInterval(() => {
      if (this.#queue.size === 0) return;
      if ([...this.#queue.values()].some((i) => i.busy)) {
        this.#scoutDue = true;
        void this.#link?.probe();
      }
      this.#wakeAll();
    }, SELF_WAKE_MS);
    this.#selfWake.unref();
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    const clock = systemClock;
    // Refused credentials or TLS: only the user can fix these, so they are tried again rarely.
    const refusedPolicy = {
      baseMs: this.#opts.refusedDelayMs ?? 30_000,
      maxMs: this.#opts.refusedMaxDelayMs ?? 15 * 60_000,
    };
    const refused = new RetryLoop({ policy: refusedPolicy, signal, clock });
    const failed = new RetryLoop({ policy: CONNECT_RETRY, signal, clock });
    let lastRefusal = '';
    while (!signal.aborted && !this.#nc) {
      try {
        await this.#connect();
      } catch (error) {
        if (signal.aborted) return;
        const half = this.#nc as NatsConnection | null;
        this.#nc = null;
        await half?.close().catch(() => undefined);
        if (error instanceof TeamAuthError || error instanceof TeamTlsError) {
          const due = refused.wait();
          // Said once (again only when the reason changes).
          const retryInMs = refused.scheduled?.delayMs ?? 0;
          if (error.message !== lastRefusal) this.emit('refused', { error, retryInMs });
          this.#warn(studioWarning('refused', error.appNote), false); // the 'refused' event says it
          lastRefusal = error.message;
          if (!(await due)) return;
          if (this.#opts.reloadCredentials) {
            this.#credentials = await this.#opts.reloadCredentials().catch(() => this.#credentials);
          }
          continue;
        }
        // A server without JetStream: one line naming -js, said once; retried slowly (the admin may restart it).
        if (error instanceof TeamNoJetStreamError && error.note) this.#warn(studioWarning('jetstream', error.note));
        // Assets the server refuses: said once per attempt.
        else this.#log.warn(`studio: ${describeError(error)}`);
        if (!(await failed.wait())) return;
      }
    }
    const workers = Math.max(1, this.#opts.concurrency ?? 8);
    this.#startSelfWake();
    await Promise.all(Array.from({ length: workers }, () => this.#work(workers)));
  }

  /** The next queued recording no worker has: the oldest, unless all but one place already hold large ones. */
  #next(workers: number): Item | undefined {
    const large = [...this.#inFlight.values()].filter((i) => i.bytes >= LARGE_BYTES).length;
    for (const item of this.#queue.values()) {
      if (this.#inFlight.has(item.identity) || item.retry?.pending) continue;
      // Waiting on the cluster: only the scout goes, one per tick.
      if (item.busy && !this.#scoutDue) continue;
      if (item.bytes >= LARGE_BYTES && workers > 1 && large >= Math.min(LARGE_AT_ONCE, workers - 1)) continue;
      if (item.busy) this.#scoutDue = false;
      return item;
    }
    return undefined;
  }

  /** One of the publishing workers: takes the next recording, puts and announces it, until stopped. */
  async #work(workers: number): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const item = this.#next(workers);
      if (!item) {
        await new Promise<void>((resolve) => this.#wakers.add(resolve));
        continue;
      }
      this.#inFlight.set(item.identity, item);
      const startedAt = monotonic();
      let abandon: (error: Error) => void = () => undefined;
      const movedOn = new Promise<never>((_, reject) => (abandon = reject));
      this.#abandon.add(abandon);
      try {
        // An attempt left behind ends by its own timeouts, unheard: what it did is settled by the claim's
        // compare-and-set, the object's revision and the announcement's message ID, as between two receivers.
        const attempt = this.#publish(item);
        attempt.catch(() => undefined);
        await Promise.race([attempt, movedOn]);
        this.#queue.delete(item.identity);
        this.#clear('s3Setup');
        // One went through: the cluster stores again, and the others' pauses were the outage's.
        if (item.busy || item.retry?.attempt) this.#outageOver();
        item.retry?.reset();
      } catch (error) {
        if (signal.aborted) return;
        const moved = error instanceof MovedOnError;
        const busy = moved || clusterFailure(error);
        const wasBusy = item.busy === true;
        // An attempt begun before the cluster answered again (or left on the server the client moved from) failed
        // for the outage: it goes again at once.
        const straddled = moved || (busy && startedAt <= this.#answeredAt);
        item.busy = busy && !straddled;
        item.retry ??= new RetryLoop({ policy: ITEM_RETRY, signal, clock: systemClock });
        // The cluster's failure: no pause of its own, it waits on the cluster (the scout, `#outageOver`). Else not
        // the connection's pauses: two receivers racing for one recording settle it by these growing apart (its
        // timer wakes the workers once its pause is over).
        if (busy) item.retry.reset();
        else item.retry.retry(() => this.#wakeAll());
        const message = describeError(error);
        this.emit('failed', { identity: item.identity, channelId: item.channelId, message });
        if (error instanceof S3SetupError && error.note) this.#warn(studioWarning('s3Setup', error.note));
        // Said once while it waits on the cluster (its scout tries every second).
        else if (!(busy && wasBusy)) {
          this.#log.warn(`studio: ${item.channelId} is not in the team store yet (${message}); trying again.`);
        }
        // To the back of the queue, so one stubborn recording does not hold up the others.
        if (this.#queue.delete(item.identity)) this.#queue.set(item.identity, item);
      } finally {
        this.#abandon.delete(abandon);
        this.#inFlight.delete(item.identity);
        this.#wakeAll();
      }
    }
  }

  #wakeAll(): void {
    const wakers = [...this.#wakers];
    this.#wakers.clear();
    for (const wake of wakers) wake();
  }

  async #publish(item: Item): Promise<void> {
    const kv = this.#kv!;
    const ledger = this.#ledger!;
    const info = await stat(item.path).catch(() => null);
    if (!info?.isFile() || info.size !== item.bytes) {
      this.#log.warn(`studio: ${item.path} is gone or changed since it was saved; it is not shared with the team.`);
      await ledger.put({ identity: item.identity, state: 'missing', at: new Date().toISOString() });
      return;
    }
    const record = {
      identity: item.identity,
      state: 'published' as const,
      channelId: item.channelId,
      bytes: item.bytes,
      fileName: path.basename(item.path),
    };
    const claimed = await this.#claim(kv, item.identity);
    if (claimed === 'published') {
      await ledger.put({ ...record, at: new Date().toISOString() });
      this.emit('alreadyShared', { identity: item.identity, channelId: item.channelId });
      return;
    }
    if (claimed === 'taken') throw new Error('another receiver is publishing it');
    // A put may leave chunks behind: only the first one is put as a first claim.
    this.#firstClaims.delete(item.identity);
    // The claim is renewed while the bytes go up (a large file over a slow line can take longer than the
    // stale age): another receiver takes over only a claim nobody renewed, and only by compare-and-set.
    let revision = claimed.revision;
    let renewing = Promise.resolve();
    const renew = setInterval(
      () => {
        renewing = renewing
          .then(async () => {
            revision = await kv.update(item.identity, JSON.stringify(this.#claimValue('claimed')), revision);
          })
          .catch(() => undefined); // lost: the final compare-and-set below fails, and the next round sees why
      },
      Math.max(1_000, this.#staleClaimMs / 3),
    );
    let put: Awaited<ReturnType<TeamStore['put']>>;
    try {
      put = await this.#store!.put({
        identity: item.identity,
        path: item.path,
        bytes: item.bytes,
        fresh: claimed.fresh,
        ...(item.contentType ? { contentType: item.contentType } : {}),
      });
    } finally {
      clearInterval(renew);
      await renewing;
    }
    // Still ours? (compare-and-set: throws when another receiver took the claim over meanwhile)
    revision = await kv.update(item.identity, JSON.stringify(this.#claimValue('claimed')), revision);
    const announcement: Announcement = {
      v: 1,
      identity: item.identity,
      kind: item.kind,
      channelId: item.channelId,
      fileName: path.basename(item.path),
      bytes: put.bytes,
      sha256: put.sha256,
      savedAt: item.savedAt,
      store: put.ref,
    };
    const ack = await jetstream(this.#nc!).publish(STUDIO_SUBJECT, JSON.stringify(announcement), {
      msgID: item.identity,
      timeout: 10_000,
    });
    // Kept by its stream sequence beyond the retention, so a member back too late learns what it missed.
    await indexAnnouncement(this.#nc!, ack.seq, announcement, this.#retentionMs, this.#opts.replicas).catch(
      (error: unknown) =>
        this.#log.warn(`studio: ${item.channelId} is shared, but not in the team's index (${describeError(error)}).`),
    );
    await kv.update(item.identity, JSON.stringify({ ...this.#claimValue('published'), announcement }), revision);
    await ledger.put({ ...record, at: new Date().toISOString() });
    this.emit('published', {
      identity: item.identity,
      channelId: item.channelId,
      kind: item.kind,
      bytes: put.bytes,
      sha256: put.sha256,
    });
  }

  /** Claims taken for a download (identity → the renewal), renewed until the download ends. */
  readonly #downloadClaims = new Map<string, NodeJS.Timeout>();
  /**
   * Recordings whose download claim was the first claim on them: while the claim stays this receiver's, nobody
   * else put a byte of them, so their publish puts without looking for an object first (docs/performance.md).
   */
  readonly #firstClaims = new Set<string>();

  /** The team store, once connected (a waiting receiver saves the claimant's copy from it). */
  get store(): TeamStore | null {
    return this.#store;
  }

  /**
   * Before this receiver downloads a recording from the origin (one download per recording per studio): `mine`
   * when it holds the claim now (renewed until `releaseDownload`; its publish takes the same claim up), `taken`
   * while another receiver's claim is live, `published` with what was announced, `offline` before the team server
   * answered (the download is never held up for it).
   */
  async claimDownload(identity: string): Promise<DownloadClaim> {
    const kv = this.#kv;
    if (!kv || !this.#nc || this.#stop.signal.aborted) return { state: 'offline' };
    const claimed = await this.#claim(kv, identity);
    if (claimed === 'taken') return { state: 'taken' };
    if (claimed === 'published') {
      const entry = await kv.get(identity);
      const claim = entry?.operation === 'PUT' ? entry.json<Claim>() : null;
      return { state: 'published', announcement: claim?.announcement ?? null };
    }
    if (claimed.fresh) this.#firstClaims.add(identity);
    // Stopped while the claim was asked for: nothing renews it from here (it lapses by its age, or a restart's
    // publish takes it up as its own).
    if (this.#stop.signal.aborted) return { state: 'mine' };
    let revision = claimed.revision;
    this.releaseDownload(identity);
    const renew = setInterval(
      () =>
        void kv
          .update(identity, JSON.stringify(this.#claimValue('claimed')), revision)
          .then((r) => (revision = r))
          .catch((error: unknown) => {
            // Taken over meanwhile (the publish's claim says so), or the server refused: not renewed any more.
            if (this.#downloadClaims.get(identity) !== renew) return;
            this.releaseDownload(identity);
            this.#log.debug(
              `studio: the download claim on ${identity} is no longer renewed (${describeError(error)}).`,
            );
          }),
      Math.max(1_000, this.#staleClaimMs / 3),
    );
    renew.unref();
    this.#downloadClaims.set(identity, renew);
    return { state: 'mine' };
  }

  /** The download claimed by `claimDownload` ended: the claim is no longer renewed for it. */
  releaseDownload(identity: string): void {
    clearInterval(this.#downloadClaims.get(identity));
    this.#downloadClaims.delete(identity);
  }

  /** The recordings whose download claim this receiver renews now (see claimDownload), for diagnostics. */
  get renewedClaims(): string[] {
    return [...this.#downloadClaims.keys()];
  }

  /**
   * Resolves when the claim on `identity` changes (another receiver renewed, published or dropped it) or after
   * a third of the stale age (a claim nobody renews lapses then), or when `signal` ends.
   */
  async claimChanged(identity: string, signal: AbortSignal): Promise<void> {
    const kv = this.#kv;
    const pause = Math.max(1_000, this.#staleClaimMs / 3);
    if (!kv) return abortableDelay(pause, signal).catch(() => undefined);
    const watch = await kv.watch({ key: identity, include: KvWatchInclude.UpdatesOnly }).catch(() => null);
    try {
      const next = watch ? watch[Symbol.asyncIterator]().next() : new Promise<never>(() => undefined);
      await Promise.race([next, abortableDelay(pause, signal)]).catch(() => undefined);
    } finally {
      watch?.stop();
    }
  }

  readonly #restoring = new Set<string>();

  /**
   * A member found a recording's name in the team store without its bytes (chunks purged or lost): this receiver
   * puts it again when it still has the saved file; when it published it and has no file any more, it marks the
   * claim gone, once, so every member stops asking and lists it as gone.
   */
  async #restore(data: Uint8Array): Promise<void> {
    const identity = askedIdentity(data);
    const kv = this.#kv;
    const store = this.#store;
    if (!identity || !kv || !store || this.#restoring.has(identity)) return;
    this.#restoring.add(identity);
    try {
      const entry = await kv.get(identity);
      if (!entry || entry.operation !== 'PUT') return;
      const claim = entry.json<Claim>();
      if (claim.state === 'gone') return;
      const file = await this.#savedFile(identity);
      if (file) {
        await store.put({ identity, path: file.path, bytes: file.bytes });
        this.#log.warn(`studio: ${file.channelId} was unreadable in the team store; it was put there again.`);
        return;
      }
      // Another receiver's recording is its to answer for.
      if (claim.by !== this.#by) return;
      await kv.update(identity, JSON.stringify({ ...this.#claimValue('gone') }), entry.revision);
      this.#log.warn(
        `studio: ${identity} is unreadable in the team store and its file is no longer here: members are told it is gone.`,
      );
    } catch (error) {
      this.#log.warn(`studio: could not answer for an unreadable recording (${describeError(error)}).`);
    } finally {
      this.#restoring.delete(identity);
    }
  }

  /** The saved file of a recording this receiver shares, when it is still there whole. */
  async #savedFile(identity: string): Promise<{ path: string; bytes: number; channelId: string } | null> {
    const candidates: { path: string; bytes: number; channelId: string }[] = [];
    for (const job of this.#pipeline.inbox.where((state) => state === 'saved')) {
      if (job.path && job.bytes !== null && serverIdentity(job.key) === identity) {
        candidates.push({ path: job.path, bytes: job.bytes, channelId: job.channelId });
      }
    }
    for (const u of this.#pipeline.uploadLog?.list() ?? []) {
      if (uploadIdentity(u.id) === identity) candidates.push({ path: u.path, bytes: u.bytes, channelId: u.fileName });
    }
    for (const c of candidates) {
      const info = await stat(c.path).catch(() => null);
      if (info?.isFile() && info.size === c.bytes) return c;
    }
    return null;
  }

  /** What a receiver killed mid-upload left behind (this one before a restart, or another): not worth failing for. */
  async #sweep(store: NatsTeamStore): Promise<void> {
    // An upload in progress sends a chunk every few milliseconds and gives up after 30 s without an answer.
    const idleMs = Math.min(this.#staleClaimMs, 2 * 60_000);
    const removed = await store.sweepAbandonedChunks(idleMs).catch((error: unknown) => {
      this.#log.warn(`studio: could not look for uploads cut short in the team store (${describeError(error)}).`);
      return 0;
    });
    if (removed > 0) this.#log.warn(`studio: removed ${removed} chunks of uploads cut short from the team store.`);
  }

  /**
   * The bucket's unfinished multipart uploads of recordings this receiver puts (its claims, or nobody's: a claim
   * published or gone), aborted at start: a gateway or this computer killed mid-upload leaves them billed and
   * invisible. Those of a claim another receiver holds are its to finish.
   */
  async #sweepUploads(store: S3TeamStore): Promise<void> {
    const kv = this.#kv;
    const mine = async (identity: string): Promise<boolean> => {
      const entry = await kv?.get(identity);
      if (!entry || entry.operation !== 'PUT') return true;
      const claim = entry.json<Claim>();
      return claim.state === 'published' || claim.by === this.#by;
    };
    const aborted = await store.abortUnfinished(mine).catch((error: unknown) => {
      // Keys or endpoint missing: the first put says so, once, naming what to set.
      if (error instanceof S3SetupError) return 0;
      this.#log.warn(`studio: could not look for unfinished uploads in the bucket (${describeError(error)}).`);
      return 0;
    });
    if (aborted > 0)
      this.#log.warn(
        `studio: aborted ${counted(aborted, 'unfinished upload', 'unfinished uploads')} left in the bucket.`,
      );
  }

  get #staleClaimMs(): number {
    return this.#opts.staleClaimMs ?? 10 * 60_000;
  }

  #claimValue(state: Claim['state']): Claim {
    return { state, by: this.#by, at: new Date().toISOString() };
  }

  /**
   * The claim's revision when this receiver holds it (and whether it is the first claim on the recording), or
   * why not. Another receiver's claim is stale when its last renewal is `staleClaimMs` old by the server's
   * clock (the entry's stamp against the server's time now): never by this computer's clock against the
   * `at` another computer wrote, which may be minutes off either way (issue 30).
   */
  async #claim(kv: KV, identity: string): Promise<{ revision: number; fresh: boolean } | 'published' | 'taken'> {
    try {
      return { revision: await kv.create(identity, JSON.stringify(this.#claimValue('claimed'))), fresh: true };
    } catch (error) {
      const entry = await kv.get(identity);
      if (!entry || entry.operation !== 'PUT') throw error;
      return this.#takeOver(kv, identity, entry, true);
    }
  }

  async #takeOver(
    kv: KV,
    identity: string,
    entry: { revision: number; created: Date; json<T>(): T },
    again: boolean,
  ): Promise<{ revision: number; fresh: boolean } | 'published' | 'taken'> {
    const claim = entry.json<Claim>();
    if (claim.state === 'published') return 'published';
    // Still its own first claim (taken for the download): nobody else put a byte of it.
    const first = claim.by === this.#by && this.#firstClaims.has(identity);
    if (claim.by !== this.#by) {
      this.#firstClaims.delete(identity);
      const now = await serverNow(await jetstreamManager(this.#nc!), `KV_${CLAIMS_BUCKET}`);
      if (now - entry.created.getTime() <= this.#staleClaimMs) return 'taken';
    }
    // Ours from before a restart, or abandoned: taken over only if nobody else moved it meanwhile.
    try {
      const revision = await kv.update(identity, JSON.stringify(this.#claimValue('claimed')), entry.revision);
      return { revision, fresh: first };
    } catch (error) {
      // "Wrong last sequence": the copy read was behind (a replica catching up after an outage answers reads).
      // The claim as its stream's leader holds it now decides, once, rather than a blind retry (issue 30).
      if (!again || !wrongLastSequence(error)) throw error;
      const current = await this.#leaderEntry(identity);
      if (!current) throw error;
      return this.#takeOver(kv, identity, current, false);
    }
  }

  /** The claim's newest revision as the claims stream's leader has it (not a replica's copy). */
  async #leaderEntry(identity: string): Promise<{ revision: number; created: Date; json<T>(): T } | null> {
    const jsm = await jetstreamManager(this.#nc!);
    const m = await jsm.streams
      .getMessage(`KV_${CLAIMS_BUCKET}`, { last_by_subj: `$KV.${CLAIMS_BUCKET}.${identity}` })
      .catch(() => null);
    if (!m || m.data.length === 0) return null;
    return { revision: m.seq, created: m.time, json: <T>() => m.json<T>() };
  }
}

/** An attempt no longer waited for: the client moved to another server while it was in flight. */
class MovedOnError extends Error {
  constructor() {
    super('the team connection moved to another server during the attempt; trying again through it');
    this.name = 'MovedOnError';
  }
}

/** The identity a member's unreadable-recording request names, or null when it is not one. */
function askedIdentity(data: Uint8Array): string | null {
  try {
    const asked = JSON.parse(new TextDecoder().decode(data)) as { identity?: unknown };
    return typeof asked.identity === 'string' && asked.identity.length <= 512 ? asked.identity : null;
  } catch {
    return null;
  }
}

/**
 * A failure that was the team server's, not the recording's: no answer, no leader, a server that lost its
 * cluster's majority ("JetStream not enabled" / "temporarily unavailable" from the one left), a lost link. Not:
 * a claim another receiver holds, a store that refuses the keys or holds other bytes (those keep their pauses).
 */
function clusterFailure(error: unknown): boolean {
  if (jetStreamBusy(error)) return true;
  if (error instanceof ConfigError || error instanceof StoreVerifyError) return false;
  return /jetstream (is )?not enabled|temporarily unavailable|connection (closed|disconnected)|disconnect/i.test(
    describeError(error),
  );
}

/** JetStream's answer to a compare-and-set over a revision that is no longer the last. */
function wrongLastSequence(error: unknown): boolean {
  return (
    (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence) ||
    /wrong last sequence/i.test(describeError(error))
  );
}
