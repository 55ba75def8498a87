/**
 * TEST HELPER (not used by the app): what the app core specs share. A temp state folder and demo cores that
 * are given back after each test (call `runCleanups` in `afterEach`), and waiting on the core's events.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RecordingPipeline } from '../../../electron/core/pipeline/pipeline.js';
import type { Sandbox } from '../../../electron/core/sandbox/index.js';
import { openSettingsStore, type SettingsPatch } from '../../../electron/core/settings.js';
import type { AppCoreOptions, AppCore } from '../../../electron/core/app/app-core.js';
import { createDemoCore, partsOf } from './demo-core.js';
import type { AppCoreEvents } from '../../../electron/core/app/types.js';
import type { RecordingView } from '../../../electron/contract.js';

export const cleanups: (() => Promise<unknown>)[] = [];

export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export async function tempHome(settings: SettingsPatch = {}): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'tally-core-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  // Port 0 and a folder in the temp home: parallel test files must not fight over 8787 or ~/Videos.
  openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: join(home, 'recordings'), ...settings });
  return home;
}

export async function makeCore(home: string, extra: Partial<AppCoreOptions> = {}): Promise<AppCore> {
  const core = await createDemoCore(home, { pollIntervalMs: 40, pipelineOverrides: { retryBaseMs: 20 }, ...extra });
  cleanups.push(() => core.stop());
  return core;
}

/** Resolves with the first payload of `event` that satisfies `test`. */
export function next<E extends keyof AppCoreEvents>(
  core: AppCore,
  event: E,
  test: (payload: AppCoreEvents[E]) => boolean = () => true,
): Promise<AppCoreEvents[E]> {
  return new Promise((resolve) => {
    const off = core.on(event, (payload) => {
      if (!test(payload)) return;
      off();
      resolve(payload);
    });
  });
}

/** Resolves once `done` holds for the Recordings list: checked now and on every `recordings:changed` push. */
export function untilRecordings(core: AppCore, done: (rows: RecordingView[]) => boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const check = () => {
      core.handlers['recordings:list']().then((rows) => {
        if (settled || !done(rows)) return;
        settled = true;
        off();
        resolve();
      }, reject);
    };
    const off = core.on('recordings:changed', check);
    check();
  });
}

export function collect<E extends keyof AppCoreEvents>(
  core: AppCore,
  event: E,
): { at: number; payload: AppCoreEvents[E] }[] {
  const seen: { at: number; payload: AppCoreEvents[E] }[] = [];
  core.on(event, (payload) => seen.push({ at: Date.now(), payload }));
  return seen;
}

/** The demo sandbox a core made by `makeCore` started last. */
export function sandboxOf(core: AppCore): Sandbox {
  return partsOf(core).sandbox;
}

/** The recording pipeline a core made by `makeCore` opened last. */
export function pipelineOf(core: AppCore): RecordingPipeline {
  return partsOf(core).pipeline;
}

/** A broadcast recorded and ended in the demo sandbox, received through the webhook and saved byte for byte. */
export async function receivesAndSaves(core: AppCore, home: string, channelId: string): Promise<void> {
  const sandbox = sandboxOf(core);
  const saved = next(core, 'recordings:changed', (v) => v.channelId === channelId && v.state === 'saved');
  sandbox.control.startBroadcast({ id: channelId, record: true, recordingBytes: 50_000 });
  const recording = await sandbox.control.endBroadcast(channelId);
  expect(sandbox.control.webhookDeliveries().at(-1)).toMatchObject({ channelId, status: 200 });
  const view = await saved;
  const bytes = await readFile(join(home, 'recordings', view.fileName as string));
  expect(createHash('sha256').update(bytes).digest('hex')).toBe(await recording?.sha256());
}
