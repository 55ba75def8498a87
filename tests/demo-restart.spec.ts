/**
 * A restarted demo cleans what the previous run left (a trial as a new user restarted `tally serve --sandbox` and
 * found a fresh, empty list beside the folder's older recordings and a `.part` nothing would finish): its journal
 * cannot outlive its sandbox, so its own folder starts empty with it; a folder the producer chose keeps its saved
 * recordings and loses only the unfinished parts. Demo app cores over their embedded sandbox, real files.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSettingsStore } from '../electron/core/settings.js';
import type { AppCore } from '../electron/core/app/app-core.js';
import { createDemoCore } from './support/app/demo-core.js';
import { cleanups, next, runCleanups, sandboxOf } from './support/app/core-helpers.js';

afterEach(() => runCleanups());

async function core(home: string): Promise<AppCore> {
  const made = await createDemoCore(home, { pollIntervalMs: 40 });
  cleanups.push(() => made.stop());
  await made.start();
  return made;
}

/** A first demo run that saves one recording and stops in the middle of downloading another. */
async function runLeavingAPart(home: string): Promise<void> {
  const first = await core(home);
  const sandbox = sandboxOf(first);
  const saved = next(first, 'recordings:changed', (v) => v.channelId === 'kept' && v.state === 'saved');
  sandbox.control.startBroadcast({ id: 'kept', record: true, recordingBytes: 40_000 });
  await sandbox.control.endBroadcast('kept');
  await saved;
  // Slow enough that the stop below comes in the middle of the download.
  sandbox.control.setFaults('download', { rateBytesPerSec: 20_000 });
  const started = next(first, 'recordings:progress', (v) => v.channelId === 'cut' && (v.bytes ?? 0) > 0);
  sandbox.control.startBroadcast({ id: 'cut', record: true, recordingBytes: 4_000_000 });
  await sandbox.control.endBroadcast('cut');
  await started;
  await first.stop();
}

const parts = (names: string[]) => names.filter((n) => n.includes('.part'));

describe('a restarted demo', () => {
  it('starts with its own folder as empty as its list: no older recording, no stranded .part', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-demo-restart-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    openSettingsStore(home).update({ receiverPort: 0 });
    const folder = join(home, 'demo-recordings');
    await runLeavingAPart(home);
    const before = await readdir(folder);
    expect(parts(before).length, before.join(', ')).toBeGreaterThan(0);
    expect(before.some((n) => n.startsWith('kept'))).toBe(true);
    // The demo's web client uploads into `client` (its list is in the demo's state, gone with it).
    await mkdir(join(folder, 'client'), { recursive: true });
    await writeFile(join(folder, 'client', 'sandbox-service.keptLL.webm'), 'upload');

    const second = await core(home);
    expect(await second.handlers['recordings:list']()).toEqual([]);
    expect(await readdir(folder)).toEqual([]);
  }, 60_000);

  it('keeps the saved recordings of a folder the producer chose, and removes only the unfinished part', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-demo-restart-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    const folder = join(home, 'mine');
    openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: folder });
    await runLeavingAPart(home);
    const before = await readdir(folder);
    expect(parts(before).length, before.join(', ')).toBeGreaterThan(0);

    await core(home);
    const after = await readdir(folder);
    expect(parts(after)).toEqual([]);
    expect(after).toEqual(before.filter((n) => !n.includes('.part')));
    expect(after.some((n) => n.startsWith('kept'))).toBe(true);
  }, 60_000);
});
