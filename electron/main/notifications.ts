/**
 * Native notifications for what the producer must know while the popover is closed: a recording
 * saved (click reveals the file), a download failed or expired, the webhook unreachable. Each kind
 * follows its setting; identical notifications within a short window are dropped, and a burst of
 * saved recordings collapses into one "N recordings saved" notification.
 */
import type { Notification, NotificationConstructorOptions } from 'electron';
import { notesTextIn, shellText, type SettingsView, type ShellLanguage } from '../contract.js';
import type { AppCoreEvents } from '../core/app/types.js';
import { systemClock } from '../core/time.js';

export type NotifyPayload = AppCoreEvents['notify'];
export type NotificationSettings = SettingsView['notifications'];

/** Same notification again within this window is a repeat, not news. */
export const DEDUPE_WINDOW_MS = 10_000;

export interface NotificationServiceOptions {
  createNotification: (options: NotificationConstructorOptions) => Notification;
  isSupported: () => boolean;
  /** Shows a saved file in the file manager. */
  reveal: (path: string) => void;
  /** Opens the popover (click on a notification without a file). */
  showPopover: () => void;
  settings?: NotificationSettings;
  /** Monotonic milliseconds for the repeat window (time.ts's `systemClock.now` by default). */
  now?: () => number;
  /** Where a notification the OS refused is reported. */
  log?: (line: string) => void;
  /** The tray app's language (the Language setting): titles and fixed sentences come from the shell catalogue. */
  language?: () => ShellLanguage;
}

/** Which setting governs a notification kind. */
function settingFor(kind: NotifyPayload['kind']): keyof NotificationSettings {
  switch (kind) {
    case 'saved':
      return 'saved';
    case 'failed':
    case 'expired':
    case 'refused':
    case 'missing':
      return 'failed';
    case 'live':
      return 'live';
    case 'unreachable':
    case 'refusing':
    case 'health':
      return 'unreachable';
  }
}

export class NotificationService {
  readonly #options: NotificationServiceOptions;
  readonly #now: () => number;
  #settings: NotificationSettings;
  readonly #recent = new Map<string, number>();
  // Shown notifications are kept referenced: a collected Notification loses its click handler.
  readonly #shown = new Set<Notification>();
  #savedBurst: { notification: Notification; count: number; at: number } | null = null;

  constructor(options: NotificationServiceOptions) {
    this.#options = options;
    this.#now = options.now ?? systemClock.now;
    this.#settings = options.settings ?? { saved: true, failed: true, unreachable: true, live: false };
  }

  /** Follows the notification settings (on start and on every `settings:changed`). */
  setSettings(settings: NotificationSettings): void {
    this.#settings = { ...settings };
  }

  /** Shows the notification unless its setting is off, it repeats a recent one, or the OS has none. */
  notify(payload: NotifyPayload): boolean {
    if (!this.#settings[settingFor(payload.kind)] || !this.#options.isSupported()) return false;
    const now = this.#now();
    for (const [key, at] of this.#recent) if (now - at >= DEDUPE_WINDOW_MS) this.#recent.delete(key);
    const key = `${payload.kind}\u0000${payload.title}\u0000${payload.body}`;
    if (this.#recent.has(key)) return false;
    this.#recent.set(key, now);

    const language = this.#options.language?.() ?? 'en';
    let title = payload.text ? shellText(language, payload.text.title) : payload.title;
    let body = payload.text?.body
      ? shellText(language, payload.text.body)
      : payload.bodyNotes && payload.bodyNotes.length > 0
        ? notesTextIn(language, payload.bodyNotes)
        : payload.body;
    let count = 1;
    const burst = this.#savedBurst;
    if (payload.kind === 'saved' && burst && now - burst.at < DEDUPE_WINDOW_MS && this.#shown.has(burst.notification)) {
      count = burst.count + 1;
      title = shellText(language, { key: 'savedBurstTitle', params: { count } });
      body = shellText(language, { key: 'savedBurstBody', params: { name: payload.body } });
      burst.notification.close();
    }

    const notification = this.#options.createNotification({ title, body, silent: payload.kind === 'saved' });
    this.#shown.add(notification);
    const forget = () => {
      this.#shown.delete(notification);
      if (this.#savedBurst?.notification === notification) this.#savedBurst = null;
    };
    notification.on('click', () => {
      forget();
      if (payload.path) this.#options.reveal(payload.path);
      else this.#options.showPopover();
    });
    notification.on('close', forget);
    // Since Electron 42 macOS shows notifications through UNNotification, which refuses unsigned apps with a
    // 'failed' event (https://github.com/electron/electron/blob/main/docs/breaking-changes.md): forget it, so
    // later saves are not merged into a notification nobody saw, and say why once in the log.
    notification.on('failed', (_event, error) => {
      forget();
      this.#options.log?.(`notification not shown: ${error}`);
    });
    notification.show();
    if (payload.kind === 'saved') this.#savedBurst = { notification, count, at: now };
    return true;
  }
}
