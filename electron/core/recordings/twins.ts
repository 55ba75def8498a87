/**
 * Twin jobs (the same recording announced in both webhook forms, see RecordingJob.twin): which of the two stands
 * for the recording where one row or one count is wanted (lists, the tray, Problems, the health).
 */
import type { RecordingJob } from './types.js';

/** Further along first: saved, downloading, waiting without an error, waiting on one, gone, failed, expired. */
function rank(job: RecordingJob): number {
  switch (job.state) {
    case 'saved':
      return 0;
    case 'downloading':
      return 1;
    case 'pending':
      return job.error === null ? 2 : 3;
    case 'gone':
      return 4;
    case 'failed':
      return 5;
    case 'expired':
      return 6;
  }
}

/**
 * The one of two twins that stands for their recording: the one further along (a forged form that is gone
 * does not hide the genuine one on its way); on a tie the later one, which names its twin.
 */
export function standingTwin(a: RecordingJob, b: RecordingJob): RecordingJob {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? a : b;
  return a.twin === b.key ? a : b;
}
