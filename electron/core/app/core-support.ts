/**
 * What the app core's modules share: its options, the messages it answers with, and small helpers that
 * turn errors and reports into what the views and the log show.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorView, GapReport } from '../../contract.js';
import type { SecretStore } from '../credentials.js';
import { ConfigError, TallyError } from '../errors.js';
import type { PipelineOptions, RecordingPipeline } from '../pipeline/pipeline.js';
import type { GapReportResult } from '../recordings/gap-report.js';
import type { Sandbox, SandboxOptions } from '../sandbox/index.js';
import type { SettingsBackendFactory } from '../settings.js';
import type { AppCore, PlatformHooks } from './types.js';

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
  keychainUnavailable?: string | null;
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

export const NO_CREDENTIALS =
  'No credentials: enter the service ID and secret in Settings (or set TALLY_SERVICE_ID and TALLY_SECRET), or turn on demo mode.';
export const NOT_STARTED = 'Tally is still starting; try again in a moment.';
export const STOPPED = 'Tally is shutting down.';
export const NO_PUBLIC_URL = 'Choose a tunnel provider first: the service cannot reach a loopback URL.';

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

export function isAddressInUse(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return error instanceof ConfigError && cause?.code === 'EADDRINUSE';
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
  };
}
