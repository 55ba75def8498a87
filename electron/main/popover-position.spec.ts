import { describe, expect, it } from 'vitest';
import { computePopoverPosition, hasUsableBounds, trayEdge } from './popover-position.js';
import type { PopoverPositionInput, Rect } from './popover-position.js';

const size = { width: 380, height: 560 };
const base = { windowSize: size, cursor: { x: 0, y: 0 }, gap: 4 };

/** Asserts the window lies fully inside the work area. */
function expectInside(pos: { x: number; y: number }, area: Rect) {
  expect(pos.x).toBeGreaterThanOrEqual(area.x);
  expect(pos.y).toBeGreaterThanOrEqual(area.y);
  expect(pos.x + size.width).toBeLessThanOrEqual(area.x + area.width);
  expect(pos.y + size.height).toBeLessThanOrEqual(area.y + area.height);
}

function place(input: Partial<PopoverPositionInput> & Pick<PopoverPositionInput, 'workArea' | 'platform'>) {
  const pos = computePopoverPosition({ ...base, trayBounds: null, ...input });
  expectInside(pos, input.workArea);
  return pos;
}

describe('computePopoverPosition', () => {
  it('macOS: centres under the menu-bar icon, just below the bar', () => {
    const workArea = { x: 0, y: 25, width: 1440, height: 875 };
    const pos = place({ platform: 'darwin', workArea, trayBounds: { x: 1000, y: 0, width: 22, height: 24 } });
    expect(pos).toEqual({ x: 1011 - 190, y: 29 });
  });

  it('macOS: an icon near the right edge keeps the popover on screen', () => {
    const workArea = { x: 0, y: 25, width: 1440, height: 875 };
    const pos = place({ platform: 'darwin', workArea, trayBounds: { x: 1420, y: 0, width: 20, height: 24 } });
    expect(pos).toEqual({ x: 1440 - 380, y: 29 });
  });

  it('Windows: sits above a bottom taskbar, centred on the icon', () => {
    const workArea = { x: 0, y: 0, width: 1920, height: 1040 };
    const pos = place({ platform: 'win32', workArea, trayBounds: { x: 1700, y: 1048, width: 24, height: 32 } });
    expect(pos).toEqual({ x: 1712 - 190, y: 1040 - 560 - 4 });
  });

  it('Windows: beside a left taskbar and a right taskbar', () => {
    const left = { x: 62, y: 0, width: 1858, height: 1080 };
    expect(place({ platform: 'win32', workArea: left, trayBounds: { x: 16, y: 900, width: 30, height: 24 } })).toEqual({
      x: 62 + 4,
      y: 1080 - 560,
    });
    const right = { x: 0, y: 0, width: 1858, height: 1080 };
    expect(
      place({ platform: 'win32', workArea: right, trayBounds: { x: 1874, y: 400, width: 30, height: 24 } }),
    ).toEqual({
      x: 1858 - 380 - 4,
      y: 412 - 280,
    });
  });

  it('Windows/Linux: below a top taskbar', () => {
    const workArea = { x: 0, y: 30, width: 1920, height: 1050 };
    expect(place({ platform: 'linux', workArea, trayBounds: { x: 1800, y: 3, width: 24, height: 24 } })).toEqual({
      x: 1920 - 380,
      y: 34,
    });
  });

  it('multi-monitor: a display left of and above the primary, with negative coordinates', () => {
    const workArea = { x: -2560, y: -400, width: 2560, height: 1400 };
    const pos = place({ platform: 'win32', workArea, trayBounds: { x: -300, y: 1004, width: 24, height: 32 } });
    expect(pos).toEqual({ x: -288 - 190, y: 1000 - 560 - 4 });
  });

  it('unknown tray bounds (Linux AppIndicator gives zeros): opens near the cursor, away from the edge', () => {
    const workArea = { x: 0, y: 27, width: 1920, height: 1053 };
    const top = place({
      platform: 'linux',
      workArea,
      trayBounds: { x: 0, y: 0, width: 0, height: 0 },
      cursor: { x: 1850, y: 10 },
    });
    expect(top).toEqual({ x: 1920 - 380, y: 27 });
    const middle = place({ platform: 'linux', workArea, cursor: { x: 900, y: 300 } });
    expect(middle).toEqual({ x: 710, y: 304 });
    const bottom = place({ platform: 'linux', workArea, trayBounds: undefined, cursor: { x: 40, y: 1075 } });
    expect(bottom).toEqual({ x: 0, y: 1075 - 560 - 4 });
  });

  it('clamps into a work area smaller than the window to its top-left corner', () => {
    const workArea = { x: 100, y: 50, width: 300, height: 400 };
    const pos = computePopoverPosition({
      ...base,
      platform: 'win32',
      workArea,
      trayBounds: { x: 350, y: 460, width: 20, height: 20 },
    });
    expect(pos).toEqual({ x: 100, y: 50 });
  });

  it('rounds fractional (scaled) coordinates to whole pixels', () => {
    const workArea = { x: 0, y: 0, width: 1536, height: 824 };
    const pos = place({ platform: 'win32', workArea, trayBounds: { x: 1200.5, y: 830, width: 21.3, height: 30 } });
    expect(Number.isInteger(pos.x) && Number.isInteger(pos.y)).toBe(true);
  });
});

describe('trayEdge and hasUsableBounds', () => {
  const area = { x: 0, y: 0, width: 1000, height: 800 };
  it('an icon on the taskbar outside the work area picks that edge, even in a corner', () => {
    expect(trayEdge({ x: 980, y: 810, width: 16, height: 16 }, area)).toBe('bottom');
    expect(trayEdge({ x: 1010, y: 780, width: 16, height: 16 }, area)).toBe('right');
  });
  it('an icon inside the work area (auto-hidden taskbar) picks the nearest edge', () => {
    expect(trayEdge({ x: 500, y: 790, width: 16, height: 8 }, area)).toBe('bottom');
    expect(trayEdge({ x: 2, y: 400, width: 16, height: 16 }, area)).toBe('left');
  });
  it('rejects missing, empty and non-finite bounds', () => {
    expect(hasUsableBounds(null)).toBe(false);
    expect(hasUsableBounds({ x: 0, y: 0, width: 0, height: 0 })).toBe(false);
    expect(hasUsableBounds({ x: Number.NaN, y: 0, width: 10, height: 10 })).toBe(false);
    expect(hasUsableBounds({ x: 5, y: 0, width: 10, height: 10 })).toBe(true);
  });
});
