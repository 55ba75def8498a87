/**
 * Demo mode: the app runs against an embedded sandbox instead of the service, so a producer without an
 * account (or a reviewer) sees live channels come and go and real recordings land in a folder. Demo state
 * (journal, tokens, heartbeat) lives in its own folder and is wiped on every demo start: its jobs point at
 * a sandbox that no longer exists after a restart, and must never leak into the real inbox. What the previous
 * run left goes with it (demo-leftovers.ts): the demo's own recordings folder starts empty, like its list, and
 * a folder the producer chose keeps its saved recordings but loses the partial downloads nothing will finish.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { emptyDemoFolder, rememberDemoFolder, removeDemoParts } from './demo-leftovers.js';
import { acquireStateLock } from '../recordings/state-lock.js';
import type { Sandbox, SandboxOptions, WebClientSandbox } from '../sandbox/index.js';
import type { PipelineDemo } from '../pipeline/options.js';

/** The embedded demo sandbox, when the pipeline receives from it instead of the service. */
export interface DemoWebhookTarget {
  control: {
    readonly webhookUrl: string | null;
    setWebhookUrl(url: string | null): void;
    setChannelWebhookUrl(url: string | null): void;
  };
}

/**
 * Demo broadcasts last 20-60 virtual minutes; at 10x they run two to six real minutes, like short segments
 * of a studio day, and the 6-hour retention becomes 36 minutes, still far longer than a paced download.
 */
export const DEMO_TIME_FACTOR = 10;
/**
 * Demo downloads are paced to this rate: a loopback download of a few megabytes would otherwise finish
 * in milliseconds and the producer would never see a download in progress.
 */
export const DEMO_DOWNLOAD_BYTES_PER_SEC = 1_000_000;
/** Demo recordings kept in the default demo folder while a demo runs; older ones are deleted. */
export const DEMO_RECORDINGS_KEPT = 30;

/** The embedded sandbox with its web client (which uploads client recordings like the web SDK). */
export type DemoSandbox = Sandbox & WebClientSandbox;

/** State folder of demo mode, beside the real state in `home`. */
export function demoStateDir(home: string): string {
  return join(home, 'demo');
}

/** Where demo recordings go unless the producer chose a folder. */
export function demoRecordingsDir(home: string): string {
  return join(home, 'demo-recordings');
}

/** Starts a sandbox from its options: the embedded one by default (see AppCoreOptions.startSandbox). */
export type SandboxStarter = (options: SandboxOptions) => Promise<DemoSandbox>;

/**
 * Starts the demo sandbox on loopback with a fresh demo state folder, cleaning what the previous demo left.
 * `folder`: where this run saves (a producer's `--folder`; the demo's own folder by default). `overrides` and
 * `start` are for tests (the sandbox's pace and seed; a starter that keeps the sandbox to drive it).
 */
export async function startDemoSandbox(
  home: string,
  overrides: SandboxOptions = {},
  folder: string = demoRecordingsDir(home),
  start?: SandboxStarter,
): Promise<DemoSandbox> {
  await resetDemoState(home, folder);
  // Imported lazily: a producer with credentials never loads the emulator.
  const startSandbox = start ?? (await import('../sandbox/index.js')).startSandbox;
  const options = { demo: true, timeFactor: DEMO_TIME_FACTOR, host: '127.0.0.1', ...overrides };
  const sandbox = await startSandbox(options);
  // Only when the demo runs on its own: tests that drive the sandbox set their own pace.
  if (options.demo) sandbox.control.setFaults('download', { rateBytesPerSec: DEMO_DOWNLOAD_BYTES_PER_SEC });
  return sandbox;
}

/**
 * Empties the demo state folder and cleans what its run left (its unfinished downloads' parts wherever it saved,
 * and the demo's own folder), unless another live process runs a demo on it right now: its journal and files
 * are not ours to delete (our pipeline then fails to open with the lock's message, which says what to do).
 * `folder`: where the new run saves, noted for the next start.
 */
export async function resetDemoState(home: string, folder: string = demoRecordingsDir(home)): Promise<void> {
  const dir = demoStateDir(home);
  await mkdir(dir, { recursive: true });
  let lock;
  try {
    lock = await acquireStateLock(dir, 'Tally demo');
  } catch {
    return;
  }
  try {
    await removeDemoParts(dir, demoRecordingsDir(home));
    // Only the demo's own folder: recordings in a folder the producer chose are never deleted.
    await emptyDemoFolder(demoRecordingsDir(home));
  } finally {
    await lock.release();
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await rememberDemoFolder(dir, folder);
}

/**
 * The running demo: the sandbox, and unless turned off its web client, which uploads a client recording like
 * the web SDK does whenever a broadcast ends, from its own page origin (which demo mode allows). Started and
 * closed as one, so the web client never outlives the sandbox it belongs to.
 */
export class DemoRunner {
  #sandbox: DemoSandbox | null = null;
  #detachWebClient: (() => void) | null = null;

  constructor(
    private readonly options: {
      home: string;
      overrides: SandboxOptions | undefined;
      /** Starts the sandbox (default: the embedded one); see AppCoreOptions.startSandbox. */
      start?: SandboxStarter | undefined;
      webClient: boolean;
      /** Where the web client uploads: the receiver's local upload URL once the pipeline runs. */
      uploadUrl: () => string | null;
      /** Where the demo's recordings are saved (the demo's own folder unless the producer chose one). */
      folder?: () => string;
    },
  ) {}

  /** The sandbox while the demo runs, else null. */
  get sandbox(): DemoSandbox | null {
    return this.#sandbox;
  }

  async start(): Promise<DemoSandbox> {
    await this.close();
    const sandbox = await startDemoSandbox(
      this.options.home,
      this.options.overrides,
      this.options.folder?.(),
      this.options.start,
    );
    this.#sandbox = sandbox;
    if (this.options.webClient) {
      const { attachDemoWebClient } = await import('../sandbox/index.js');
      this.#detachWebClient = attachDemoWebClient(sandbox, this.options.uploadUrl, { origin: sandbox.apiUrl });
    }
    return sandbox;
  }

  async close(): Promise<void> {
    const sandbox = this.#sandbox;
    this.#sandbox = null;
    this.#detachWebClient?.();
    this.#detachWebClient = null;
    if (sandbox) await sandbox.close();
  }
}

/**
 * What the pipeline needs to receive from a demo sandbox: its own state and recordings folders (its jobs point
 * at a server that is gone after the run, so they never enter the real inbox) and its origins.
 */
export function demoPipeline(
  home: string,
  sandbox: Pick<Sandbox, 'downloadOrigin' | 'apiUrl' | 'realRetentionMs'>,
): PipelineDemo {
  return {
    retentionMs: sandbox.realRetentionMs,
    stateDir: demoStateDir(home),
    folder: demoRecordingsDir(home),
    downloadOrigin: sandbox.downloadOrigin,
    apiUrl: sandbox.apiUrl,
    // Also while the demo runs, not only when it starts: a long demo once filled 639 MB in 30 minutes.
    keepRecordings: DEMO_RECORDINGS_KEPT,
  };
}
