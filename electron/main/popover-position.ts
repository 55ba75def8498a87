/**
 * Where the popover appears: anchored to the tray icon, on the side of the screen the menu bar or
 * taskbar is on, and always fully inside the work area. Pure, so every layout is unit-tested.
 */

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Point {
  x: number;
  y: number;
}

/** Which edge of the work area the tray sits on. */
export type TrayEdge = 'top' | 'bottom' | 'left' | 'right';

export interface PopoverPositionInput {
  /** Tray icon bounds in screen coordinates; null or empty when the platform does not tell. */
  trayBounds: Rect | null | undefined;
  /** Work area of the display the tray (or, without tray bounds, the cursor) is on. */
  workArea: Rect;
  windowSize: { width: number; height: number };
  platform: NodeJS.Platform;
  /** Cursor position, used when the tray bounds are unknown. */
  cursor: Point;
  /** Gap between the popover and the bar, in pixels. */
  gap?: number;
}

/**
 * Linux AppIndicator trays report `{ x: 0, y: 0, width: 0, height: 0 }`
 * (https://github.com/electron/electron/issues/15003); such bounds say nothing about the icon.
 */
export function hasUsableBounds(bounds: Rect | null | undefined): bounds is Rect {
  return !!bounds && bounds.width > 0 && bounds.height > 0 && [bounds.x, bounds.y].every(Number.isFinite);
}

/**
 * The edge the tray is on: the work-area edge nearest the icon's centre. An icon outside the work area
 * (on a taskbar) has a negative distance to that edge, so it always wins.
 */
export function trayEdge(trayBounds: Rect, workArea: Rect): TrayEdge {
  const cx = trayBounds.x + trayBounds.width / 2;
  const cy = trayBounds.y + trayBounds.height / 2;
  const distances: [TrayEdge, number][] = [
    ['bottom', workArea.y + workArea.height - cy],
    ['top', cy - workArea.y],
    ['right', workArea.x + workArea.width - cx],
    ['left', cx - workArea.x],
  ];
  let best = distances[0]!;
  for (const entry of distances) if (entry[1] < best[1]) best = entry;
  return best[0];
}

/**
 * Top-left corner for the popover. macOS: below the menu-bar icon. Windows/Linux: next to the taskbar
 * the icon is on (above a bottom taskbar, beside a side one, below a top one). Without tray bounds:
 * next to the cursor, opening away from the nearer screen edge. The result is always clamped into
 * the work area and rounded to whole pixels.
 */
export function computePopoverPosition(input: PopoverPositionInput): Point {
  const { workArea, windowSize, cursor } = input;
  const gap = input.gap ?? 4;
  const { width, height } = windowSize;
  let x: number;
  let y: number;

  if (hasUsableBounds(input.trayBounds)) {
    const tray = input.trayBounds;
    const cx = tray.x + tray.width / 2;
    const cy = tray.y + tray.height / 2;
    // The macOS menu bar is at the top of every display, whatever the work area suggests.
    const edge = input.platform === 'darwin' ? 'top' : trayEdge(tray, workArea);
    switch (edge) {
      case 'top':
        x = cx - width / 2;
        y = Math.max(tray.y + tray.height, workArea.y) + gap;
        break;
      case 'bottom':
        x = cx - width / 2;
        y = Math.min(tray.y, workArea.y + workArea.height) - height - gap;
        break;
      case 'left':
        x = Math.max(tray.x + tray.width, workArea.x) + gap;
        y = cy - height / 2;
        break;
      case 'right':
        x = Math.min(tray.x, workArea.x + workArea.width) - width - gap;
        y = cy - height / 2;
        break;
    }
  } else {
    x = cursor.x - width / 2;
    const lowerHalf = cursor.y > workArea.y + workArea.height / 2;
    y = lowerHalf ? cursor.y - height - gap : cursor.y + gap;
  }

  return {
    x: Math.round(clamp(x, workArea.x, workArea.x + workArea.width - width)),
    y: Math.round(clamp(y, workArea.y, workArea.y + workArea.height - height)),
  };
}

/** Clamps into [min, max]; a window larger than the area aligns to its start. */
function clamp(value: number, min: number, max: number): number {
  if (max < min) return min;
  return Math.min(Math.max(value, min), max);
}
