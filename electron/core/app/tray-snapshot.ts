/**
 * What the tray shows: the live count, the download progress, the health summary and the one reason to look,
 * most urgent first.
 */
import { note, noteText, type HealthState, type Note } from '../../contract.js';
import type { Channel } from '../model.js';
import type { TraySnapshot } from './types.js';

/** A failed or expired recording asks for attention for a day; older ones are history. */
export const ATTENTION_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The tray's one-line reason to look, most urgent first, as a note the tray says in its language; null when all is well. */
export function attentionNote(state: {
  credentialsRefused: boolean;
  pipelineError: string | null;
  /** A change that could not be applied while the previous setup still receives. */
  changeError?: string | null;
  /** Why new webhooks are being refused (503), if they are. */
  refusing?: string | null;
  tunnelState: string | undefined;
  failedRecordings: number;
}): Note | null {
  if (state.credentialsRefused) return note('attnCredentialsRefused');
  if (state.pipelineError) return note('attnNotReceiving');
  if (state.changeError) return note('attnChangeNotApplied');
  if (state.refusing) return note('attnRefusing');
  if (state.tunnelState === 'unreachable') return note('attnUnreachable');
  if (state.tunnelState === 'error') return note('attnTunnelError');
  if (state.failedRecordings > 0) return note('attnFailed', { count: state.failedRecordings });
  return null;
}

/** The tray's view: the live count from the last poll, the pipeline's progress, and one reason to look. */
export function traySnapshotOf(
  live: readonly Channel[],
  host: {
    trayCounts(): { downloading: number; progress: number | null; failed: number };
    readonly error: string | null;
    readonly refusing: string | null;
    readonly pipeline: { supervisor: { status: { state: string } } } | null;
    health(): { state: HealthState; summary: string; summaryNotes?: Note[] };
  },
  state: { credentialsRefused: boolean; receivingPaused: boolean; recordingsFolder: string },
): TraySnapshot {
  const { downloading, progress, failed } = host.trayCounts();
  const { state: healthState, summary, summaryNotes } = host.health();
  return {
    liveCount: live.length,
    liveChannels: live.map((c) => ({ id: c.id, watchers: c.watchers })),
    downloading,
    progress,
    ...attention(
      attentionNote({
        credentialsRefused: state.credentialsRefused,
        pipelineError: host.pipeline ? null : host.error,
        changeError: host.pipeline ? host.error : null,
        refusing: host.refusing,
        tunnelState: host.pipeline?.supervisor.status.state,
        failedRecordings: failed,
      }),
    ),
    // The notes too: the tray says the line in the producer's language (shell-text.ts notesTextIn).
    health: { state: healthState, summary, ...(summaryNotes ? { summaryNotes } : {}) },
    receivingPaused: state.receivingPaused,
    recordingsFolder: state.recordingsFolder,
  };
}

/** The snapshot's attention fields: the English line and its note. */
function attention(said: Note | null): Pick<TraySnapshot, 'attention' | 'attentionNotes'> {
  return { attention: said ? noteText(said) : null, attentionNotes: said ? [said] : null };
}
