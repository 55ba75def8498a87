/**
 * How the app core is made: its options (the faces and the tests pass them to `createAppCore`), the version it
 * reports, and the pacing constants it starts its poller and pipeline with.
 */
import type { Logger } from '../logger.js';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SecretStore } from '../credentials.js';
import type { ConfigError } from '../errors.js';
import type { PipelineOptions, RecordingPipeline } from '../pipeline/pipeline.js';
import type { SandboxOptions } from '../sandbox/index.js';
import type { SandboxStarter } from './demo.js';
import type { PlatformHooks } from './types.js';

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
  /**
   * The event trail for the face's log file (receive/event-trail.ts: webhooks, download attempts, saves, health,
   * tunnel, studio, demo and renderer errors), levelled and scoped. Silent when not given.
   */
  trail?: Logger;
  /** Tests: options of the demo sandbox (timeFactor, seed, searchIndexDelayMs...). */
  sandboxOptions?: SandboxOptions;
  /** Demo mode: let the sandbox's web client upload a client recording whenever a broadcast ends (default on). */
  demoWebClient?: boolean;
  /** Tests: the live poll interval, instead of the pollIntervalSec setting. */
  pollIntervalMs?: number;
  /** Tests: pipeline options such as retryBaseMs or ngrokSdk. */
  pipelineOverrides?: Partial<PipelineOptions>;
  /**
   * Starts the demo sandbox (default: the embedded one, loaded only when demo mode starts). Tests pass one that
   * keeps the sandbox it started, to drive it (broadcasts, faults): the core has no accessor for it.
   */
  startSandbox?: SandboxStarter;
  /**
   * Opens each recording pipeline (default `RecordingPipeline.open`, in the receive service). Tests pass one that
   * keeps what it opened, to reach its inbox or receiver: the core has no accessor for it.
   */
  openPipeline?: (options: PipelineOptions) => Promise<RecordingPipeline>;
}

/** Hidden polling (tray only) runs this many times slower than visible polling. */
export const BACKGROUND_POLL_FACTOR = 4;

/** At most four progress pushes per second and recording. */
export const PROGRESS_INTERVAL_MS = 250;

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
