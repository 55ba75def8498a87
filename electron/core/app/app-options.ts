/**
 * How the app core is made: its options (the faces and the tests pass them to `createAppCore`), the test-only
 * accessors, the version it reports, and the pacing constants it starts its poller and pipeline with.
 */
import type { Logger } from '../logger.js';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SecretStore } from '../credentials.js';
import type { ConfigError } from '../errors.js';
import type { PipelineOptions, RecordingPipeline } from '../pipeline/pipeline.js';
import type { Sandbox, SandboxOptions } from '../sandbox/index.js';
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
