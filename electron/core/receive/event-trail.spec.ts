import { describe, expect, it } from 'vitest';
import type { HealthComponentView, HealthView } from '../health-view.js';
import { healthLines, quoted } from './event-trail.js';

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
