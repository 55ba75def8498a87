import { describe, expect, it } from 'vitest';
import { softBreaks } from './soft-breaks.js';

describe('softBreaks', () => {
  it('cuts a long file name after each separator, and gives back the same text joined', () => {
    const name = 'studio_floor.quarterly-review/keynote.mp4';
    expect(softBreaks(name)).toEqual(['studio_', 'floor.', 'quarterly-', 'review/', 'keynote.', 'mp4']);
    expect(softBreaks(`Saved · 98 kB · ${name}`).join('')).toBe(`Saved · 98 kB · ${name}`);
  });

  it('leaves short words and runs of separators whole', () => {
    expect(softBreaks('Saved · 1.5 MB · a-b.mp4')).toEqual(['Saved · 1.5 MB · a-b.mp4']);
    expect(softBreaks('archive--2026__final..mp4')).toEqual(['archive--', '2026__', 'final..', 'mp4']);
  });
});
