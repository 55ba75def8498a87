/**
 * TEST HELPER (not used by the app): a tray snapshot as the app core pushes it when nothing is live, downloading or
 * wrong, for the tray and update specs to change only what they test.
 */
import type { TraySnapshot } from '../../../electron/core/app/types.js';

/** Nothing live or downloading, all well, receiving into `/home/me/Videos/Tally`; `patch` says what differs. */
export function traySnapshot(patch: Partial<TraySnapshot> = {}): TraySnapshot {
  return {
    liveCount: 0,
    liveChannels: [],
    downloading: 0,
    progress: null,
    attention: null,
    health: { state: 'ok', summary: 'All is well: webhooks reach Tally and recordings are saved.' },
    receivingPaused: false,
    recordingsFolder: '/home/me/Videos/Tally',
    ...patch,
  };
}
