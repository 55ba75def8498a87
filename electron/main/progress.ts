/**
 * Download progress outside the tray icon: the window progress bar (taskbar on Windows, the launcher
 * entry on Linux desktops that read LauncherEntry over D-Bus since Electron 44) and the app badge count. A tray app with a hidden dock and `skipTaskbar` shows little of
 * this, so the tray tooltip/title stay the main progress display; this only mirrors them where the OS
 * has a place. Updates reach the OS only when the value changes.
 */
import type { TraySnapshot } from '../core/app/types.js';

export interface ProgressServiceOptions {
  /** `win.setProgressBar` of the popover, when it exists. -1 removes the bar, above 1 is indeterminate. */
  setProgressBar: (value: number, mode: 'normal' | 'indeterminate' | 'none') => void;
  /** `app.setBadgeCount`: the number of active downloads, 0 clears it. */
  setBadgeCount?: (count: number) => void;
}

export class ProgressService {
  readonly #options: ProgressServiceOptions;
  #bar: string | null = null;
  #badge: number | null = null;

  constructor(options: ProgressServiceOptions) {
    this.#options = options;
  }

  update(snapshot: Pick<TraySnapshot, 'downloading' | 'progress'>): void {
    const [value, mode] =
      snapshot.downloading <= 0
        ? ([-1, 'none'] as const)
        : snapshot.progress === null || !Number.isFinite(snapshot.progress)
          ? ([2, 'indeterminate'] as const)
          : ([Math.min(Math.max(snapshot.progress, 0), 1), 'normal'] as const);
    const bar = `${mode}:${value}`;
    if (bar !== this.#bar) {
      this.#bar = bar;
      this.#options.setProgressBar(value, mode);
    }
    const badge = Math.max(snapshot.downloading, 0);
    if (badge !== this.#badge && this.#options.setBadgeCount) {
      this.#badge = badge;
      this.#options.setBadgeCount(badge);
    }
  }

  /** Forget what was sent (e.g. a new window appeared and has no bar yet). */
  invalidate(): void {
    this.#bar = null;
    this.#badge = null;
  }
}
