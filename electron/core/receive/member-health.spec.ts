/**
 * A member's health before its folder exists: `tally follow` makes the folder once connected, so at start the
 * free space is read where the folder will be (the nearest folder above it), not reported as unreadable.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HealthView } from '../health-view.js';
import { MemberHealth } from './member-health.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

describe('MemberHealth', () => {
  it('reads the free space above a folder not made yet instead of warning that the disk cannot be read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-member-health-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const health = new MemberHealth(join(dir, 'home'), join(dir, 'not', 'made', 'yet'));
    cleanups.push(() => health.stop());
    const first = new Promise<HealthView>((resolve) => health.once('health', resolve));
    await health.start(() => undefined);
    const disk = (await first).components.find((c) => c.id === 'disk');
    expect(disk?.state).toBe('ok');
    expect(disk?.reason).not.toMatch(/cannot be read|ENOENT/);
  });

  it('names the mirrors that fail, with channel and reason, like a receiver names its downloads', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-member-health-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const health = new MemberHealth(join(dir, 'home'), dir);
    for (let i = 0; i < 7; i += 1) health.failed(`rec-${i}`, 'the team store answered 503.', true, `show-${i}`);
    health.failed('rec-gone', 'it left the team store first.', false, 'show-gone');
    const view = health.view();
    expect(view.problems).toBe(8);
    expect(view.problemRecordings).toHaveLength(5);
    expect(view.problemRecordings?.[0]).toEqual({
      channelId: 'show-0',
      key: 'rec-0',
      state: 'pending',
      reason: 'the team store answered 503.',
      nextAttemptAt: null,
    });
    expect(view.moreProblems).toBe(3);
  });
});
