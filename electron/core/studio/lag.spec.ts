/** Lag readings that overlap: only the newest one started is applied. */
import { describe, expect, it } from 'vitest';
import { NewestReading } from './lag.js';

describe('NewestReading', () => {
  it('applies a reading only while no newer one was started, whatever order they finish in', () => {
    const readings = new NewestReading();
    const afterFirstSave = readings.start();
    const afterSecondSave = readings.start();
    // The second (taken after both acknowledgements) finishes first and clears the warning; the first, taken
    // while one recording was still unacknowledged, finishes later and must not put it back.
    expect(afterSecondSave()).toBe(true);
    expect(afterFirstSave()).toBe(false);
    const periodic = readings.start();
    expect(afterSecondSave()).toBe(false);
    expect(periodic()).toBe(true);
  });
});
