/**
 * Shared vocabulary of the recording pipeline: the webhook receiver writes jobs into the durable inbox,
 * the download manager moves them through their states. Both sides code against these types only.
 */
import type { Note } from '../notes.js';
import type { ObjectVersion } from '../download/origin-probe.js';

/** Where a job stands. `saved`, `expired` and `failed` with `final: true` are terminal. */
export type JobState = 'pending' | 'downloading' | 'saved' | 'failed' | 'expired' | 'gone';

/** A recording the service told us about, as kept in the durable inbox. */
export interface RecordingJob {
  /** Dedupe key: the same recording announced twice (any shape) maps to the same key. */
  key: string;
  channelId: string;
  /** Download URL as received (already checked against the download-origin policy). */
  url: string;
  /** ISO time the webhook was durably accepted. */
  receivedAt: string;
  /**
   * ISO time after which the service deletes the file (receivedAt + 6 h), moved by every wall-clock step the
   * download queue sees while running, so it keeps naming the same moment (core/time.ts).
   */
  deadline: string;
  /**
   * The same deadline on the service's own clock (ISO, from the `Date` header of the origin's first dated answer;
   * never moved by a local clock step). Once known, the 6 hours are judged by it against the origin's `Date`,
   * also after a restart whose stored `deadline` a step of the local clock made wrong.
   */
  serviceDeadline?: string | null;
  /** Size in bytes announced by the webhook (`filesize`), if any. */
  announcedBytes: number | null;
  /** Duration as announced by the webhook (free text), if any. */
  duration: string | null;
  thumbnail: string | null;
  /** Which webhook shape delivered it: 'json' | 'get' | 'form' | 'spec' ... (informational). */
  shape: string;
  state: JobState;
  /** Download attempts so far. */
  attempts: number;
  /** Final path once saved (absolute). */
  path: string | null;
  /** Bytes on disk once saved, or bytes so far while downloading (last checkpoint). */
  bytes: number | null;
  /** Expected total size once known (Content-Length / filesize). */
  totalBytes: number | null;
  /**
   * Once saved: what the download was checked against (its size from the server or the webhook, its MD5 from
   * the S3 ETag). Empty when nothing could be checked; absent in jobs saved before Tally recorded it.
   */
  checks?: ('size' | 'md5' | 'repeat' | 'short')[];
  /** Human-readable reason for failed/expired, or the last transient error while retrying. */
  error: string | null;
  /** `error` as notes the popover translates; absent in jobs written before Tally recorded them. */
  errorNotes?: Note[] | null;
  /** ISO time of the last state change. */
  updatedAt: string;
  /**
   * The key of the other job of the same recording, announced in the other webhook form (the legacy URL without
   * the random segment and the current one with it), set on the later of the two. Both are kept, so a forged
   * webhook of one form never stands in for the genuine one of the other; the first to be saved saves both.
   */
  twin?: string;
  /** Saved without a download of its own: the file is the one its twin (this key) downloaded and verified. */
  savedBy?: string;
  /**
   * Once saved: which object version the origin served (its ETag, Last-Modified and size). A later webhook for the
   * same URL is a duplicate only when the origin still serves this version (issue 31: channel IDs are reused, and
   * legacy URLs name only the channel); absent in jobs saved before Tally recorded it (then the size decides).
   */
  origin?: ObjectVersion;
  /**
   * Its twin saved another object version than this job's URL names: not one recording after all (a new broadcast
   * of a reused channel ID, issue 31). The link is dropped (each downloads, is listed and counted on its own).
   */
  twinDiffers?: true;
  /** A later recording under a URL already saved: the key of the job it follows (informational). */
  follows?: string;
}

/** The fields a new job starts from; the inbox fills in key, state, attempts and times. */
export interface NewRecording {
  channelId: string;
  url: string;
  /** `url` as already parsed (the receiver's), so it is parsed once per webhook; never stored. */
  parsedUrl?: URL;
  announcedBytes: number | null;
  duration: string | null;
  thumbnail: string | null;
  shape: string;
}

/** What the download manager needs from the durable inbox. */
export interface JobStore {
  list(): RecordingJob[];
  /** Keys of the jobs in these states (all when omitted), oldest first, without materialising the jobs. */
  keys(states?: readonly JobState[]): string[];
  get(key: string): RecordingJob | undefined;
  /** The key of the job's twin (see RecordingJob.twin) while both are known; absent where stores hold no twins. */
  twinOf?(key: string): string | undefined;
  /** Durably applies a patch (fsync'd before the promise resolves) and returns the updated job. */
  update(
    key: string,
    patch: Partial<Omit<RecordingJob, 'key' | 'channelId' | 'url' | 'receivedAt' | 'twin'>>,
  ): Promise<RecordingJob>;
  /** Fires after a new (non-duplicate) job is durably added. */
  on(event: 'added', listener: (job: RecordingJob) => void): unknown;
  off(event: 'added', listener: (job: RecordingJob) => void): unknown;
}

/** Retention promised by the service: the file is deleted 6 hours after the webhook. */
export const RETENTION_MS = 6 * 60 * 60 * 1000;
