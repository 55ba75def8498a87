/**
 * Problems and "Retry now" in the app core: a download failing because its folder became a file counts under
 * Problems (and in the health) while it waits, and Retry now resumes it at once instead of after its backoff;
 * a recording the service answers 404 for is shown as gone, not as a countdown.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordingNeedsAttention } from '../../contract.js';
import { makeCore, next, runCleanups, sandboxOf, tempHome } from '../../../tests/support/app/core-helpers.js';

afterEach(() => runCleanups());

describe('Problems and Retry now', () => {
  it('counts a download failing into a folder that became a file, and Retry now resumes it at once', async () => {
    const home = await tempHome();
    // Automatic retries a minute apart: only Retry now can explain a prompt save.
    const core = await makeCore(home, { pipelineOverrides: { retryBaseMs: 60_000 } });
    await core.start();
    const sandbox = sandboxOf(core);
    const folder = join(home, 'recordings');
    await rm(folder, { recursive: true, force: true });
    await writeFile(folder, 'not a folder');

    const waiting = next(core, 'recordings:changed', (v) => v.channelId === 'cut-off' && v.nextAttemptAt != null);
    const warned = next(core, 'health:changed', (h) => h.problems > 0);
    sandbox.control.startBroadcast({ id: 'cut-off', record: true, recordingBytes: 40_000 });
    await sandbox.control.endBroadcast('cut-off');
    const view = await waiting;
    expect(view.state).toBe('pending');
    expect(view.error).toMatch(/recordings folder/);
    expect(recordingNeedsAttention(view)).toBe(true);
    expect(Date.parse(view.nextAttemptAt as string)).toBeGreaterThan(Date.now());
    const health = await warned;
    expect(health.problems).toBe(1);
    expect(health.components.find((c) => c.id === 'downloads')).toMatchObject({ state: 'warning' });
    expect(core.traySnapshot().health.state).not.toBe('ok');

    await rm(folder);
    await mkdir(folder);
    const saved = next(core, 'recordings:changed', (v) => v.key === view.key && v.state === 'saved');
    const asked = Date.now();
    await core.handlers['recordings:retry'](view.key);
    await saved;
    expect(Date.now() - asked).toBeLessThan(10_000);
    const after = await core.handlers['health:get']();
    expect(after.problems).toBe(0);
  });

  it('shows a recording the service answers 404 for as gone, with when it is looked at again', async () => {
    const home = await tempHome();
    const core = await makeCore(home, { pipelineOverrides: { retryBaseMs: 60_000 } });
    await core.start();
    const sandbox = sandboxOf(core);
    sandbox.control.setFaults('download', { status: 404 });
    const gone = next(core, 'recordings:changed', (v) => v.channelId === 'deleted' && v.state === 'gone');
    sandbox.control.startBroadcast({ id: 'deleted', record: true, recordingBytes: 40_000 });
    await sandbox.control.endBroadcast('deleted');
    const view = await gone;
    expect(view.error).toMatch(/^The service does not have this recording \(404/);
    expect(recordingNeedsAttention(view)).toBe(true);
    const health = await core.handlers['health:get']();
    expect(health.components.find((c) => c.id === 'downloads')).toMatchObject({ state: 'error' });

    // The file is back (the answer was a passing one): Retry now looks at once and saves it.
    sandbox.control.setFaults('download', null);
    const saved = next(core, 'recordings:changed', (v) => v.key === view.key && v.state === 'saved');
    await core.handlers['recordings:retry'](view.key);
    await saved;
  });
});
