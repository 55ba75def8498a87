/**
 * What the tray shows: the live count, the download progress, the health summary and the one reason to look,
 * most urgent first.
 */
import type { HealthState, Note } from '../../contract.js';
import type { Channel } from '../model.js';
import type { TraySnapshot } from './types.js';

/** A failed or expired recording asks for attention for a day; older ones are history. */
export const ATTENTION_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The tray's one-line reason to look, most urgent first; null when all is well. */
export function attentionText(state: {
  credentialsRefused: boolean;
  pipelineError: string | null;
  /** A change that could not be applied while the previous setup still receives. */
  changeError?: string | null;
  /** Why new webhooks are being refused (503), if they are. */
  refusing?: string | null;
  tunnelState: string | undefined;
  failedRecordings: number;
}): string | null {
  if (state.credentialsRefused) return 'The service refused the credentials';
  if (state.pipelineError) return 'Recordings are not being received';
  if (state.changeError) return 'A change could not be applied';
  if (state.refusing) return 'New recordings are being refused';
  if (state.tunnelState === 'unreachable') return 'The webhook URL is unreachable';
  if (state.tunnelState === 'error') return 'The tunnel could not start';
  if (state.failedRecordings === 1) return '1 recording failed';
  if (state.failedRecordings > 1) return `${state.failedRecordings} recordings failed`;
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
    attention: attentionText({
      credentialsRefused: state.credentialsRefused,
      pipelineError: host.pipeline ? null : host.error,
      changeError: host.pipeline ? host.error : null,
      refusing: host.refusing,
      tunnelState: host.pipeline?.supervisor.status.state,
      failedRecordings: failed,
    }),
    // The notes too: the tray says the line in the producer's language (shell-text.ts notesTextIn).
    health: { state: healthState, summary, ...(summaryNotes ? { summaryNotes } : {}) },
    receivingPaused: state.receivingPaused,
    recordingsFolder: state.recordingsFolder,
  };
}
