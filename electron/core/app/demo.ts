/**
 * Demo mode: the app runs against an embedded sandbox instead of the service, so a producer without an
 * account (or a reviewer) sees live channels come and go and real recordings land in a folder. Demo state
 * (journal, tokens, heartbeat) lives in its own folder and is wiped on every demo start: its jobs point at
 * a sandbox that no longer exists after a restart, and must never leak into the real inbox.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireStateLock } from '../recordings/state-lock.js';
import type { Sandbox, SandboxOptions, WebClientSandbox } from '../sandbox/index.js';

/**
 * Demo broadcasts last 2-15 virtual minutes; at 20x they come and go within a minute or so of real time,
 * and the 6-hour retention becomes 18 minutes, still far longer than a local download takes.
 */
export const DEMO_TIME_FACTOR = 20;

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

/** Starts the demo sandbox on loopback with a fresh demo state folder. `overrides` is for tests. */
export async function startDemoSandbox(home: string, overrides: SandboxOptions = {}): Promise<DemoSandbox> {
  await resetDemoState(home);
  // Imported lazily: a producer with credentials never loads the emulator.
  const { startSandbox } = await import('../sandbox/index.js');
  return startSandbox({ demo: true, timeFactor: DEMO_TIME_FACTOR, host: '127.0.0.1', ...overrides });
}

/**
 * Empties the demo state folder, unless another live process runs a demo on it right now: its journal is
 * not ours to delete (our pipeline then fails to open with the lock's message, which says what to do).
 */
export async function resetDemoState(home: string): Promise<void> {
  const dir = demoStateDir(home);
  await mkdir(dir, { recursive: true });
  let lock;
  try {
    lock = await acquireStateLock(dir, 'Tally demo');
  } catch {
    return;
  }
  await lock.release();
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
}

/**
 * Starts the demo: the sandbox, and unless turned off its web client, which uploads a client recording like
 * the web SDK does whenever a broadcast ends, from its own page origin (which demo mode allows).
 */
export async function startDemo(
  home: string,
  overrides: SandboxOptions | undefined,
  webClient: boolean,
  uploadUrl: () => string | null,
): Promise<{ sandbox: DemoSandbox; detachWebClient: (() => void) | null }> {
  const sandbox = await startDemoSandbox(home, overrides);
  if (!webClient) return { sandbox, detachWebClient: null };
  const { attachDemoWebClient } = await import('../sandbox/index.js');
  return { sandbox, detachWebClient: attachDemoWebClient(sandbox, uploadUrl, { origin: sandbox.apiUrl }) };
}
