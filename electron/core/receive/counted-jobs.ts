/**
 * Which recordings count for the receiver's health, and what of each the judge reads: unfinished ones, those
 * needing attention within ATTENTION_MS, and those saved shorter than announced (kept by the receive service from
 * the pipeline's `changed` events, so judging never reads the journal).
 */
import type { JobState, RecordingJob } from '../recordings/types.js';
import { ATTENTION_MS } from './health.js';

const ATTENTION_STATES: ReadonlySet<JobState> = new Set(['failed', 'expired', 'gone']);

/** What the health judge reads of a recording. */
export type CountedJob = Pick<
  RecordingJob,
  | 'key'
  | 'state'
  | 'error'
  | 'deadline'
  | 'updatedAt'
  | 'channelId'
  | 'bytes'
  | 'totalBytes'
  | 'announcedBytes'
  | 'checks'
>;

export const countedJob = (job: CountedJob): CountedJob => ({
  key: job.key,
  state: job.state,
  error: job.error,
  deadline: job.deadline,
  updatedAt: job.updatedAt,
  channelId: job.channelId,
  bytes: job.bytes,
  totalBytes: job.totalBytes,
  announcedBytes: job.announcedBytes,
  ...(job.checks ? { checks: job.checks } : {}),
});

/** Whether a recording counts for the health now: unfinished, or needing attention within ATTENTION_MS. */
const counts = (state: JobState, updatedAtMs: number, now: number): boolean =>
  state === 'pending' || state === 'downloading' || (ATTENTION_STATES.has(state) && now - updatedAtMs < ATTENTION_MS);

/** The same for a job read: a recording saved shorter than announced counts too, as a warning (issue 31). */
export const jobCounts = (job: CountedJob, now: number): boolean => {
  const updatedAt = Date.parse(job.updatedAt);
  if (counts(job.state, updatedAt, now)) return true;
  return job.state === 'saved' && job.checks?.includes('short') === true && now - updatedAt < ATTENTION_MS;
};
/** Whether a job may count, from its state and last change alone (a saved one is then read for its checks). */
export const mayCount = (state: JobState, updatedAtMs: number, now: number): boolean =>
  counts(state, updatedAtMs, now) || (state === 'saved' && now - updatedAtMs < ATTENTION_MS);
