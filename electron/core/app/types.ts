/**
 * The headless core as the shells see it. The Electron main process and `tally serve` both create one
 * AppCore and expose `handlers` / `events` over their transport (IPC or WebSocket); nothing else of the
 * core is reachable from the renderer.
 */
import type { EventMap, EventName, HealthState, Note, RequestHandlers, ShellText } from '../../contract.js';

/** What only the host shell can do. `tally serve` passes a subset (no native dialogs). */
export interface PlatformHooks {
  /** Shows a file in the OS file manager. */
  revealFile?(path: string): Promise<void> | void;
  /** Opens a file with its default application. */
  openFile?(path: string): Promise<void> | void;
  /** Native folder picker; resolves to the chosen absolute path or null when cancelled. */
  chooseFolder?(current: string): Promise<string | null>;
  writeClipboard?(text: string): Promise<void>;
  /** Applies the launch-at-login setting to the OS. */
  setLaunchAtLogin?(enabled: boolean): Promise<void> | void;
}

/** Summary the tray icon renders from (idle, N live, downloading with progress, needs attention). */
export interface TraySnapshot {
  liveCount: number;
  liveChannels: { id: string; watchers: number | null }[];
  downloading: number;
  /** 0..1 over all active downloads with a known size, or null when none / unknown. */
  progress: number | null;
  /** Something needs the producer: a failed/expired recording, an unreachable webhook, bad credentials. */
  attention: string | null;
  /** `attention` as notes, so the tray says it in the producer's language. */
  attentionNotes?: Note[] | null;
  /** The overall health (the tray icon: ok, warning or error) and its one line (the tooltip). */
  health: { state: HealthState; summary: string; summaryNotes?: Note[] };
  receivingPaused: boolean;
  recordingsFolder: string;
}

export interface AppCoreEvents extends EventMap {
  /** The tray summary changed. */
  'tray:snapshot': TraySnapshot;
  /** A notification worth showing natively (the shell decides per the notification settings). */
  notify: {
    /**
     * `refused`: a client upload was refused; `live`: a channel opened; `missing`: an expected recording never
     * came; `refusing`: new recording webhooks are refused (too many unfinished, or the journal cannot be written).
     */
    kind: 'saved' | 'failed' | 'expired' | 'unreachable' | 'refused' | 'live' | 'missing' | 'refusing' | 'health';
    /** In English, for logs and shells without a language. */
    title: string;
    body: string;
    /** The same words as keys of the shell catalogue (electron/shell-text.ts), for the tray app's language. */
    text?: { title: ShellText; body?: ShellText };
    /** The body as the core's notes (a health reason, a recording's error), said in the tray app's language. */
    bodyNotes?: Note[];
    path?: string;
  };
}

export interface AppCore {
  readonly handlers: RequestHandlers;
  on<E extends keyof AppCoreEvents>(event: E, listener: (payload: AppCoreEvents[E]) => void): () => void;
  traySnapshot(): TraySnapshot;
  /** Live polling runs only while at least one view is visible (popover open / browser tab visible). */
  setVisible(visible: boolean): void;
  start(): Promise<void>;
  /** Graceful stop: receiver closed, downloads paused with part files kept, journal flushed. */
  stop(): Promise<void>;
}

export type { EventName };
