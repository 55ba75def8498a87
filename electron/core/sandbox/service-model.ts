/**
 * The sandbox service's data shapes, errors and argument checks, apart from the state machine in
 * service.ts that uses them.
 */
import type { RecordingFile } from './recording-file.js';
import type { WebhookShape } from './types.js';
import type { WatcherCurve } from './watchers.js';

/** Options after defaults, as the service uses them. Durations are unscaled (virtual) milliseconds. */
export interface ServiceConfig {
  serviceId: string;
  secret: string;
  searchIndexDelayMs: number;
  retentionMs: number;
  searchLimit: number;
  webhookShape: WebhookShape;
  webhookSpecEncoding: 'json' | 'form';
  webhookDelayMs: number;
  webhookTimeoutMs: number;
  webhookUrl: string | null;
  recordingEnabled: boolean;
  defaultRecordingBytes: number;
}

/** Longest channel ID accepted: far above the documented 1024 so clients can be tested with absurd IDs. */
export const MAX_CHANNEL_ID_LENGTH = 8192;

export interface LiveBroadcast {
  id: string;
  createdAt: Date;
  record: boolean;
  recordingBytes: number;
  curve: WatcherCurve;
  fixedWatchers: number | null;
  /** Sessions counted before the watcher count was last pinned or released. */
  sessionFloor: number;
}

export interface Recording {
  channelId: string;
  random: string;
  file: RecordingFile;
  md5: string;
  createdAt: Date;
  durationSeconds: number;
  /** Virtual time of deletion: retention after the first webhook (or after publication until one is sent). */
  expiresAt: number;
  expiredAt: Date | null;
  webhookSent: boolean;
  cancelExpiry: () => void;
}

/** A file the download server can serve. */
export interface DownloadTarget {
  recording: Recording;
  kind: 'video' | 'thumbnail';
}

/** What a live-list item looks like on the wire. */
export interface LiveListItem {
  id: string;
  serviceId: string;
  createTime: string;
  numOfWatchers: number;
}

/** The channel or recording named in a control call does not exist. */
export class SandboxNotFoundError extends Error {
  override name = 'SandboxNotFoundError';
}

/** The channel ID named in a control call is already taken. */
export class SandboxConflictError extends Error {
  override name = 'SandboxConflictError';
}

/** Throws a TypeError unless `url` is an absolute http(s) URL. */
export function assertHttpUrl(url: string, what: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`${what} must be an absolute http(s) URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`${what} must be an absolute http(s) URL`);
  }
}

export function assertChannelId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_CHANNEL_ID_LENGTH) {
    throw new TypeError(`a channel ID must be a string of 1 to ${MAX_CHANNEL_ID_LENGTH} characters`);
  }
}

export function assertCount(n: unknown, what: string): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new RangeError(`${what} must be a whole number of at least 0`);
  }
}

export function assertDate(d: unknown, what: string): asserts d is Date {
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw new TypeError(`${what} must be a valid Date`);
}
