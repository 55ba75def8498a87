/**
 * How the tray counts what the pipeline is doing: downloads in progress and their overall progress, and the
 * recordings that failed, expired, went missing or were refused within the attention window.
 */
import type { GapView } from '../../contract.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import type { ProgressThrottle } from './recording-views.js';
import { ATTENTION_WINDOW_MS } from './tray-snapshot.js';

/** How the tray counts what the pipeline is doing. */
export interface TrayCounts {
  downloading: number;
  progress: number | null;
  /** Failed or expired within the last day. */
  failed: number;
}

/** What the tray's counts are made from: the running pipeline, the live progress and the host's own lists. */
export interface TrayCountInput {
  pipeline: RecordingPipeline | null;
  progress: Pick<ProgressThrottle, 'get'>;
  /** Closed channels whose recording webhook never came (the live twin of the gap report). */
  liveMissing: readonly GapView[];
  /** Whether the producer removed a row from the list. */
  hidden: (key: string) => boolean;
}

export function trayCountsOf(input: TrayCountInput, now: number): TrayCounts {
  let downloading = 0;
  let done = 0;
  let total = 0;
  let failed = 0;
  // Only the jobs that count are read (the index filters on state and time): the tray stays cheap with a big journal.
  const counted = (state: string, updatedAt: number) =>
    state === 'downloading' || ((state === 'failed' || state === 'expired') && now - updatedAt < ATTENTION_WINDOW_MS);
  const inbox = input.pipeline?.inbox;
  for (const job of inbox?.where(counted) ?? []) {
    // Twins count once, as the one further along (a forged form failing while the genuine one is fine is no failure).
    if (inbox && inbox.standing(job).job.key !== job.key) continue;
    if (job.state === 'downloading') {
      downloading++;
      const live = input.progress.get(job.key);
      const size = live?.total ?? job.totalBytes ?? job.announcedBytes;
      if (size) {
        total += size;
        done += Math.min(size, live?.bytes ?? job.bytes ?? 0);
      }
    } else if (
      (job.state === 'failed' || job.state === 'expired') &&
      now - Date.parse(job.updatedAt) < ATTENTION_WINDOW_MS
    ) {
      failed++;
    }
  }
  for (const m of input.liveMissing) if (now - Date.parse(m.endedAt) < ATTENTION_WINDOW_MS) failed++;
  for (const record of input.pipeline?.uploadLog?.listRefused() ?? []) {
    if (now - Date.parse(record.at) < ATTENTION_WINDOW_MS && !input.hidden(`refused:${record.id}`)) failed++;
  }
  return { downloading, progress: downloading > 0 && total > 0 ? done / total : null, failed };
}
