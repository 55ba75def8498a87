/**
 * What the app core adds around the receive service (receive/receive-service.ts, which opens the pipeline under
 * the port policy): the bounded backoff policy that reopens it when a restart left nothing receiving, and the settings
 * fields named when the receiver cannot listen. Split from pipeline-host.ts.
 */
import { nested, note } from '../../contract.js';
import type { BackoffPolicy } from '../backoff.js';
import { ConfigError } from '../errors.js';

/** The embedded demo sandbox, when the pipeline receives from it instead of the service. */
export interface DemoWebhookTarget {
  control: {
    readonly webhookUrl: string | null;
    setWebhookUrl(url: string | null): void;
    setChannelWebhookUrl(url: string | null): void;
  };
}

/** How the tray counts what the pipeline is doing. */
export interface TrayCounts {
  downloading: number;
  progress: number | null;
  /** Failed or expired within the last day. */
  failed: number;
}

/**
 * The settings file's fields behind a receiver that cannot listen: the message names them, since the app
 * has no form for them (a hand-edited settings.json is the usual cause).
 */
export function withSettingsField(error: unknown): unknown {
  if (!(error instanceof ConfigError) || error.note?.code !== 'receiverCannotListen') return error;
  // The receiver's own sentence stays a note inside this one, so the popover says both in its language.
  return new ConfigError(note('receiverFieldsFix', nested('listen', error.note)), { cause: error });
}

/** First wait before reopening, and the longest: a receiver that cannot open is retried at most once a minute. */
export const REOPEN_FIRST_MS = 1_000;
export const REOPEN_MAX_MS = 60_000;
/**
 * Exact waits (no jitter): one app reopens its own receiver, nobody else retries in step with it. A lasting
 * failure costs one attempt a minute rather than a busy loop (the host retries on a RetryLoop with it).
 */
export const REOPEN_BACKOFF: BackoffPolicy = { baseMs: REOPEN_FIRST_MS, maxMs: REOPEN_MAX_MS };
