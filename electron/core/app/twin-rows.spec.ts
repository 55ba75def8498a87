/**
 * One recording sent in both webhook forms, as the app shows it (issue 20 case 10): the legacy-form job and the
 * current-form one are twins, and the producer sees one row under one key (its state the one further along),
 * one "Recording saved" notification, one file, no problem left over; Retry now and Remove on that row act on
 * both. Against the demo core's sandbox over real HTTP: its legacy URL serves the same file as the current one.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordingView } from '../../contract.js';
import type { RecordingJob } from '../recordings/types.js';
import { collect, makeCore, next, runCleanups, sandboxOf, tempHome } from '../../../tests/support/app/core-helpers.js';
import { partsOf } from '../../../tests/support/app/demo-core.js';

afterEach(() => runCleanups());

describe('a recording sent in both webhook forms', () => {
  it('is one row, one saved notification and one file, even when the legacy form failed first', async () => {
    const home = await tempHome();
    // The legacy job's automatic retry a minute away: only its twin's save can explain it ending saved.
    const core = await makeCore(home, { pipelineOverrides: { retryBaseMs: 60_000 } });
    await core.start();
    const sandbox = sandboxOf(core);
    const changes = collect(core, 'recordings:changed');
    const notes = collect(core, 'notify');

    // The legacy form (GET ?chid=&url=, a URL without the random segment) first; its first download fails.
    sandbox.control.setWebhookShape('get');
    sandbox.control.setFaults('download', { path: '/sandbox-service/twin.mp4', status: 503, times: 1 });
    const waiting = next(core, 'recordings:changed', (v) => v.channelId === 'twin' && v.error !== null);
    sandbox.control.startBroadcast({ id: 'twin', record: true, recordingBytes: 60_000 });
    await sandbox.control.endBroadcast('twin');
    const first = await waiting;
    expect(first.state).toBe('pending');

    // The current form of the same recording: a job of its own, shown in the same row, and saved.
    const pipeline = partsOf(core).pipeline;
    const legacySaved = new Promise<RecordingJob>((resolve) => {
      pipeline.inbox.on('updated', (job) => job.key === first.key && job.state === 'saved' && resolve(job));
    });
    const saved = next(core, 'recordings:changed', (v) => v.channelId === 'twin' && v.state === 'saved');
    const delivery = await sandbox.control.resendWebhook('twin', 'json');
    expect(delivery.status).toBe(200);
    const row = await saved;
    expect(row.key).toBe(first.key);
    expect(pipeline.inbox.list().filter((j) => j.channelId === 'twin')).toHaveLength(2);
    // The legacy job is saved by the same file, without waiting for its retry.
    expect((await legacySaved).path).toBe(join(home, 'recordings', row.fileName!));

    const rows = (await core.handlers['recordings:list']()).filter((r: RecordingView) => r.channelId === 'twin');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ key: first.key, state: 'saved', error: null });
    expect(new Set(changes.filter((c) => c.payload.channelId === 'twin').map((c) => c.payload.key))).toEqual(
      new Set([first.key]),
    );
    expect(notes.filter((n) => n.payload.kind === 'saved')).toHaveLength(1);
    expect(await readdir(join(home, 'recordings'))).toEqual([row.fileName]);
    expect((await core.handlers['health:get']()).problems).toBe(0);
    expect((await core.handlers['recordings:path'](first.key)).path).toBe(join(home, 'recordings', row.fileName!));
  });

  it('gone in both forms is one problem; Retry now on the row tries both and saves once; Remove takes the row away', async () => {
    const home = await tempHome();
    const core = await makeCore(home, { pipelineOverrides: { retryBaseMs: 60_000 } });
    await core.start();
    const sandbox = sandboxOf(core);
    const pipeline = partsOf(core).pipeline;
    const notes = collect(core, 'notify');
    const goneJobs = new Set<string>();
    const bothGone = new Promise<void>((resolve) => {
      pipeline.inbox.on('updated', (job) => {
        if (job.channelId === 'lost' && job.state === 'gone') goneJobs.add(job.key);
        if (goneJobs.size === 2) resolve();
      });
    });
    sandbox.control.setFaults('download', { status: 404 });
    sandbox.control.setWebhookShape('get');
    sandbox.control.startBroadcast({ id: 'lost', record: true, recordingBytes: 30_000 });
    await sandbox.control.endBroadcast('lost');
    expect((await sandbox.control.resendWebhook('lost', 'json')).status).toBe(200);
    await bothGone;

    const rows = (await core.handlers['recordings:list']()).filter((r: RecordingView) => r.channelId === 'lost');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.state).toBe('gone');
    const row = rows[0] as RecordingView;
    expect((await core.handlers['health:get']()).problems).toBe(1);

    // The file is there after all: Retry now on the row looks again with both, and one of them saves it for both.
    sandbox.control.setFaults('download', null);
    const savedKeys = new Set<string>();
    const bothSaved = new Promise<void>((resolve) => {
      pipeline.inbox.on('updated', (job) => {
        if (job.channelId === 'lost' && job.state === 'saved') savedKeys.add(job.key);
        if (savedKeys.size === 2) resolve();
      });
    });
    const announced = next(core, 'notify', (n) => n.kind === 'saved');
    await core.handlers['recordings:retry'](row.key);
    await Promise.all([bothSaved, announced]);
    const [view] = (await core.handlers['recordings:list']()).filter((r: RecordingView) => r.channelId === 'lost');
    expect(view).toMatchObject({ key: row.key, state: 'saved' });
    expect(await readdir(join(home, 'recordings'))).toEqual([view?.fileName]);
    expect(notes.filter((n) => n.payload.kind === 'saved')).toHaveLength(1);

    expect(await core.handlers['recordings:remove'](row.key)).toEqual({ ok: true });
    const left = (await core.handlers['recordings:list']()).filter((r: RecordingView) => r.channelId === 'lost');
    expect(left).toEqual([]);
  });
});
