/**
 * The state of the emulated service: live broadcasts, the search index of ended channels, recordings, the
 * admin settings and the webhook log. The HTTP servers are thin faces over this class; it is also the
 * SandboxControl that tests and the app drive directly.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { SandboxClosedError, type Scheduler, type VirtualClock } from './clock.js';
import { FaultSlot, parseFaultSpec } from './faults.js';
import { RecordingFile, recordingSizeFor } from './recording-file.js';
import type { Rng } from './rng.js';
import { SearchIndex, type EndedChannel, type SearchAnswer } from './search-index.js';
import type {
  BroadcastOptions,
  BroadcastInfo,
  FaultSpec,
  RecordingInfo,
  SandboxControl,
  SandboxTarget,
  WebhookDelivery,
  WebhookShape,
} from './types.js';
import { WatcherCurve } from './watchers.js';
import { buildWebhookRequest, sendWebhookRequest } from './webhook-sender.js';
import {
  SandboxConflictError,
  SandboxNotFoundError,
  assertChannelId,
  assertCount,
  assertDate,
  assertHttpUrl,
  type DownloadTarget,
  type LiveBroadcast,
  type LiveListItem,
  type Recording,
  type ServiceConfig,
} from './service-model.js';

export {
  MAX_CHANNEL_ID_LENGTH,
  SandboxConflictError,
  SandboxNotFoundError,
  assertHttpUrl,
  type DownloadTarget,
  type LiveListItem,
  type ServiceConfig,
} from './service-model.js';

/** Webhook deliveries kept for webhookDeliveries(). */
const MAX_DELIVERIES = 1000;

const digestOf = (s: string): Buffer => createHash('sha256').update(s).digest();

export class SandboxService implements SandboxControl {
  readonly events = new EventEmitter();
  readonly faults: Record<SandboxTarget, FaultSlot> = {
    api: new FaultSlot('api'),
    download: new FaultSlot('download'),
  };
  private readonly live = new Map<string, LiveBroadcast>();
  private readonly ended = new SearchIndex();
  private readonly recordings = new Map<string, Recording>();
  private readonly recordingsByRandom = new Map<string, Recording>();
  private readonly deliveries: WebhookDelivery[] = [];
  private readonly closing = new AbortController();
  private downloadOrigin = '';
  private hookUrl: string | null;
  private channelHookUrl: string | null = null;
  private shape: WebhookShape;
  private recording: boolean;

  constructor(
    readonly config: ServiceConfig,
    private readonly clock: VirtualClock,
    private readonly scheduler: Scheduler,
    private readonly rng: Rng,
  ) {
    this.hookUrl = config.webhookUrl;
    this.shape = config.webhookShape;
    this.recording = config.recordingEnabled;
    // Listeners are the app's and the tests' business; no cap warning for a busy test file.
    this.events.setMaxListeners(0);
  }

  get serviceId(): string {
    return this.config.serviceId;
  }

  get webhookUrl(): string | null {
    return this.hookUrl;
  }

  get channelWebhookUrl(): string | null {
    return this.channelHookUrl;
  }

  get recordingEnabled(): boolean {
    return this.recording;
  }

  get webhookShape(): WebhookShape {
    return this.shape;
  }

  get timeFactor(): number {
    return this.clock.factor;
  }

  /** Set once the download server listens; recording URLs are built from it. */
  setDownloadOrigin(origin: string): void {
    this.downloadOrigin = origin;
  }

  /** Constant-time check of a serviceId/secret pair. */
  checkCredentials(serviceId: string, secret: string): boolean {
    const idOk = timingSafeEqual(digestOf(serviceId), digestOf(this.config.serviceId));
    const secretOk = timingSafeEqual(digestOf(secret), digestOf(this.config.secret));
    return idOk && secretOk;
  }

  // ---- broadcasts -------------------------------------------------------------------------------------

  startBroadcast(opts: BroadcastOptions = {}): BroadcastInfo {
    let id = opts.id;
    if (id === undefined) {
      do id = `${this.clock.wall()}_${this.rng.chars(5)}`;
      while (this.isKnown(id));
    }
    assertChannelId(id);
    // A reused ID (an ended channel's) is allowed when asked for; a live one never (the service has one per ID).
    const taken = opts.reuse === true ? this.live.has(id) : this.isKnown(id);
    if (taken) throw new SandboxConflictError(`channel "${id}" already exists in the sandbox`);
    if (opts.createdAt !== undefined) assertDate(opts.createdAt, 'createdAt');
    if (opts.watchers !== undefined) assertCount(opts.watchers, 'watchers');
    const recordingBytes = opts.recordingBytes ?? this.config.defaultRecordingBytes;
    recordingSizeFor(recordingBytes);
    const broadcast: LiveBroadcast = {
      id,
      createdAt: opts.createdAt ?? this.clock.wallDate(),
      record: opts.record ?? true,
      recordingBytes,
      curve: new WatcherCurve(this.rng.uint32(), this.clock.now()),
      fixedWatchers: opts.watchers ?? null,
      sessionFloor: opts.watchers !== undefined ? opts.watchers + 1 : 0,
    };
    this.live.set(id, broadcast);
    const info = this.liveInfo(broadcast);
    this.events.emit('broadcast:start', info);
    return info;
  }

  endBroadcast(id: string, opts: { sendWebhook?: boolean } = {}): Promise<RecordingInfo | null> {
    const broadcast = this.live.get(id);
    if (!broadcast) return Promise.reject(new SandboxNotFoundError(`no live broadcast "${id}" in the sandbox`));
    // The state change is synchronous: the live list and a second termination see it at once.
    const now = this.clock.now();
    const endedAt = new Date(Math.max(this.clock.wall(), broadcast.createdAt.getTime()));
    const channel: EndedChannel = {
      id,
      createdAtMs: broadcast.createdAt.getTime(),
      endedAtMs: endedAt.getTime(),
      peerCount: this.sessionsOf(broadcast, now),
      record: broadcast.record,
      indexedAt: now,
    };
    this.live.delete(id);
    this.ended.add(channel);
    this.events.emit('broadcast:end', this.endedInfo(channel));
    if (!broadcast.record || !this.recording) return Promise.resolve(null);
    return this.publish(channel, broadcast.recordingBytes, opts.sendWebhook !== false);
  }

  addEndedChannels(items: Array<{ id: string; createdAt: Date; endedAt: Date; peerCount: number }>): void {
    const batch = new Set<string>();
    const channels: EndedChannel[] = [];
    for (const item of items) {
      assertChannelId(item.id);
      assertDate(item.createdAt, 'createdAt');
      assertDate(item.endedAt, 'endedAt');
      assertCount(item.peerCount, 'peerCount');
      if (item.endedAt < item.createdAt) throw new RangeError(`channel "${item.id}" ends before it starts`);
      if (this.isKnown(item.id) || batch.has(item.id)) {
        throw new SandboxConflictError(`channel "${item.id}" already exists in the sandbox`);
      }
      batch.add(item.id);
      channels.push({
        id: item.id,
        createdAtMs: item.createdAt.getTime(),
        endedAtMs: item.endedAt.getTime(),
        peerCount: item.peerCount,
        record: false,
        indexedAt: -Infinity,
      });
    }
    this.ended.addMany(channels);
  }

  listBroadcasts(filter: { state?: 'live' | 'ended' } = {}): BroadcastInfo[] {
    const out: BroadcastInfo[] = [];
    if (filter.state !== 'ended') for (const b of this.live.values()) out.push(this.liveInfo(b));
    if (filter.state !== 'live') for (const c of this.ended.all()) out.push(this.endedInfo(c));
    return out;
  }

  setWatchers(id: string, watchers: number | null): BroadcastInfo {
    const broadcast = this.live.get(id);
    if (!broadcast) throw new SandboxNotFoundError(`no live broadcast "${id}" in the sandbox`);
    if (watchers !== null) assertCount(watchers, 'watchers');
    const now = this.clock.now();
    const current = this.watchersOf(broadcast, now);
    const sessions = this.sessionsOf(broadcast, now);
    broadcast.sessionFloor = sessions + Math.max(0, (watchers ?? current) - current);
    broadcast.fixedWatchers = watchers;
    return this.liveInfo(broadcast);
  }

  /** The live list as the service answers it, oldest first. */
  liveList(): LiveListItem[] {
    const now = this.clock.now();
    return [...this.live.values()].map((b) => ({
      id: b.id,
      serviceId: this.config.serviceId,
      createTime: b.createdAt.toISOString(),
      numOfWatchers: this.watchersOf(b, now),
    }));
  }

  /** Whether any channel, live or ended, already has this ID (the demo picks names that are free). */
  isKnownId(id: string): boolean {
    return this.isKnown(id);
  }

  isLive(id: string): boolean {
    return this.live.has(id);
  }

  /** Ended channels overlapping [startSec, endSec] whose ID contains `keyword`, once indexed. */
  search(keyword: string, startSec: number, endSec: number): SearchAnswer {
    return this.ended.search({
      keyword,
      startSec,
      endSec,
      visibleBefore: this.clock.now() - this.config.searchIndexDelayMs,
      limit: this.config.searchLimit,
    });
  }

  // ---- recordings -------------------------------------------------------------------------------------

  getRecording(channelId: string): RecordingInfo | undefined {
    const recording = this.recordings.get(channelId);
    return recording ? this.recordingInfo(recording) : undefined;
  }

  expireRecording(channelId: string): void {
    const recording = this.recordings.get(channelId);
    if (!recording) throw new SandboxNotFoundError(`no recording for channel "${channelId}" in the sandbox`);
    this.markExpired(recording, this.clock.wallDate());
  }

  /** Resolves a download path (still percent-encoded) to a file, or null when no such object exists. */
  resolveDownload(path: string): DownloadTarget | null {
    const segments = path.split('/').slice(1);
    if (segments.some((s) => s === '')) return null;
    let decoded: string[];
    try {
      decoded = segments.map((s) => decodeURIComponent(s));
    } catch {
      return null;
    }
    const [service, second, third] = decoded;
    if (service !== this.config.serviceId) return null;
    const file = decoded.length === 3 ? third : decoded.length === 2 ? second : undefined;
    if (file === undefined) return null;
    const kind = file.endsWith('.mp4') ? 'video' : file.endsWith('.jpg') ? 'thumbnail' : null;
    if (!kind) return null;
    const channelId = file.slice(0, -4);
    const recording =
      decoded.length === 3 ? this.recordingsByRandom.get(second as string) : this.recordings.get(channelId);
    // The older URL shape (no random segment) only ever named the video.
    if (!recording || recording.channelId !== channelId || (decoded.length === 2 && kind !== 'video')) return null;
    return { recording, kind };
  }

  /** True once the recording is deleted (retention passed or expireRecording). */
  isExpired(recording: Recording): boolean {
    if (recording.expiredAt) return true;
    if (this.clock.now() >= recording.expiresAt) {
      this.markExpired(recording, this.clock.wallTimeAt(recording.expiresAt));
      return true;
    }
    return false;
  }

  private async publish(channel: EndedChannel, bytes: number, sendWebhook: boolean): Promise<RecordingInfo> {
    const file = new RecordingFile(bytes, this.rng.uint32());
    let random = this.rng.chars(20, 'abcdefghijklmnopqrstuvwxyz0123456789');
    while (this.recordingsByRandom.has(random)) random = this.rng.chars(20, 'abcdefghijklmnopqrstuvwxyz0123456789');
    // The ETag needs the md5 of the whole file; the real service also finishes processing before the webhook.
    const md5 = await file.digest('md5', this.closing.signal);
    const recording: Recording = {
      channelId: channel.id,
      random,
      file,
      md5,
      createdAt: this.clock.wallDate(),
      durationSeconds: Math.round((channel.endedAtMs - channel.createdAtMs) / 1000),
      expiresAt: this.clock.now() + this.config.retentionMs,
      expiredAt: null,
      webhookSent: false,
      cancelExpiry: () => {},
    };
    this.recordings.set(channel.id, recording);
    this.recordingsByRandom.set(random, recording);
    this.armExpiry(recording);
    this.events.emit('recording', this.recordingInfo(recording));
    if (sendWebhook && this.hookUrl) {
      if (this.config.webhookDelayMs > 0) await this.scheduler.sleep(this.config.webhookDelayMs);
      await this.deliver(recording, this.shape);
    }
    return this.recordingInfo(recording);
  }

  private armExpiry(recording: Recording): void {
    recording.cancelExpiry();
    recording.cancelExpiry = this.scheduler.at(recording.expiresAt, () => this.isExpired(recording));
  }

  private markExpired(recording: Recording, at: Date): void {
    if (recording.expiredAt) return;
    recording.expiredAt = at;
    recording.cancelExpiry();
    this.events.emit('recording:expired', this.recordingInfo(recording));
  }

  private recordingInfo(recording: Recording): RecordingInfo {
    const expired = this.isExpired(recording);
    const { file } = recording;
    return {
      channelId: recording.channelId,
      url: this.fileUrl(recording, true, 'mp4'),
      legacyUrl: this.fileUrl(recording, false, 'mp4'),
      thumbnailUrl: this.fileUrl(recording, true, 'jpg'),
      size: file.size,
      md5: recording.md5,
      etag: `"${recording.md5}"`,
      durationSeconds: recording.durationSeconds,
      sha256: () => file.digest('sha256', this.closing.signal),
      createdAt: recording.createdAt,
      expiresAt: recording.expiredAt ?? this.clock.wallTimeAt(recording.expiresAt),
      expired,
    };
  }

  private fileUrl(recording: Recording, withRandom: boolean, ext: 'mp4' | 'jpg'): string {
    const service = encodeURIComponent(this.config.serviceId);
    const random = withRandom ? `/${recording.random}` : '';
    return `${this.downloadOrigin}/${service}${random}/${encodeURIComponent(recording.channelId)}.${ext}`;
  }

  // ---- webhook ----------------------------------------------------------------------------------------

  async resendWebhook(channelId: string, shape?: WebhookShape): Promise<WebhookDelivery> {
    const recording = this.recordings.get(channelId);
    if (!recording) throw new SandboxNotFoundError(`no recording for channel "${channelId}" in the sandbox`);
    if (!this.hookUrl) throw new SandboxConflictError('no recordhook URL is set in the sandbox');
    return this.deliver(recording, shape ?? this.shape);
  }

  webhookDeliveries(): WebhookDelivery[] {
    return this.deliveries.map((d) => ({ ...d }));
  }

  private async deliver(recording: Recording, shape: WebhookShape): Promise<WebhookDelivery> {
    const hookUrl = this.hookUrl as string;
    if (!recording.webhookSent) {
      // The service deletes the file a fixed time after the (first) webhook, not after publication.
      recording.webhookSent = true;
      if (!recording.expiredAt) {
        recording.expiresAt = this.clock.now() + this.config.retentionMs;
        this.armExpiry(recording);
      }
    }
    const at = this.clock.wallDate();
    const request = buildWebhookRequest(
      hookUrl,
      shape,
      {
        channelId: recording.channelId,
        url: this.fileUrl(recording, true, 'mp4'),
        legacyUrl: this.fileUrl(recording, false, 'mp4'),
        durationSeconds: recording.durationSeconds,
        filesize: recording.file.size,
        thumbnailUrl: this.fileUrl(recording, true, 'jpg'),
      },
      this.config.webhookSpecEncoding,
    );
    const { status, error } = await sendWebhookRequest(request, this.config.webhookTimeoutMs, this.closing.signal);
    const delivery: WebhookDelivery = { channelId: recording.channelId, url: hookUrl, shape, status, error, at };
    this.deliveries.push(delivery);
    if (this.deliveries.length > MAX_DELIVERIES) this.deliveries.shift();
    this.events.emit('webhook', { ...delivery });
    return delivery;
  }

  // ---- settings ---------------------------------------------------------------------------------------

  setFaults(target: SandboxTarget, spec: FaultSpec | null): void {
    if (target !== 'api' && target !== 'download') throw new TypeError(`unknown fault target "${String(target)}"`);
    this.faults[target].set(parseFaultSpec(spec));
  }

  getFaults(target: SandboxTarget): FaultSpec | null {
    return this.faults[target].get();
  }

  setTimeFactor(f: number): void {
    this.clock.setFactor(f);
  }

  now(): Date {
    return this.clock.wallDate();
  }

  advanceTime(ms: number): Date {
    this.clock.advance(ms);
    // What fell due is done before anyone asks: a deleted recording answers 404 from the first request on.
    for (const recording of this.recordings.values()) this.isExpired(recording);
    return this.clock.wallDate();
  }

  setWebhookShape(shape: WebhookShape): void {
    if (shape !== 'json' && shape !== 'get' && shape !== 'spec') {
      throw new TypeError(`webhook shape must be json, get or spec, got "${String(shape)}"`);
    }
    this.shape = shape;
  }

  setWebhookUrl(url: string | null): void {
    if (url !== null) assertHttpUrl(url, 'the webhook URL');
    this.hookUrl = url;
  }

  /** The admin API's channel lifecycle hook; channel-hook.ts calls it on every broadcast start and end. */
  setChannelWebhookUrl(url: string | null): void {
    if (url !== null) assertHttpUrl(url, 'the webhook URL');
    this.channelHookUrl = url;
  }

  setRecordingEnabled(enabled: boolean): void {
    this.recording = enabled;
  }

  /** Stops background work: pending digests and webhook calls are aborted. */
  close(): void {
    this.closing.abort(new SandboxClosedError());
    for (const recording of this.recordings.values()) recording.cancelExpiry();
  }

  // ---- helpers ----------------------------------------------------------------------------------------

  private isKnown(id: string): boolean {
    return this.live.has(id) || this.ended.has(id);
  }

  private watchersOf(b: LiveBroadcast, now: number): number {
    return b.fixedWatchers ?? b.curve.watchersAt(now);
  }

  private sessionsOf(b: LiveBroadcast, now: number): number {
    return b.fixedWatchers !== null ? b.sessionFloor : Math.max(b.sessionFloor, b.curve.sessionsAt(now));
  }

  private liveInfo(b: LiveBroadcast): BroadcastInfo {
    const now = this.clock.now();
    return {
      id: b.id,
      serviceId: this.config.serviceId,
      createdAt: new Date(b.createdAt),
      endedAt: null,
      watchers: this.watchersOf(b, now),
      peerCount: this.sessionsOf(b, now),
      record: b.record,
    };
  }

  private endedInfo(c: EndedChannel): BroadcastInfo {
    return {
      id: c.id,
      serviceId: this.config.serviceId,
      createdAt: new Date(c.createdAtMs),
      endedAt: new Date(c.endedAtMs),
      watchers: 0,
      peerCount: c.peerCount,
      record: c.record,
    };
  }
}
