/**
 * Health as every face shows it (tray icon, popover header, `tally status`, NDJSON `health` lines): whatever can
 * cost a recording, measured by the core's receive service (core/receive/health.ts) and judged ok, warning or
 * error, each with a one-line reason and the action to take. The overall state is the worst component's.
 * The core's own vocabulary like notes.ts: electron/contract.ts re-exports it, so it stays free of Node and Electron.
 */
import type { Note } from './notes.js';

export type HealthState = 'ok' | 'warning' | 'error';

/** The parts of the path from a finished broadcast to a saved file, in the order a webhook meets them. */
export const HEALTH_COMPONENTS = [
  'receiver',
  'publicPath',
  'registration',
  'downloads',
  'disk',
  'keychain',
  'studio',
] as const;
export type HealthComponentId = (typeof HEALTH_COMPONENTS)[number];

export interface HealthComponentView {
  id: HealthComponentId;
  state: HealthState;
  /** One line: what is wrong, or what is fine. English (the log, the CLI); `reasonNotes` to translate. */
  reason: string;
  reasonNotes: Note[];
  /** What to do about it (a setting, a flag, a button), when something can be done. */
  action: string | null;
  actionNotes: Note[] | null;
}

/** Where the webhook receiver listens, for "forward to 127.0.0.1:<port>" and the port's error. */
export interface ReceiverAddressView {
  host: string;
  /** The port it listens on now; null while it cannot listen. */
  port: number | null;
  /** The port the settings (or `--port`) ask for. */
  configuredPort: number;
  /**
   * Whether the public address follows the port (ngrok, localtunnel, the demo sandbox), so another free port may
   * be used when the configured one is taken; false for an own URL or no tunnel, where the port never moves.
   */
  portFollows: boolean;
}

/** One recording counted under `problems`, named so a producer knows which and why (`tally status`, NDJSON). */
export interface ProblemRecordingView {
  channelId: string;
  /** The recording's key (`tally retry` takes it, or the channel ID). */
  key: string;
  /** `failed`, `expired`, `gone`, `refused`, or `pending`/`downloading` while it waits after an error. */
  state: string;
  /** The last error, in English; null when none was recorded. */
  reason: string | null;
  /** When Tally tries it again on its own (ISO), or null when nothing is scheduled. */
  nextAttemptAt: string | null;
}

/**
 * One problem recording in one English line (`tally status`, `tally doctor`): channel, recording, what state,
 * why, and when Tally tries again (`timeOf` writes that time as the face shows times).
 */
export function problemRecordingText(p: ProblemRecordingView, timeOf: (iso: string) => string): string {
  // Waiting after an error is "failing": Tally still tries it (the other states are final until a retry).
  const said = p.state === 'pending' || p.state === 'downloading' ? 'failing' : p.state;
  const reason = p.reason ? ` ${/[.!?]$/.test(p.reason) ? p.reason : `${p.reason}.`}` : '';
  const next = p.nextAttemptAt ? ` Next attempt at ${timeOf(p.nextAttemptAt)}.` : '';
  return `${p.channelId} (recording ${p.key}) ${said}:${reason}${next}`;
}

/** How many recordings a health view names under `problemRecordings`; the rest are counted in `moreProblems`. */
export const PROBLEMS_LISTED = 5;

export interface HealthView {
  /** The worst component's state. */
  state: HealthState;
  /** The worst component's reason (the tray tooltip, the header line); "All is well" when everything is ok. */
  summary: string;
  summaryNotes: Note[];
  components: HealthComponentView[];
  receiver: ReceiverAddressView;
  /**
   * A studio member: it mirrors the studio's recordings and runs no receiver of its own, so `receiver` says
   * nothing (`tally status` and the popover describe it as a member). Absent on a receiver.
   */
  member?: true;
  /** Recordings that need the producer (see `recordingNeedsAttention`). */
  problems: number;
  /**
   * The first of them (PROBLEMS_LISTED at most), those Tally still tries first, soonest deadline first (a studio
   * member names its failing mirrors); absent where a face does not know them one by one.
   */
  problemRecordings?: ProblemRecordingView[];
  /** Problems beyond `problemRecordings` (refused uploads and missed recordings among them). */
  moreProblems?: number;
  checkedAt: string;
}

const WORST: Record<HealthState, number> = { ok: 0, warning: 1, error: 2 };

/** The worse of two states. */
export function worseHealth(a: HealthState, b: HealthState): HealthState {
  return WORST[b] > WORST[a] ? b : a;
}

/**
 * Whether a recording counts under Problems: it failed, expired, was refused or is gone from the service, or it
 * waits for another attempt after an error. One rule for the popover's filter, the tray and `tally status`.
 */
export function recordingNeedsAttention(r: { state: string; error: string | null }): boolean {
  return (
    r.state === 'failed' ||
    r.state === 'expired' ||
    r.state === 'refused' ||
    r.state === 'gone' ||
    ((r.state === 'pending' || r.state === 'downloading') && r.error !== null)
  );
}
