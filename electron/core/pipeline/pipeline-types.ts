/**
 * The recording pipeline's options, events and answers: what `pipelineOptions()` builds and what the app core and
 * `tally listen` listen to. Kept apart from the class so the start/stop order reads on its own.
 */
import type { TunnelStatus } from '../tunnels/types.js';
import type { Logger } from '../logger.js';
import type { SearchResult } from '../model.js';
import type { DownloadOriginPolicy } from '../net/url-policy.js';
import type { GapReportResult } from '../recordings/gap-report.js';
import type { RecordingJob } from '../recordings/types.js';
import type { ConnectToOverride, NgrokSdk, TunnelSettingsInput } from '../tunnels/index.js';
import type { RefusedUploadRecord } from '../uploads/upload-log.js';
import type { UploadedEvent } from '../uploads/upload-route.js';
import type { ChannelHookCall } from '../webhook/channel-hook.js';
import type { Rejection } from '../webhook/receiver.js';
import type { DiskStatus, ExpiredEvent, FailedEvent, ProgressEvent, SavedEvent } from './download-manager.js';
import type { MissingRecording } from './expected-recordings.js';

/** The two service calls the pipeline makes: registering the webhook URL and the gap report's search. */
export interface PipelineApi {
  setRecordHook(url: string): Promise<void>;
  /** The channel lifecycle hook (admin API `webhook`), set to the same URL on registration. */
  setChannelHook?(url: string): Promise<void>;
  search(q: { since: Date; until: Date }): Promise<Pick<SearchResult, 'channels'>>;
}

export interface PipelineOptions {
  /** State folder: journal, tokens, heartbeat, registration record. */
  stateDir: string;
  /** Recordings folder. */
  folder: string;
  policy: DownloadOriginPolicy;
  host?: string;
  port?: number;
  /**
   * When the port is taken by another program: keep everything else running (journal, downloads, heartbeat) and
   * try the port again and again (`listen` events say so) instead of failing the start. The receive service sets
   * it where the public address is fixed (an own URL, no tunnel), so the port never moves.
   */
  waitForPort?: boolean;
  /**
   * Where the public address follows the port: the ports tried, in order, when `port` is taken (0: any free one).
   * Only the receiver tries again; the journal is opened once.
   */
  fallbackPorts?: readonly number[];
  tunnel?: TunnelSettingsInput;
  ngrokAuthtoken?: string | null;
  /** Replaces the ngrok SDK's cloud boundary (tests only). */
  ngrokSdk?: NgrokSdk;
  /**
   * Where a public host is really reached for the public-path check through the tunnel (a tunnel server on this
   * machine whose names, such as `http://<id>.lt.test`, DNS does not know); default: DNS.
   */
  connectTo?: ConnectToOverride;
  /** Register the public webhook URL through the admin API whenever it changes. */
  register?: boolean;
  /** Needed for registration and the gap report; without it both are skipped with a clear message. */
  api?: PipelineApi | null;
  /** Identifies the project for the registration record (the service ID). */
  projectScope?: string | null;
  concurrency?: number;
  fileNameTemplate?: string;
  /** Unfinished recordings beyond which new webhooks are refused (the receiver's DEFAULT_MAX_UNFINISHED_JOBS). */
  maxUnfinishedJobs?: number;
  /** The maxRecordingBytes setting: the cap when neither server nor webhook says how big a recording is. */
  maxRecordingBytes?: number;
  /**
   * The demo's own folder only: after each save, keep its newest this many recordings (keep-newest.ts), and
   * as many web client uploads in its uploads subfolder after each upload.
   */
  keepNewestRecordings?: number;
  segments?: number;
  retryBaseMs?: number;
  /** Longest retry wait, and the pace past the deadline (DownloadManager's retryMaxMs; default 5 min). */
  retryMaxMs?: number;
  /** The stall rule (DownloadManager's stallRule; tests shorten its window). */
  stallRule?: { bytesPerSec: number; windowMs: number } | null;
  /** Free space downloads leave for the journal (DownloadManager's diskFloorBytes; default 5 % of the disk). */
  diskFloorBytes?: number;
  /** How often a recording waiting for disk space looks again (DownloadManager's diskRecheckMs). */
  diskRecheckMs?: number;
  /** Clock of the download deadlines and retries (tests: a recording's 6 hours pass without waiting). */
  now?: () => number;
  /** How long the service keeps a recording after its webhook (default 6 h; the demo sandbox's is its sped-up time). */
  retentionMs?: number;
  tunnelCheckIntervalMs?: number;
  heartbeatIntervalMs?: number;
  /** Web client uploads (`/uploads/<token>`, the SDK's recordUrl); off when absent. */
  uploads?: PipelineUploadOptions;
  /** Where handled failures are written: the app's log file, the CLI's stderr. */
  log?: Logger;
  /**
   * Whether every closed channel should bring a recording webhook (server recording on). `auto` (default):
   * yes once this state folder has received any recording webhook. False for the demo, whose broadcasts record
   * only now and then.
   */
  expectRecordings?: boolean | 'auto';
  /** How long after a channel's close its recording webhook may take before it is flagged (default 10 min). */
  recordingGraceMs?: number;
}

export interface PipelineUploadOptions {
  /** Sub-folder of the recordings folder for client uploads (default `client`). */
  subfolder?: string;
  /** Largest accepted upload in bytes (default 2 GiB). */
  maxBytes?: number;
  /** Uploads in progress at once beyond which one is refused (default DEFAULT_MAX_CONCURRENT_UPLOADS). */
  maxConcurrent?: number;
  /** Page origins allowed to upload from a browser (read on every request). */
  allowedOrigins: () => readonly string[];
  /**
   * Longest a single request may take, uploads included (default 6 h). Node's whole-request timeout also covers
   * webhooks, so it is raised only when uploads are on; stalled uploads are cut off by an idle timeout instead.
   */
  requestTimeoutMs?: number;
}

/** A saved web client upload, as re-emitted by the pipeline (`uploaded`). */
export type PipelineUploadedEvent = Pick<
  UploadedEvent,
  | 'id'
  | 'path'
  | 'bytes'
  | 'contentType'
  | 'fileName'
  | 'origin'
  | 'receivedAt'
  | 'sha256'
  | 'warning'
  | 'channelId'
  | 'track'
>;

/** A refused request; refused uploads also say which recording (from the SDK's file name). */
export interface PipelineRejection extends Rejection {
  upload?: Pick<RefusedUploadRecord, 'channelId' | 'track' | 'fileName' | 'origin'>;
}

export interface PipelineReady {
  /** The loopback webhook URL; null while the receiver cannot listen (its port is taken, see `waitForPort`). */
  localUrl: string | null;
  publicUrl: string | null;
  tunnel: TunnelStatus;
  /** The recordUrl for the web SDK: public when a tunnel is up, else local; null when uploads are off. */
  uploadUrl: string | null;
  /** Loopback upload URL (contains the uploads token), null when uploads are off. */
  localUploadUrl: string | null;
}

export interface PipelineEvents {
  received: [job: RecordingJob, warnings: string[]];
  duplicate: [job: RecordingJob];
  rejected: [rejection: PipelineRejection];
  /**
   * A web client recording was refused or lost on the way in. The web page never learns of it (the SDK reports
   * any answer as uploaded), so this is the producer's only word of it.
   */
  'upload-refused': [record: RefusedUploadRecord];
  progress: [event: ProgressEvent];
  saved: [event: SavedEvent];
  failed: [event: FailedEvent];
  expired: [event: ExpiredEvent];
  /** Disk health of the recordings folder changed (see DownloadManager.diskStatus). */
  disk: [status: DiskStatus];
  /** The state folder (journal, tokens, lock) vanished while running and was made again from memory. */
  'state-restored': [info: { dir: string; jobs: number }];
  /** A damaged token file and copy: a new token, so the registered URL is dead until registered again. */
  'token-replaced': [info: { name: string; why: string }];
  tunnel: [status: TunnelStatus];
  registered: [info: { url: string; channelHookError: string | null }];
  /** The channel lifecycle hook: a channel opened or closed. */
  channel: [call: ChannelHookCall];
  /** A closed channel's recording webhook did not come within the grace period while server recording is on. */
  'recording-missing': [missing: MissingRecording];
  'registration-failed': [info: { url: string; message: string }];
  gaps: [report: GapReportResult];
  /** Any job state change that is durably recorded (for views listing recordings). */
  changed: [job: RecordingJob];
  /** A web client upload was saved (and logged). */
  uploaded: [event: PipelineUploadedEvent];
  /** The receiver started listening, or (with `waitForPort`) could not and tries again. */
  listen: [state: ListenState];
}

/** Whether the receiver listens; while it cannot (its port is taken), why and when it tries again. */
export type ListenState =
  { listening: true; port: number } | { listening: false; port: number; error: Error; retryAt: string | null };
