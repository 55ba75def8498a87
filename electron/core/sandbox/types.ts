/**
 * Public vocabulary of the sandbox: a local emulator of the service (live list, search, force-end, admin
 * API, recording webhook and an S3-like download host) that the app embeds and every test talks to over HTTP.
 */
import type { EventEmitter } from 'node:events';
import type { Endpoints } from '../endpoints.js';
import type { Credentials } from '../model.js';

/**
 * The three webhook shapes documented for the service:
 * `json` current docs (POST JSON `{id,url,duration,filesize,thumbnail}`), `get` older docs
 * (`GET <hook>?chid=&url=`), `spec` the spec's wrapped body `{<wrapper>:{channelId, payload:{url}}}`.
 */
export type WebhookShape = 'json' | 'get' | 'spec';

/** Which of the two servers a fault or a request belongs to. */
export type SandboxTarget = 'api' | 'download';

/** Misbehaviour to inject into one server. Every field is optional and they combine. */
export interface FaultSpec {
  /** Delay before answering (slow responses). */
  delayMs?: number;
  /** Answer with this status instead of the real answer (e.g. 500, 502, 503, 401, 403). */
  status?: number;
  /** Error bodies as an HTML page (like a proxy/CDN error page). Alone: a 200 HTML page (captive portal). */
  html?: boolean;
  /** Answer with an empty body (with `status`, or 200 alone). */
  emptyBody?: boolean;
  /** Destroy the socket after N body bytes (connection dropped mid-body). */
  resetAfterBytes?: number;
  /** Declare a Content-Length larger than what is sent, then close the connection. */
  wrongContentLength?: boolean;
  /** Throttle each response body to this many bytes per second (like nginx limit_rate). */
  rateBytesPerSec?: number;
  /** Ignore Range headers (always 200 with the full body). Download server only. */
  noRange?: boolean;
  /** Apply to the next N matching requests only, then clear. Default: until changed. */
  times?: number;
  /** Only requests whose path starts with this prefix match (e.g. '/console/v1/search'). Default: all. */
  path?: string;
  /** Answer with a redirect (`status`, default 307) to this absolute URL, as S3 does for a moved bucket. */
  redirectTo?: string;
}

export interface SandboxOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** API server port (service endpoints, admin API, control API). Default 0 (any free port). */
  port?: number;
  /** Download (S3-like) server port. Default 0. */
  downloadPort?: number;
  /** Default 'sandbox-service'. */
  serviceId?: string;
  /** Default 'sandbox-secret'. */
  secret?: string;
  /**
   * Scales DURATIONS only (retention, search index delay, demo broadcast lengths, webhook delay):
   * 60 makes an hour pass in a minute. Timestamps stay on the service's wall clock (real time, plus whatever
   * `advanceTime` added). Default 1.
   */
  timeFactor?: number;
  /** Unscaled ms before a newly ended channel is searchable. Default 3000. */
  searchIndexDelayMs?: number;
  /** Unscaled retention of a recording after its webhook. Default 6 h. */
  retentionMs?: number;
  /** Max items per search answer; totalCount still reports the full count. Default 1000. */
  searchLimit?: number;
  /** Default 'json'. */
  webhookShape?: WebhookShape;
  /** How the `spec` shape is encoded: JSON (default) or URL-encoded with bracket keys. */
  webhookSpecEncoding?: 'json' | 'form';
  /** Unscaled delay between the end of a broadcast and its webhook. Default 0. */
  webhookDelayMs?: number;
  /** Real ms to wait for a webhook receiver to answer. Default 10 000. */
  webhookTimeoutMs?: number;
  /** Initial recordhook URL. Default null (no webhook is sent). */
  webhookUrl?: string | null;
  /** Server recording on/off (admin API `record`). Default true. */
  recordingEnabled?: boolean;
  /** Simulate broadcasts starting and ending with fluctuating watchers on its own. Default false. */
  demo?: boolean;
  /** Seed of the deterministic RNG for ids, sizes and watchers. Default: a random seed. */
  seed?: number;
  /** Default size of a recording in bytes. Default 4 MiB. */
  defaultRecordingBytes?: number;
}

export interface BroadcastInfo {
  id: string;
  serviceId: string;
  createdAt: Date;
  endedAt: Date | null;
  /** Watching sessions now (0 once ended). */
  watchers: number;
  /** Cumulative sessions over the broadcast's life. */
  peerCount: number;
  /** Whether the broadcaster asked for server recording. */
  record: boolean;
}

export interface RecordingInfo {
  channelId: string;
  /** Download URL with the random segment: `<downloadOrigin>/<serviceId>/<random>/<channelId>.mp4`. */
  url: string;
  /** Older-style URL without the random segment (sent by the `get` webhook shape); also downloadable. */
  legacyUrl: string;
  /** Thumbnail (JPEG) URL announced in the `json` webhook. */
  thumbnailUrl: string;
  size: number;
  md5: string;
  /** `"<md5 hex>"`, with the quotes, as S3 sends it for a single-part object. */
  etag: string;
  /** Duration of the broadcast in whole seconds (what the `json` webhook announces). */
  durationSeconds: number;
  /** Hex sha256 of the whole file, computed once on demand. */
  sha256(): Promise<string>;
  createdAt: Date;
  /** When the file is (or was) deleted: retention after the first webhook (or after publication without one). */
  expiresAt: Date;
  expired: boolean;
}

export interface WebhookDelivery {
  channelId: string;
  /** The webhook URL it was sent to. */
  url: string;
  shape: WebhookShape;
  /** HTTP status of the receiver's answer, or null when none came. */
  status: number | null;
  /** Why no answer came (refused, timeout...), or null. */
  error: string | null;
  at: Date;
}

/** Payload of the 'request' event. */
export interface SandboxRequestEvent {
  method: string;
  path: string;
  target: SandboxTarget;
  /** The Range header of a download request (to observe resumes), or null. */
  range: string | null;
}

/** What a broadcast is started with (`SandboxControl.startBroadcast`); all of it optional. */
export interface BroadcastOptions {
  id?: string;
  record?: boolean;
  recordingBytes?: number;
  watchers?: number;
  createdAt?: Date;
  /**
   * Reuse the ID of an ended channel, as a producer naming every morning show `morning-show` does: the new
   * recording replaces the old one at the legacy URL (which names only the channel), and gets a random segment
   * of its own. A live channel's ID is still refused.
   */
  reuse?: boolean;
}

export interface SandboxControl {
  startBroadcast(opts?: BroadcastOptions): BroadcastInfo;
  /** Ends a live broadcast; if recorded, publishes the recording and sends the webhook; resolves with the recording (after the webhook attempt completed) or null. */
  endBroadcast(id: string, opts?: { sendWebhook?: boolean }): Promise<RecordingInfo | null>;
  /** Seeds ended channels directly into search (for bulk tests: thousands of items fast). */
  addEndedChannels(items: Array<{ id: string; createdAt: Date; endedAt: Date; peerCount: number }>): void;
  listBroadcasts(filter?: { state?: 'live' | 'ended' }): BroadcastInfo[];
  /** Sets (or with null, lets fluctuate again) the watcher count of a live broadcast. */
  setWatchers(id: string, watchers: number | null): BroadcastInfo;
  getRecording(channelId: string): RecordingInfo | undefined;
  /** Re-sends the recording webhook (to test duplicates), optionally in another shape. */
  resendWebhook(channelId: string, shape?: WebhookShape): Promise<WebhookDelivery>;
  expireRecording(channelId: string): void;
  setFaults(target: SandboxTarget, spec: FaultSpec | null): void;
  getFaults(target: SandboxTarget): FaultSpec | null;
  setTimeFactor(f: number): void;
  readonly timeFactor: number;
  /** The service's clock: what its answers are dated by (`Date` header, `currentTime`, `createTime`...). */
  now(): Date;
  /**
   * Time passes at the service: `ms` of its time go by at once. Its clock (the `Date` of every answer) moves ahead
   * by `ms`, and what falls due meanwhile happens (a recording whose retention ends is deleted), together, as on
   * the real service. Returns the service's clock after the move.
   */
  advanceTime(ms: number): Date;
  setWebhookShape(shape: WebhookShape): void;
  readonly webhookShape: WebhookShape;
  setWebhookUrl(url: string | null): void;
  setRecordingEnabled(enabled: boolean): void;
  webhookDeliveries(): WebhookDelivery[];
  readonly webhookUrl: string | null;
  /**
   * URL set by the admin API `webhook` call: the channel lifecycle hook, called as `GET <url>?action=create&chid=…`
   * when a broadcast starts and `?action=close&chid=…` when it ends (null: none).
   */
  readonly channelWebhookUrl: string | null;
  setChannelWebhookUrl(url: string | null): void;
  readonly recordingEnabled: boolean;
  /**
   * 'broadcast:start' (BroadcastInfo) | 'broadcast:end' (BroadcastInfo) | 'recording' (RecordingInfo, once
   * published) | 'webhook' (WebhookDelivery) | 'recording:expired' (RecordingInfo) | 'request' (SandboxRequestEvent)
   */
  readonly events: EventEmitter;
}

export interface Sandbox {
  /** e.g. http://127.0.0.1:PORT */
  readonly apiUrl: string;
  /** `{ baseUrl: apiUrl, consoleApiUrl: apiUrl + '/console', adminUrl: apiUrl + '/admin' }` */
  readonly endpoints: Endpoints;
  /** e.g. http://127.0.0.1:DPORT */
  readonly downloadOrigin: string;
  /**
   * How long, in real time, a recording stays after its webhook: the retention on the sandbox's clock divided by
   * its time factor (6 h at 10x is 36 min).
   */
  readonly realRetentionMs: number;
  readonly credentials: Credentials;
  readonly control: SandboxControl;
  /** Closes both servers, all sockets and timers; idempotent. */
  close(): Promise<void>;
}
