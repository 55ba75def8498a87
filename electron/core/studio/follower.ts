/**
 * A studio member: mirrors every team recording into its folder. It reads the announcement stream through a
 * durable consumer named after the member, so a follower that was stopped, asleep or killed gets what was
 * published meanwhile (as long as the stream keeps it: 7 days by default). Acknowledgements are the happy
 * path only: what this computer has started and finished is in its own ledger, so a redelivered announcement
 * is acknowledged without a second file, and a transfer cut short resumes at start-up without waiting for
 * the server to redeliver it.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { AckPolicy, DeliverPolicy, jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { note, noteText } from '../notes.js';
import { retrying, type BackoffPolicy } from '../backoff.js';
import { RetryLoop } from '../retry-loop.js';
import { systemClock } from '../time.js';
import { TallyError } from '../errors.js';
import { ensureWritableFolder } from '../folder-check.js';
import { describeError, silentLogger, type Logger } from '../logger.js';
import { acquireStateLock, type StateLock } from '../recordings/state-lock.js';
import { parseAnnouncement, type Announcement } from './announcement.js';
import { TeamCatalogue } from './catalogue.js';
import { HandledSequence, announcementsBetween } from './shared-index.js';
import { Ledger, type LedgerRecord } from './ledger.js';
import { NewestReading, consumerLag, defaultLagWarnMs, lagging, shortDuration, type MemberLag } from './lag.js';
import { TeamLink, type TeamAnswer } from './team-link.js';
import { StudioWarnings, studioWarning, type StudioWarning } from './warnings.js';
import { MemberPresence, PRESENCE_TTL_MS, memberConsumer, memberId } from './member-identity.js';
import { MIRRORS_AT_ONCE, MirrorSlots } from './mirror-slots.js';
import {
  FolderFullError,
  MirrorVerifyError,
  mirrorRecording,
  removePart,
  targetFolder,
  type MirrorProgress,
} from './mirror-file.js';
import { Kvm } from '@nats-io/kv';
import {
  GoneError,
  UNREADABLE_SUBJECT,
  UnreadableError,
  NatsTeamStore,
  S3SetupError,
  StaleResumeError,
  type S3StoreOptions,
  type TeamStore,
} from './store.js';
import {
  CLAIMS_BUCKET,
  DEFAULT_RETENTION_MS,
  STUDIO_STREAM,
  STUDIO_SUBJECT,
  TeamUnreachableError,
  connectTeam,
  ensureStudioStream,
  jetStreamBusy,
  type TeamCredentials,
  type TeamRetry,
} from './team.js';
import { counted } from '../counted.js';

export interface FollowerOptions {
  url: URL;
  /** Every server of a team cluster (`url` among them). */
  servers?: URL[];
  credentials: TeamCredentials | null;
  /** The recordings folder this member mirrors into. */
  folder: string;
  /**
   * The member's name: a label on the team server (default: this computer's host name). The durable consumer
   * is named after an ID kept in the state folder, so two members of the same name do not share it.
   */
  name: string;
  /** State folder (TALLY_HOME): the member's ledger and lock live in a sub-folder per name and folder. */
  stateDir: string;
  /** S3 endpoint and keys for recordings stored in a bucket (from the environment). */
  s3?: Omit<S3StoreOptions, 'bucket' | 'prefix'>;
  clientSubfolder?: string;
  log?: Logger;
  /** Connection retries while the server is unreachable (tests shorten them). */
  retry?: { baseDelayMs?: number; maxDelayMs?: number };
  /** Transfer idle timeout (default 15 s) and checkpoint spacing, for tests. */
  idleTimeoutMs?: number;
  checkpointBytes?: number;
  /** Most bytes per second (`--max-rate`): per transfer, and transfers then go one at a time; unlimited when absent. */
  rateBytesPerSec?: number;
  /** Keep the team's list of recordings (the stream's announcements) for a view: the tray app. */
  catalogue?: boolean;
  /** Warn when this member's oldest pending recording leaves the team server within this (default: a day). */
  lagWarnMs?: number;
  /** How often this member's lag is read (default 5 min). */
  lagCheckMs?: number;
}

export interface FollowerSaved {
  identity: string;
  channelId: string;
  kind: 'server' | 'client';
  path: string;
  bytes: number;
  sha256: string;
}

export interface FollowerEvents {
  /** Connected, stream and consumer in place: mirroring from now on (also when nothing was published yet). */
  ready: [info: { name: string; url: string; folder: string }];
  /** The server could not be reached; another attempt follows after `delayMs`. */
  waiting: [info: TeamRetry];
  started: [a: Announcement];
  progress: [p: MirrorProgress];
  saved: [e: FollowerSaved];
  /** A transfer attempt failed; it is retried (`willRetry`) unless the recording is gone from the store. */
  failed: [info: { identity: string; channelId: string; message: string; willRetry: boolean }];
  /** Connection state after the first connection: 'disconnected' / 'reconnected'. */
  connection: [state: 'disconnected' | 'reconnected'];
  /**
   * Whether the team server answers on an open connection: a hung server (named) or a cluster that cannot
   * store or announce says `answering: false` until it answers again (team-link.ts).
   */
  answering: [answer: TeamAnswer];
  /** The team's list of recordings changed (with `catalogue`). */
  catalogue: [];
  /** Something the user should know and may act on, in one line (also kept in `health`). */
  warning: [w: StudioWarning];
  /** A warning's cause went away (its kind). */
  warningCleared: [kind: string];
  /**
   * Recordings shared while this member was away that expired from the team server before it could mirror them
   * (learned once, when it is back: shared-index.ts); each is in the ledger as gone.
   */
  missed: [recordings: Announcement[]];
}

interface MemberRecord extends LedgerRecord {
  state: 'started' | 'saved' | 'gone';
  announcement: Announcement;
  path?: string;
}

const isMemberRecord = (v: unknown): v is MemberRecord =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as MemberRecord).identity === 'string' &&
  ['started', 'saved', 'gone'].includes((v as MemberRecord).state) &&
  typeof (v as MemberRecord).announcement === 'object';

/** The consumer name of a member before member IDs: `follow-<name>`. */
function legacyConsumer(name: string): string {
  return `follow-${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'member'}`;
}

/** An announcement as the feed delivered it, read once (null when it is not one). */
interface Delivered {
  m: JsMsg;
  a: Announcement | null;
}

/** A mirror's attempts after a failure. */
const MIRROR_RETRY: BackoffPolicy = { baseMs: 1_000, maxMs: 30_000, jitter: 0.5 };
/** A transfer cut short by a reconnect, a resume gone stale or a copy that failed its check: again almost at once. */
const MIRROR_QUICK: BackoffPolicy = { baseMs: 100, maxMs: 100 };
/** Quick attempts of one mirror before its failures wait MIRROR_RETRY's pauses. */
const QUICK_ATTEMPTS = 2;
/**
 * The announcement feed read again after it failed on an open connection: soon (it was 1 s flat), since every
 * recording of the team waits on it, yet not in step with the other members.
 */
const FEED_RETRY: BackoffPolicy = { baseMs: 1_000, maxMs: 5_000, jitter: 0.5 };

const jsmOf = async (nc: NatsConnection) => (await import('@nats-io/jetstream')).jetstreamManager(nc);

export class StudioFollower extends EventEmitter<FollowerEvents> {
  readonly #opts: FollowerOptions;
  readonly #stop = new AbortController();
  #nc: NatsConnection | null = null;
  #ledger: Ledger<MemberRecord> | null = null;
  #lock: StateLock | null = null;
  #stores = new Map<string, TeamStore>();
  #loop: Promise<void> | null = null;
  #starting: Promise<void> | null = null;
  /** Aborts the running transfers so they resume from their checkpoints (after a reconnect). */
  readonly #attempts = new Set<AbortController>();
  /**
   * The retries waiting on the team server (each mirror's, and the feed's): told when the connection is back,
   * so their attempts go at once and no pause grown during the outage is carried past it (issue 30, item 6).
   */
  readonly #retries = new Set<RetryLoop>();
  /** Whether the client holds a connection: while it reconnects by itself, the feed waits for it, not a timer. */
  #connected = true;
  /** Feed readers waiting for the client's reconnection (or the stop). */
  readonly #onReconnect = new Set<() => void>();
  readonly #lagReadings = new NewestReading();
  #catalogue: TeamCatalogue | null = null;
  #presence: MemberPresence | null = null;
  #renew: NodeJS.Timeout | null = null;
  readonly #warnings = new StudioWarnings();
  #lag: MemberLag | null = null;
  #durable: string | null = null;
  #lagTimer: NodeJS.Timeout | null = null;
  #link: TeamLink | null = null;
  /** The announcement feed being read (closed on a reconnect, so it is read again through the new server). */
  #feed: { close(): Promise<void | Error> } | null = null;

  constructor(opts: FollowerOptions) {
    super();
    this.#opts = opts;
  }

  get #log(): Logger {
    return this.#opts.log ?? silentLogger;
  }

  /** The member's state sub-folder: one per name and folder, so two members on one computer stay apart. */
  static stateFolder(stateDir: string, name: string, folder: string): string {
    const tag = createHash('sha256').update(`${name}\n${folder}`).digest('hex').slice(0, 12);
    return `${stateDir}/studio/follow-${tag}`;
  }

  /** Connects (retrying while unreachable), then mirrors until `stop()`. Resolves once ready. */
  start(): Promise<void> {
    this.#starting = this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    const opts = this.#opts;
    const folder = await ensureWritableFolder(opts.folder, { source: 'the studio folder (--folder)' });
    const dir = StudioFollower.stateFolder(opts.stateDir, opts.name, folder);
    await ensureWritableFolder(dir, { source: 'the state folder (TALLY_HOME)' });
    this.#lock = await acquireStateLock(dir, `tally follow --name ${opts.name}`);
    this.#statePath = dir;
    try {
      this.#ledger = await Ledger.open(dir, 'mirrored.jsonl', isMemberRecord);
      this.#handled = await HandledSequence.open(dir);
      this.#unsettled.clear();
      this.#settledUpTo = 0;
      await this.#sweepLeftovers(folder);
      const id = await memberId(dir);
      // A JetStream request left unanswered (a cluster electing a new leader after a node went down, or too
      // few servers up to create a replicated bucket) is waited out like an unreachable server, not the end.
      const policy = { baseMs: opts.retry?.baseDelayMs ?? 500, maxMs: opts.retry?.maxDelayMs ?? 30_000 };
      const durable = await retrying(() => this.#join(id, dir, folder), {
        policy,
        retries: Infinity,
        shouldRetry: (error) => jetStreamBusy(error),
        onRetry: (error, attempt, delayMs) => {
          const n = note('teamJetStreamBusy', { detail: describeError(error).split('\n')[0]!.slice(0, 200) });
          this.emit('waiting', { message: noteText(n), note: n, attempt, delayMs });
        },
        signal: this.#stop.signal,
        aborted: () => new TeamUnreachableError('Stopped before the team server could be reached.'),
      });
      this.#loop = this.#run(durable, folder);
    } catch (error) {
      await this.#cleanup();
      throw error;
    }
  }

  /**
   * Connects and takes this member's place on the team server: stream, presence, durable consumer, catalogue and
   * the first lag reading. Resolves with the durable consumer's name; on failure, undoes what it opened.
   */
  async #join(id: string, dir: string, folder: string): Promise<string> {
    const opts = this.#opts;
    try {
      const nc = await connectTeam({
        url: opts.url,
        ...(opts.servers ? { servers: opts.servers } : {}),
        credentials: opts.credentials,
        name: `tally follow ${opts.name}`,
        signal: this.#stop.signal,
        onRetry: (info) => this.emit('waiting', info),
        ...opts.retry,
      });
      this.#nc = nc;
      void this.#watchStatus(nc);
      const link = new TeamLink(nc, { scheme: opts.url.protocol, role: 'member' });
      link.on('change', (answer) => {
        // Said only on a change: the cluster answers again (a lost majority is back, or another server took over),
        // so what failed meanwhile failed for the outage and goes now, with no pause carried past it.
        if (answer.answering) for (const retry of this.#retries) retry.recover();
        this.emit('answering', answer);
      });
      this.#link = link;
      await ensureStudioStream(nc, { retentionMs: DEFAULT_RETENTION_MS, owner: false });
      // The members bucket is kept by as many servers as the studio's stream (a cluster's replicas).
      const replicas = (await (await jsmOf(nc)).streams.info(STUDIO_STREAM)).config.num_replicas;
      const presence = await MemberPresence.open(nc, id, dir, opts.name, replicas);
      for (const other of await presence.announce()) {
        this.#warn(studioWarning('namesake', note('studioMemberNamesake', { name: opts.name, host: other.host })));
      }
      this.#presence = presence;
      this.#renew = setInterval(() => void this.#renewPresence(), PRESENCE_TTL_MS / 3);
      const jsm = await (await import('@nats-io/jetstream')).jetstreamManager(nc);
      const durable = memberConsumer(id);
      this.#durable = durable;
      const retentionNs = (await jsm.streams.info(STUDIO_STREAM)).config.max_age || DEFAULT_RETENTION_MS * 1_000_000;
      await jsm.consumers.add(STUDIO_STREAM, {
        durable_name: durable,
        description: `${opts.name} on ${hostname()}`,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: STUDIO_SUBJECT,
        ack_wait: 30_000 * 1_000_000,
        max_deliver: -1,
        max_ack_pending: 16,
        // A member away longer than the retention has nothing left to catch up on: its place goes, so a retired
        // computer does not stay in the receiver's lag view for ever (it starts afresh, its ledger dedupes).
        inactive_threshold: retentionNs,
      });
      // This member's place from before member IDs (named after its name): replaced by the one above.
      await jsm.consumers.delete(STUDIO_STREAM, legacyConsumer(opts.name)).catch(() => undefined);
      if (opts.catalogue) {
        const catalogue = new TeamCatalogue();
        catalogue.on('changed', () => this.emit('catalogue'));
        await catalogue.start(nc, this.#log);
        this.#catalogue = catalogue;
      }
      // What this member missed while it was away, said before it starts catching up: what expired unseen...
      await this.#learnMissed(nc, folder);
      // ...and how far behind it is on what is still there.
      await this.#checkLag(durable);
      this.#lagTimer = setInterval(() => void this.#checkLag(durable), opts.lagCheckMs ?? 5 * 60_000);
      this.#lagTimer.unref();
      link.start();
      // The server of a cluster it reached (the first in the list may be the one that is down).
      this.emit('ready', { name: opts.name, url: `${opts.url.protocol}//${nc.getServer()}`, folder });
      return durable;
    } catch (error) {
      await this.#leave();
      throw error;
    }
  }

  /** Closes what `#join` opened (timers, presence, catalogue, connection), keeping the ledger and the lock. */
  async #leave(): Promise<void> {
    this.#link?.stop();
    this.#link = null;
    if (this.#lagTimer) clearInterval(this.#lagTimer);
    this.#lagTimer = null;
    if (this.#renew) clearInterval(this.#renew);
    this.#renew = null;
    this.#catalogue?.stop();
    this.#catalogue = null;
    await this.#presence?.leave().catch(() => undefined);
    this.#presence = null;
    await this.#nc?.close().catch(() => undefined);
    this.#nc = null;
  }

  /**
   * A kill between the ledger's "saved" (or "gone") and the removal of the part leaves the `.part` (a second
   * link to the final file) and its `.resume` beside it: removed here, once the ledger says the recording is
   * settled. Unlinking the part's name never touches the final file's bytes.
   */
  async #sweepLeftovers(folder: string): Promise<void> {
    for (const r of this.#ledger!.list()) {
      if (r.state === 'started') continue;
      const dir = await targetFolder({
        folder,
        announcement: r.announcement,
        clientSubfolder: this.#opts.clientSubfolder,
      });
      await removePart(dir, r.announcement);
    }
  }

  /** Warnings in force (a twin, a namesake, lag toward the retention, a full folder...), for the health model. */
  get warnings(): StudioWarning[] {
    return this.#warnings.list();
  }

  /** Keeps the warning for `warnings`; says it (log, `warning` event) when its kind is new. */
  #warn(w: StudioWarning): void {
    if (!this.#warnings.set(w)) return;
    this.#log.warn(`studio: ${w.message}`);
    this.emit('warning', w);
  }

  /** Clears a warning once its cause went away (`warningCleared` tells the health model). */
  #clear(kind: string): void {
    if (this.#warnings.clear(kind)) this.emit('warningCleared', kind);
  }

  /** This member's lag as last read (recordings not yet fetched, when the oldest leaves the team server). */
  get lag(): MemberLag | null {
    return this.#lag;
  }

  async #checkLag(durable: string): Promise<void> {
    const nc = this.#nc;
    if (!nc) return;
    const newest = this.#lagReadings.start();
    try {
      const jsm = await (await import('@nats-io/jetstream')).jetstreamManager(nc);
      const retentionMs = (await jsm.streams.info(STUDIO_STREAM)).config.max_age / 1_000_000 || DEFAULT_RETENTION_MS;
      const lag = await consumerLag(jsm, await jsm.consumers.info(STUDIO_STREAM, durable), retentionMs);
      if (!newest()) return;
      this.#lag = lag;
      const warnMs = this.#opts.lagWarnMs ?? defaultLagWarnMs(retentionMs);
      if (lagging(this.#lag, warnMs)) {
        const n = note('studioSelfLagging', {
          count: this.#lag.pending,
          left: shortDuration(this.#lag.expiresInMs ?? 0),
        });
        this.#warn(studioWarning('lag', n));
      } else this.#clear('lag');
    } catch (error) {
      this.#log.warn(`studio: could not read how far behind this member is (${describeError(error)}).`);
    }
  }

  async #renewPresence(): Promise<void> {
    const other = await this.#presence?.renew().catch(() => null);
    if (!other) return;
    this.#warn(
      studioWarning(
        'twin',
        note('studioMemberTwin', { name: other.name, host: other.host, folder: this.#statePath ?? '' }),
      ),
    );
  }

  #statePath: string | null = null;
  /** Unreadable recordings this run already asked the receivers about (one request each). */
  readonly #asked = new Set<string>();

  /**
   * Whether a receiver said an unreadable recording is gone (its claim, once); otherwise asks the receivers, once per
   * run, to put it again, and the transfer is retried as usual.
   */
  async #unreadable(a: Announcement): Promise<boolean> {
    const nc = this.#nc;
    if (!nc) return false;
    const claims = await new Kvm(nc).open(CLAIMS_BUCKET).catch(() => null);
    const entry = await claims?.get(a.identity).catch(() => null);
    if (entry?.operation === 'PUT' && entry.json<{ state?: string }>().state === 'gone') return true;
    if (!this.#asked.has(a.identity)) {
      this.#asked.add(a.identity);
      nc.publish(UNREADABLE_SUBJECT, JSON.stringify({ identity: a.identity }));
      this.#log.warn(
        `studio: ${a.channelId} cannot be read from the team store; the receivers are asked to put it again.`,
      );
    }
    return false;
  }
  /** The highest stream sequence this member handled (shared-index.ts), kept across restarts. */
  #handled: HandledSequence | null = null;
  /** Stream sequences delivered in this run and not settled yet: the handled mark stays below the lowest. */
  readonly #unsettled = new Set<number>();
  /** The highest stream sequence settled in this run. */
  #settledUpTo = 0;

  /**
   * `seq` is settled (saved, gone, known, or not an announcement): the handled mark moves up to the highest sequence
   * below which every delivered one is settled. A mirror that failed and waits for redelivery (or was stopped) holds
   * it below itself, so if it then expires from the team server, the member learns it missed it (#learnMissed);
   * marked past it, as once, the member never heard of it.
   */
  #settle(seq: number): Promise<void> {
    this.#unsettled.delete(seq);
    this.#settledUpTo = Math.max(this.#settledUpTo, seq);
    let mark = this.#settledUpTo;
    for (const waiting of this.#unsettled) mark = Math.min(mark, waiting - 1);
    return this.#handled?.handled(mark) ?? Promise.resolve();
  }

  /**
   * The announcements made while this member was away and gone from the stream before it read them, or before it
   * finished mirroring them (a transfer cut short, or one that was still failing when it stopped): recorded as gone
   * (with `missed`, the part removed), said once (a log line and the `missed` event), never tried again.
   */
  async #learnMissed(nc: NatsConnection, folder: string): Promise<void> {
    const handled = this.#handled;
    const ledger = this.#ledger;
    if (!handled || !ledger) return;
    try {
      const first = (await (await jsmOf(nc)).streams.info(STUDIO_STREAM)).state.first_seq;
      if (handled.value === null) {
        // A member from now on: what left the stream before was never its to miss. Kept at once, so a mirror still
        // failing when this first run ends is named at the next one (the mark stays below it, see #settle).
        await handled.handled(Math.max(0, first - 1));
        return;
      }
      if (first - 1 <= handled.value) return;
      const missed = (await announcementsBetween(nc, handled.value, first)).filter(
        (a) => (ledger.get(a.identity)?.state ?? 'started') === 'started',
      );
      for (const a of missed) {
        const started = ledger.get(a.identity) !== undefined;
        await ledger.put({
          identity: a.identity,
          state: 'gone',
          at: new Date().toISOString(),
          announcement: a,
          missed: true,
        });
        // A transfer it had begun leaves no part behind.
        if (started) {
          const clientSubfolder = this.#opts.clientSubfolder;
          await targetFolder({ folder, announcement: a, clientSubfolder })
            .then((dir) => removePart(dir, a))
            .catch(() => undefined);
        }
      }
      await handled.handled(first - 1);
      if (missed.length === 0) return;
      const channels = missed.map((a) => a.channelId).join(', ');
      this.#log.warn(
        `studio: ${counted(missed.length, 'recording', 'recordings')} expired from the team server before this member could mirror ${missed.length === 1 ? 'it' : 'them'}: ${channels}.`,
      );
      this.emit('missed', missed);
    } catch (error) {
      this.#log.warn(`studio: could not learn which recordings expired while away (${describeError(error)}).`);
    }
  }

  /** Whether the team server answered when last asked (null before the first answer). */
  get answer(): TeamAnswer | null {
    return this.#link?.answer ?? null;
  }

  /** What this member has mirrored or is mirroring (for views). */
  records(): MemberRecord[] {
    return this.#ledger?.list() ?? [];
  }

  /** The team's announcements still on the stream, oldest first (with `catalogue`, once connected). */
  announcements(): Announcement[] {
    return this.#catalogue?.list() ?? [];
  }

  async stop(): Promise<void> {
    this.#stop.abort(new Error('stopped'));
    for (const attempt of this.#attempts) attempt.abort(new Error('stopped'));
    // A start still in progress (taking the lock, opening the ledger) would write on after the cleanup.
    await this.#starting?.catch(() => undefined);
    this.#catalogue?.stop();
    await this.#loop?.catch(() => undefined);
    await this.#cleanup();
  }

  /** What `#leave` closes, then the ledger and the lock (a presence that cannot say goodbye keeps neither open). */
  async #cleanup(): Promise<void> {
    await this.#leave();
    await this.#ledger?.close();
    this.#ledger = null;
    await this.#lock?.release();
    this.#lock = null;
  }

  async #watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        this.#connected = false;
        this.emit('connection', 'disconnected');
      }
      if (s.type === 'reconnect') {
        this.#connected = true;
        this.emit('connection', 'reconnected');
        for (const retry of this.#retries) retry.recover();
        for (const wake of this.#onReconnect) wake();
        this.#onReconnect.clear();
        // A transfer through the old connection may wait forever on a consumer the restarted server forgot.
        for (const attempt of this.#attempts) attempt.abort(new Error('reconnected'));
        // The feed's pulls went to the server left behind (a hung one never answers them): read it afresh now
        // rather than when they expire.
        void this.#feed?.close();
      }
    }
  }

  async #storeFor(a: Announcement): Promise<TeamStore> {
    const key = a.store.kind === 'nats' ? 'nats' : `s3:${a.store.bucket}`;
    let store = this.#stores.get(key);
    if (!store) {
      store =
        a.store.kind === 'nats'
          ? new NatsTeamStore(this.#nc!, { retentionMs: DEFAULT_RETENTION_MS })
          : new (await import('./s3-store.js')).S3TeamStore({ ...this.#opts.s3, bucket: a.store.bucket, prefix: '' });
      this.#stores.set(key, store);
    }
    return store;
  }

  async #run(durable: string, folder: string): Promise<void> {
    const ledger = this.#ledger!;
    // Transfers this computer had started first: they resume now, not when the server redelivers.
    for (const r of ledger.list().filter((x) => x.state === 'started')) {
      if (this.#stop.signal.aborted) return;
      await this.#mirror(r.announcement, folder);
    }
    const js = jetstream(this.#nc!);
    const consumer = await js.consumers.get(STUDIO_STREAM, durable);
    const mirrors = new MirrorSlots<Delivered>(
      this.#opts.rateBytesPerSec ? 1 : MIRRORS_AT_ONCE,
      (d) => this.#handle(d, folder),
      ({ m, a }) => ({ key: a?.identity ?? `seq ${m.seq}`, bytes: a?.bytes ?? 0 }),
      (error) => this.#log.warn(`studio: an announcement could not be settled (${describeError(error)}).`),
    );
    const signal = this.#stop.signal;
    const feedRetry = new RetryLoop({ policy: FEED_RETRY, signal, clock: systemClock });
    this.#retries.add(feedRetry);
    const close = () => void this.#feed?.close();
    signal.addEventListener('abort', close, { once: true });
    try {
      while (!signal.aborted) {
        try {
          const messages = await consumer.consume({ max_messages: 4, expires: 5_000 });
          this.#feed = messages;
          // Stopped while the feed was being opened: the stop's close went to the feed before this one.
          if (signal.aborted) close();
          void this.#traceFeed(messages);
          for await (const m of messages) {
            if (signal.aborted) break;
            feedRetry.reset();
            this.#unsettled.add(m.seq);
            await mirrors.take({ m, a: parseAnnouncement(m.data) });
          }
        } catch (error) {
          this.#log.warn(`studio: the announcement feed stopped (${describeError(error)}); reading it again.`);
          // While the client reconnects by itself, its reconnection is the retry (no second one nested inside it);
          // on an open connection, the feed is read again after a pause.
          if (!this.#connected) await this.#reconnected();
          else if (!(await feedRetry.wait())) break;
        } finally {
          // Settled before the feed is read again, so no announcement is taken twice at once.
          await mirrors.drain();
        }
      }
    } finally {
      signal.removeEventListener('abort', close);
      this.#retries.delete(feedRetry);
    }
  }

  /** Resolves when the client has reconnected, or on stop. */
  #reconnected(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#connected || this.#stop.signal.aborted) return resolve();
      this.#onReconnect.add(resolve);
    });
  }

  /** What the client says of the feed beyond routine pulls and heartbeats (a stalled read consumer), at debug. */
  async #traceFeed(messages: ConsumerMessages): Promise<void> {
    for await (const s of messages.status()) {
      if (s.type === 'next' || s.type === 'heartbeat' || s.type === 'discard' || s.type === 'debug') continue;
      this.#log.debug(`studio: the announcement feed: ${JSON.stringify(s)}`);
    }
  }

  async #handle({ m, a }: Delivered, folder: string): Promise<void> {
    if (!a) {
      this.#log.warn(`studio: an announcement that is not one was dropped (stream sequence ${m.seq}).`);
      m.term();
      await this.#settle(m.seq);
      return;
    }
    const known = this.#ledger!.get(a.identity);
    if (known && known.state !== 'started') {
      m.ack();
      await this.#settle(m.seq);
      this.#catchingUp();
      return;
    }
    // Keeps the server from redelivering to anyone while a long transfer runs.
    const working = setInterval(() => m.working(), 10_000);
    try {
      const done = await this.#mirror(a, folder);
      if (done) {
        await m.ackAck().catch(() => undefined);
        await this.#settle(m.seq);
        this.#catchingUp();
      }
    } finally {
      clearInterval(working);
    }
  }

  /**
   * Catching up: the lag warning goes as soon as it is no longer true, not at the next reading. Read after the
   * acknowledgement, which is what the server counts.
   */
  #catchingUp(): void {
    if (this.#warnings.has('lag') && this.#durable) void this.#checkLag(this.#durable);
  }

  /** Mirrors until saved, gone or stopped; true when the announcement is settled. */
  async #mirror(a: Announcement, folder: string): Promise<boolean> {
    const ledger = this.#ledger!;
    if (ledger.get(a.identity)?.state !== 'started') {
      await ledger.put({ identity: a.identity, state: 'started', at: new Date().toISOString(), announcement: a });
      this.emit('started', a);
    }
    const signal = this.#stop.signal;
    const retry = new RetryLoop({ policy: MIRROR_RETRY, signal, clock: systemClock });
    const quickRetry = new RetryLoop({ policy: MIRROR_QUICK, signal, clock: systemClock });
    this.#retries.add(retry);
    try {
      while (!signal.aborted) if (await this.#mirrorOnce(a, folder, retry, quickRetry)) return true;
      return false;
    } finally {
      this.#retries.delete(retry);
    }
  }

  /**
   * One attempt of `#mirror`: true when the announcement is settled (saved or gone), false when stopped or once
   * the wait after a failure is over.
   */
  async #mirrorOnce(a: Announcement, folder: string, retry: RetryLoop, quickRetry: RetryLoop): Promise<boolean> {
    const ledger = this.#ledger!;
    const controller = new AbortController();
    this.#attempts.add(controller);
    const onStop = () => controller.abort(new Error('stopped'));
    this.#stop.signal.addEventListener('abort', onStop, { once: true });
    try {
      const saved = await mirrorRecording({
        store: await this.#storeFor(a),
        folder,
        announcement: a,
        signal: controller.signal,
        onProgress: (p) => this.emit('progress', p),
        ...(this.#opts.clientSubfolder ? { clientSubfolder: this.#opts.clientSubfolder } : {}),
        ...(this.#opts.idleTimeoutMs ? { idleTimeoutMs: this.#opts.idleTimeoutMs } : {}),
        ...(this.#opts.checkpointBytes ? { checkpointBytes: this.#opts.checkpointBytes } : {}),
        ...(this.#opts.rateBytesPerSec ? { rateBytesPerSec: this.#opts.rateBytesPerSec } : {}),
      });
      await ledger.put({
        identity: a.identity,
        state: 'saved',
        at: new Date().toISOString(),
        announcement: a,
        path: saved.path,
      });
      await removePart(await targetFolder({ folder, announcement: a, clientSubfolder: this.#opts.clientSubfolder }), a);
      this.#clear('folderFull');
      this.#clear('s3Setup');
      this.emit('saved', {
        identity: a.identity,
        channelId: a.channelId,
        kind: a.kind,
        path: saved.path,
        bytes: saved.bytes,
        sha256: a.sha256,
      });
      return true;
    } catch (error) {
      if (this.#stop.signal.aborted) return false;
      // Bytes the store no longer has: the receivers are asked to put them again, or have said they are gone.
      const gone = error instanceof GoneError || (error instanceof UnreadableError && (await this.#unreadable(a)));
      const message = describeError(error);
      this.emit('failed', { identity: a.identity, channelId: a.channelId, message, willRetry: !gone });
      if (gone) {
        await ledger.put({ identity: a.identity, state: 'gone', at: new Date().toISOString(), announcement: a });
        await removePart(
          await targetFolder({ folder, announcement: a, clientSubfolder: this.#opts.clientSubfolder }),
          a,
        );
        return true;
      }
      // What only the user can fix is said once (and kept for the health view) until a transfer succeeds.
      const setup = error instanceof FolderFullError ? 'folderFull' : error instanceof S3SetupError ? 's3Setup' : null;
      if (setup && error instanceof TallyError && error.note) this.#warn(studioWarning(setup, error.note));
      else this.#log.warn(`studio: ${a.channelId}: ${message}; trying again.`);
      const quick =
        controller.signal.aborted || error instanceof StaleResumeError || error instanceof MirrorVerifyError;
      await (quick && quickRetry.attempt < QUICK_ATTEMPTS ? quickRetry : retry).wait();
      return false;
    } finally {
      this.#stop.signal.removeEventListener('abort', onStop);
      this.#attempts.delete(controller);
    }
  }
}
