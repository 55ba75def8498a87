/**
 * What the app core's modules share: its options, the messages it answers with, and small helpers that
 * turn errors and reports into what the views and the log show.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { note, type ErrorView, type GapReport, type HealthState } from '../../contract.js';
import type { SecretStore } from '../credentials.js';
import { ConfigError, TallyError } from '../errors.js';
import { ensureWritableFolder } from '../folder-check.js';
import type { PipelineOptions, RecordingPipeline } from '../pipeline/pipeline.js';
import type { Channel } from '../model.js';
import type { GapReportResult } from '../recordings/gap-report.js';
import type { Sandbox, SandboxOptions } from '../sandbox/index.js';
import type { Settings } from '../settings.js';
import type { SettingsBackendFactory } from '../settings.js';
import type { AppCore, PlatformHooks, TraySnapshot } from './types.js';

export interface AppCoreOptions {
  /** State folder: settings, journal, tokens (appDataDir() or Electron's userData). */
  home: string;
  secrets: SecretStore;
  hooks?: PlatformHooks;
  transport: 'ipc' | 'ws';
  /** Force demo mode (`tally serve --sandbox`, TALLY_DEMO=1) until credentials are entered. */
  demo?: boolean;
  env?: NodeJS.ProcessEnv;
  version?: string;
  /**
   * Set when `secrets` is a stand-in because the OS keychain could not be used: the reason shown to the
   * producer. Credentials then come from the environment only and `credentials:set` refuses.
   */
  keychainUnavailable?: ConfigError | string | null;
  log?: (line: string) => void;
  /** How the settings file is opened: `conf` by default, `electron-store` in the Electron shell. */
  settingsBackend?: SettingsBackendFactory;
  /** Tests: options of the demo sandbox (timeFactor, seed, searchIndexDelayMs...). */
  sandboxOptions?: SandboxOptions;
  /** Demo mode: let the sandbox's web client upload a client recording whenever a broadcast ends (default on). */
  demoWebClient?: boolean;
  /** Tests: the live poll interval, instead of the pollIntervalSec setting. */
  pollIntervalMs?: number;
  /** Tests: pipeline options such as retryBaseMs or ngrokSdk. */
  pipelineOverrides?: Partial<PipelineOptions>;
}

/** The core plus accessors that exist for tests only. */
export interface TallyAppCore extends AppCore {
  readonly testOnly: {
    sandbox(): Sandbox | null;
    pipeline(): RecordingPipeline | null;
  };
}

/** Hidden polling (tray only) runs this many times slower than visible polling. */
export const BACKGROUND_POLL_FACTOR = 4;
/** At most four progress pushes per second and recording. */
export const PROGRESS_INTERVAL_MS = 250;
/** A failed or expired recording asks for attention for a day; older ones are history. */
export const ATTENTION_WINDOW_MS = 24 * 60 * 60 * 1000;

export const NO_CREDENTIALS = note('noCredentials');
export const NOT_STARTED = note('receiverStarting');
export const STOPPED = note('shuttingDown');
export const NO_PUBLIC_URL = note('noPublicUrl');

export type Phase = 'new' | 'running' | 'stopping' | 'stopped';

/** The version in the nearest package.json named tally (source tree, dist or the packaged app). */
export function readPackageVersion(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'tally' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // Not here; look one folder up.
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return '0.0.0';
}

export function errorView(error: unknown): ErrorView {
  if (error instanceof TallyError) return { code: error.code, message: error.message };
  return { code: 'internal', message: 'Something went wrong inside Tally. Try again.' };
}

export function describe(error: unknown): string {
  return error instanceof TallyError ? error.message : error instanceof Error ? error.name : 'unknown error';
}

/** Control characters in hostile text (channel IDs) must not forge log lines. */
export function clean(text: string, max = 120): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function gapView(report: GapReportResult | null): GapReport {
  if (!report) return { since: null, checkedAt: null, missing: [], error: null };
  return {
    since: report.since ? report.since.toISOString() : null,
    checkedAt: report.checkedAt.toISOString(),
    missing: report.missing.map((m) => ({ channelId: m.channelId, endedAt: m.endedAt.toISOString() })),
    error: report.error,
    errorNotes: report.errorNotes ?? null,
  };
}

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

/**
 * Runs tasks one after another, each after the previous settled: everything that changes what runs goes
 * through one queue, so two settings changes never reconcile at the same time.
 */
export class SerialQueue {
  #tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /** Settles when everything queued so far has. */
  idle(): Promise<void> {
    return this.#tail;
  }
}

/**
 * The live list as last fetched, and poll errors reported once per distinct problem rather than on every
 * poll while it lasts.
 */
export class LiveState {
  channels: Channel[] = [];
  #errorKey: string | null = null;

  /** A successful poll: returns the channels to push. */
  succeeded(channels: Channel[]): Channel[] {
    this.channels = channels;
    this.#errorKey = null;
    return channels;
  }

  /** A failed poll: true when this problem is new and worth a push. */
  failed(view: ErrorView): boolean {
    const key = `${view.code}\u0000${view.message}`;
    if (key === this.#errorKey) return false;
    this.#errorKey = key;
    return true;
  }

  /** Another backend or project: errors of the old one no longer apply. */
  forgetError(): void {
    this.#errorKey = null;
  }
}

/** The running pipeline, or the error that says why there is none (still starting, stopping, or failed). */
export function requirePipeline(
  host: { readonly pipeline: RecordingPipeline | null; readonly error: string | null },
  phase: Phase,
): RecordingPipeline {
  if (host.pipeline) return host.pipeline;
  if (phase !== 'running') throw new ConfigError(phase === 'new' ? NOT_STARTED : STOPPED);
  throw new ConfigError(host.error ?? 'The webhook receiver is not running.');
}

/** The tray's view: the live count from the last poll, the pipeline's progress, and one reason to look. */
export function traySnapshotOf(
  live: readonly Channel[],
  host: {
    trayCounts(): { downloading: number; progress: number | null; failed: number };
    readonly error: string | null;
    readonly refusing: string | null;
    readonly pipeline: { supervisor: { status: { state: string } } } | null;
    health(): { state: HealthState; summary: string };
  },
  state: { credentialsRefused: boolean; receivingPaused: boolean; recordingsFolder: string },
): TraySnapshot {
  const { downloading, progress, failed } = host.trayCounts();
  const { state: healthState, summary } = host.health();
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
    health: { state: healthState, summary },
    receivingPaused: state.receivingPaused,
    recordingsFolder: state.recordingsFolder,
  };
}

/**
 * A changed recordings folder is accepted only once it exists and takes a file: saving /proc/x would otherwise
 * wedge the pipeline. Replaces the folder in both the patch and the next settings with its resolved path.
 */
export async function checkFolderChange(
  before: Settings,
  next: Settings,
  patch: { recordingsFolder?: string },
): Promise<void> {
  if (patch.recordingsFolder === undefined || patch.recordingsFolder === before.recordingsFolder) return;
  // Said under the folder field itself: no pointer to the section the producer is already in.
  const folder = await ensureWritableFolder(next.recordingsFolder, { source: note('folderSourceField') });
  patch.recordingsFolder = folder;
  next.recordingsFolder = folder;
}
