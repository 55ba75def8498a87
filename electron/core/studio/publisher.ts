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
import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { backoffDelay } from '../backoff.js';
import { describeError, silentLogger, type Logger } from '../logger.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import { serverIdentity, uploadIdentity, type Announcement } from './announcement.js';
import { TeamCatalogue } from './catalogue.js';
import { Ledger, type LedgerRecord } from './ledger.js';
import { NatsTeamStore, S3TeamStore, type S3StoreOptions, type TeamStore } from './store.js';
import {
  CLAIMS_BUCKET,
  DEFAULT_RETENTION_MS,
  STUDIO_SUBJECT,
  TeamAuthError,
  TeamTlsError,
  abortableDelay,
  applyBucketRetention,
  connectTeam,
  ensureStudioStream,
  type TeamCredentials,
  type TeamRetry,
} from './team.js';

export type StoreSpec = { kind: 'nats' } | ({ kind: 's3' } & S3StoreOptions);

export interface PublisherOptions {
  url: URL;
  credentials: TeamCredentials | null;
  store: StoreSpec;
  /** How long the stream and the object store keep recordings (default 7 days). */
  retentionMs?: number;
  /** The pipeline's state folder: the ledger of what was published lives there. */
  stateDir: string;
  log?: Logger;
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
}

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
  failed: [info: { identity: string; channelId: string; message: string }];
}

interface Item {
  identity: string;
  kind: 'server' | 'client';
  channelId: string;
  path: string;
  bytes: number;
  savedAt: string;
  contentType?: string;
}

interface PublishedRecord extends LedgerRecord {
  state: 'published' | 'missing';
  /** Since the view lists them (older records have only identity, state and at). */
  channelId?: string;
  bytes?: number;
  fileName?: string;
}

interface Claim {
  state: 'claimed' | 'published';
  by: string;
  at: string;
}

const isPublished = (v: unknown): v is PublishedRecord =>
  typeof v === 'object' && v !== null && typeof (v as PublishedRecord).identity === 'string';

export class StudioPublisher extends EventEmitter<PublisherEvents> {
  readonly #opts: PublisherOptions;
  readonly #pipeline: RecordingPipeline;
  readonly #by: string;
  readonly #stop = new AbortController();
  readonly #queue = new Map<string, Item>();
  #wake: (() => void) | null = null;
  #credentials: TeamCredentials | null;
  #ledger: Ledger<PublishedRecord> | null = null;
  #nc: NatsConnection | null = null;
  #kv: KV | null = null;
  #store: TeamStore | null = null;
  #loop: Promise<void> | null = null;
  #catalogue: TeamCatalogue | null = null;
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
    const since = Date.now() - this.#retentionMs;
    // Only saved jobs of the retention period are read back from the journal.
    for (const job of this.#pipeline.inbox.where((state, updatedAtMs) => state === 'saved' && updatedAtMs >= since)) {
      if (!job.path || job.bytes === null) continue;
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

  async stop(): Promise<void> {
    this.#detach();
    this.#catalogue?.stop();
    this.#stop.abort(new Error('stopped'));
    this.#wake?.();
    await this.#loop?.catch(() => undefined);
    await this.#nc?.close().catch(() => undefined);
    await this.#ledger?.close();
  }

  #enqueue(item: Item): void {
    if (this.#ledger?.get(item.identity)) return;
    this.#queue.set(item.identity, item);
    this.#wake?.();
  }

  async #connect(): Promise<void> {
    const nc = await connectTeam({
      url: this.#opts.url,
      credentials: this.#credentials,
      name: `tally listen ${this.#by}`,
      signal: this.#stop.signal,
      onRetry: (info) => this.emit('waiting', info),
      ...this.#opts.retry,
    });
    this.#nc = nc;
    const jsm = await ensureStudioStream(nc, { retentionMs: this.#retentionMs, owner: true });
    this.#kv = await new Kvm(nc).create(CLAIMS_BUCKET, { history: 1, ttl: this.#retentionMs });
    await applyBucketRetention(jsm, this.#retentionMs);
    const spec = this.#opts.store;
    this.#store =
      spec.kind === 'nats' ? new NatsTeamStore(nc, { retentionMs: this.#retentionMs }) : new S3TeamStore(spec);
    if (this.#store instanceof NatsTeamStore) {
      // What a receiver killed mid-upload left behind (this one before a restart, or another): not worth failing for.
      const removed = await this.#store.sweepAbandonedChunks(this.#staleClaimMs).catch((error: unknown) => {
        this.#log.warn(`studio: could not look for uploads cut short in the team store (${describeError(error)}).`);
        return 0;
      });
      if (removed > 0) this.#log.warn(`studio: removed ${removed} chunks of uploads cut short from the team store.`);
    }
    if (this.#opts.catalogue) {
      const catalogue = new TeamCatalogue();
      catalogue.on('changed', () => this.emit('catalogue'));
      await catalogue.start(nc, this.#log);
      this.#catalogue = catalogue;
    }
    this.emit('connected', { url: `${this.#opts.url.protocol}//${this.#opts.url.host}` });
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    let refusals = 0;
    let lastRefusal = '';
    for (let attempt = 1; !signal.aborted && !this.#nc; attempt += 1) {
      try {
        await this.#connect();
      } catch (error) {
        if (signal.aborted) return;
        const half = this.#nc as NatsConnection | null;
        this.#nc = null;
        await half?.close().catch(() => undefined);
        if (error instanceof TeamAuthError || error instanceof TeamTlsError) {
          // Only the user can fix these: said once (again only when the reason changes), tried again rarely.
          refusals += 1;
          const retryInMs = backoffDelay(refusals, {
            baseMs: this.#opts.refusedDelayMs ?? 30_000,
            maxMs: this.#opts.refusedMaxDelayMs ?? 15 * 60_000,
          });
          if (error.message !== lastRefusal) this.emit('refused', { error, retryInMs });
          lastRefusal = error.message;
          await abortableDelay(retryInMs, signal);
          if (this.#opts.reloadCredentials && !signal.aborted) {
            this.#credentials = await this.#opts.reloadCredentials().catch(() => this.#credentials);
          }
          continue;
        }
        // A server without JetStream, or assets it refuses: said once per attempt, retried slowly.
        this.#log.warn(`studio: ${describeError(error)}`);
        await abortableDelay(backoffDelay(attempt, { baseMs: 2_000, maxMs: 60_000, jitter: 0.5 }), signal);
      }
    }
    let failures = 0;
    while (!signal.aborted) {
      const item = this.#queue.values().next().value;
      if (!item) {
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = null;
        continue;
      }
      try {
        await this.#publish(item);
        this.#queue.delete(item.identity);
        failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        failures += 1;
        const message = describeError(error);
        this.emit('failed', { identity: item.identity, channelId: item.channelId, message });
        this.#log.warn(`studio: ${item.channelId} is not in the team store yet (${message}); trying again.`);
        // To the back of the queue, so one stubborn recording does not hold up the others.
        this.#queue.delete(item.identity);
        this.#queue.set(item.identity, item);
        await abortableDelay(backoffDelay(failures, { baseMs: 500, maxMs: 30_000, jitter: 0.5 }), signal);
      }
    }
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
    // The claim is renewed while the bytes go up (a large file over a slow line can take longer than the
    // stale age): another receiver takes over only a claim nobody renewed, and only by compare-and-set.
    let revision = claimed;
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
    await jetstream(this.#nc!).publish(STUDIO_SUBJECT, JSON.stringify(announcement), {
      msgID: item.identity,
      timeout: 10_000,
    });
    await kv.update(item.identity, JSON.stringify(this.#claimValue('published')), revision);
    await ledger.put({ ...record, at: new Date().toISOString() });
    this.emit('published', {
      identity: item.identity,
      channelId: item.channelId,
      kind: item.kind,
      bytes: put.bytes,
      sha256: put.sha256,
    });
  }

  get #staleClaimMs(): number {
    return this.#opts.staleClaimMs ?? 10 * 60_000;
  }

  #claimValue(state: Claim['state']): Claim {
    return { state, by: this.#by, at: new Date().toISOString() };
  }

  /** The claim's revision when this receiver holds it, or why not. */
  async #claim(kv: KV, identity: string): Promise<number | 'published' | 'taken'> {
    try {
      return await kv.create(identity, JSON.stringify(this.#claimValue('claimed')));
    } catch (error) {
      const entry = await kv.get(identity);
      if (!entry || entry.operation !== 'PUT') throw error;
      const claim = entry.json<Claim>();
      if (claim.state === 'published') return 'published';
      const stale = Date.now() - Date.parse(claim.at) > this.#staleClaimMs;
      if (claim.by !== this.#by && !stale) return 'taken';
      // Ours from before a restart, or abandoned: taken over only if nobody else moved it meanwhile.
      return kv.update(identity, JSON.stringify(this.#claimValue('claimed')), entry.revision);
    }
  }
}
