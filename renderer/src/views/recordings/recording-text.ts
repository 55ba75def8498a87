/**
 * How one recording reads in the Recordings list: its title, what happened to it, its progress. Plain functions
 * of a RecordingView (split from RecordingsView.svelte), in the producer's language.
 */
import type { RecordingView } from '../../../../electron/contract.js';
import { daysBetween, localMidnight } from '../../lib/days.js';
import { formatBytes, formatDuration, formatTime, locale, t } from '../../lib/i18n.js';
import { coreText } from '../../lib/notes.js';

/** What a producer can do with a finished recording (RecordingActions.svelte). */
export type RecordingAction = 'retry' | 'open' | 'reveal' | 'copyPath' | 'remove';

/** "main-stage · 09:41": the channel and when its recording arrived, instead of a raw file name. */
export function titleOf(r: RecordingView, nested = false): string {
  const time = formatTime(r.receivedAt);
  if (r.source === 'client') {
    // The "Web client" badge says what it is: the title says which stream, and of which channel unless it is
    // listed under its broadcast already.
    const track = r.track ? t(`recordings.trackTitles.${r.track}`) : t('recordings.clientTitle');
    if (nested || !r.channelId) return t('recordings.title', { channel: track, time });
    return t('recordings.clientChannelTitle', { channel: r.channelId, track, time });
  }
  return t('recordings.title', { channel: r.channelId || t('recordings.clientTitle'), time });
}

/**
 * A saved recording whose download passed a check (its size against the server's or the webhook's, its MD5
 * against the S3 ETag). One saved with nothing to check against is only "Saved".
 */
export function isVerified(r: RecordingView): boolean {
  return r.state === 'saved' && (r.checks?.length ?? 0) > 0 && !r.checks?.includes('short');
}

/** The short state tag: "Verified" where the checks passed, else the state's own name. */
export function stateLabel(r: RecordingView): string {
  if (r.state === 'saved' && r.checks?.includes('short')) return t('recordings.states.short');
  return isVerified(r) ? t('recordings.states.verified') : t(`recordings.states.${r.state}`);
}

function savedText(r: RecordingView): string {
  if (r.source === 'client') return t('recordings.savedUpload');
  // Saved before Tally kept what it checked: nothing to say either way.
  if (r.checks === undefined) return t('recordings.states.saved');
  // Shorter than the webhook announced, saved because the server kept sending that much (issue 31).
  if (r.checks.includes('short')) {
    return t('recordings.savedShort', { size: formatBytes(r.bytes ?? 0), announced: formatBytes(r.totalBytes ?? 0) });
  }
  if (!isVerified(r)) return t('recordings.savedUnchecked');
  // A size alone is no proof of the bytes (a server can send the right length of the wrong data): said as such.
  if (r.checks?.length === 1 && r.checks[0] === 'size') return t('recordings.savedSizeOnly');
  const checks = (r.checks ?? []).map((c) => t(`recordings.checks.${c}`)).join(', ');
  return t('recordings.savedVerified', { checks });
}

/** The core's reason for a recording's state, in the popover's language. */
function reasonOf(r: RecordingView): string | null {
  return coreText(r.error, r.errorNotes);
}

/** What happened to a finished recording, in a sentence fragment. */
export function detailsOf(r: RecordingView): string {
  switch (r.state) {
    case 'saved':
      return joined([savedText(r), r.bytes === null ? null : formatBytes(r.bytes), r.fileName]);
    case 'expired':
      return reasonOf(r) ?? t('recordings.expiredReason');
    case 'gone':
      return reasonOf(r) ?? t('recordings.goneReason');
    case 'refused':
      return joined([
        r.track ? t(`recordings.tracks.${r.track}`) : null,
        reasonOf(r) ?? t('recordings.refusedReason'),
        r.fileName,
      ]);
    default:
      return joined([
        reasonOf(r) ?? t('recordings.failedReason'),
        r.attempts > 1 ? t('recordings.attempts', { count: r.attempts }) : null,
      ]);
  }
}

export function percent(r: RecordingView): number | null {
  return r.totalBytes && r.bytes !== null ? Math.min(100, Math.round((r.bytes / r.totalBytes) * 100)) : null;
}

const joined = (parts: (string | null)[]) => parts.filter(Boolean).join(' · ');

/** "42 MB of 120 MB · 3.2 MB/s · 25s left" */
export function stats(r: RecordingView): string {
  // Waiting after an error: no rate or time left to speak of, only why it waits.
  const downloading = r.state === 'downloading' && r.error === null;
  return joined([
    progressText(r),
    downloading && r.rate ? t('recordings.rate', { rate: formatBytes(r.rate) }) : null,
    downloading && r.etaSeconds !== null ? t('recordings.eta', { time: formatDuration(r.etaSeconds) }) : null,
  ]);
}

export function progressText(r: RecordingView): string {
  // A job with an error is between attempts: say why, the deadline beside it says how long is left.
  const reason = reasonOf(r);
  if (reason && (r.state === 'pending' || r.state === 'downloading')) return t('recordings.retrying', { reason });
  if (r.state === 'pending') return t('recordings.pending');
  const done = formatBytes(r.bytes ?? 0);
  return r.totalBytes
    ? t('recordings.progress', { done, total: formatBytes(r.totalBytes) })
    : t('recordings.progressUnknown', { done });
}

/** "Today", "Yesterday" or the weekday and date of a local day (its midnight, in ms). */
export function dayLabel(day: number, now: number): string {
  const diff = daysBetween(day, localMidnight(now));
  if (diff === 0) return t('recordings.today');
  if (diff === 1) return t('recordings.yesterday');
  return new Intl.DateTimeFormat(locale(), { weekday: 'long', month: 'long', day: 'numeric' }).format(day);
}
