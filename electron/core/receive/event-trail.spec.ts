import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sinkLogger } from '../logger.js';
import type { FollowerEvents } from '../studio/follower.js';
import type { HealthComponentView, HealthView } from '../health-view.js';
import { healthLines, quoted, traceFollower } from './event-trail.js';

const component = (id: string, state: HealthComponentView['state'], reason: string) =>
  ({ id, state, reason }) as unknown as HealthComponentView;
const view = (state: HealthView['state'], summary: string, components: HealthComponentView[]) =>
  ({ state, summary, components }) as unknown as HealthView;

describe('healthLines', () => {
  it('says the overall change and each component whose state or (not ok) reason changed', () => {
    const start = view('ok', 'All is well', [component('downloads', 'ok', 'No download needs attention.')]);
    expect(healthLines(start, null)).toEqual([
      'starting → ok: All is well',
      'downloads starting → ok: No download needs attention.',
    ]);
    const failing = view('warning', '1 download is failing', [
      component('downloads', 'warning', '1 download is failing'),
    ]);
    expect(healthLines(failing, start)).toEqual([
      'ok → warning: 1 download is failing',
      'downloads ok → warning: 1 download is failing',
    ]);
    const twoFailing = view('warning', '2 downloads are failing', [
      component('downloads', 'warning', '2 downloads are failing'),
    ]);
    expect(healthLines(twoFailing, failing)).toEqual(['downloads warning → warning: 2 downloads are failing']);
  });

  it('says nothing when only an ok reason moved (the free space changes all the time)', () => {
    const a = view('ok', 'All is well', [component('disk', 'ok', '77.2 GiB free')]);
    const b = view('ok', 'All is well', [component('disk', 'ok', '77.1 GiB free')]);
    expect(healthLines(b, a)).toEqual([]);
  });
});

describe('quoted', () => {
  it('keeps a hostile channel ID on one bounded line', () => {
    expect(quoted('a\nb"c')).toBe('"a\\nb\\"c"');
    expect(quoted('x'.repeat(200), 10)).toBe(`"${'x'.repeat(10)}…"`);
  });
});

describe('traceFollower', () => {
  it('says a mirror progress once per period, and forgets a recording that failed for good', () => {
    let now = 0;
    const follower = new EventEmitter<FollowerEvents>();
    const lines: string[] = [];
    const stop = traceFollower(
      follower,
      sinkLogger((level, _scope, line) => lines.push(`${level} ${line}`)),
      { now: () => now },
    );
    const progress = { identity: 'rec-1', channelId: 'ch', bytes: 1, totalBytes: 4 };
    follower.emit('progress', progress);
    follower.emit('progress', progress);
    expect(lines.filter((l) => l.startsWith('debug'))).toHaveLength(1);
    follower.emit('failed', { channelId: 'ch', identity: 'rec-1', message: 'gone', willRetry: false });
    // The same identity again (announced anew): its first progress is said at once, the key was not kept.
    now += 1;
    follower.emit('progress', progress);
    expect(lines.filter((l) => l.startsWith('debug'))).toHaveLength(2);
    stop();
  });
});
