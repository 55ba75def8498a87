/**
 * The tray icon and its menu, after Signal-Desktop's `SystemTrayService`: every Electron object comes
 * in through the constructor, state lives in private fields, and `render()` is idempotent, touching
 * the native tray only for what changed.
 */
import type {
  MenuItemConstructorOptions,
  Menu,
  MessageBoxOptions,
  MessageBoxReturnValue,
  NativeImage,
  Rectangle,
  Tray,
} from 'electron';
import {
  notesTextIn,
  shellText,
  type RequestHandlers,
  type ShellLanguage,
  type ShellText,
  type ShellTextKey,
} from '../contract.js';
import type { TraySnapshot } from '../core/app/types.js';
import { TallyError } from '../core/errors.js';
import { describeError } from './log.js';
import type { Log } from './log.js';

/**
 * The icon: the health's three states (ok, warning, error), and while all is well what Tally is doing (idle,
 * live, downloading). Each looks different in shape as well as colour.
 */
export type TrayIconState = 'idle' | 'live' | 'downloading' | 'warning' | 'error';

/** Live channels listed in the menu; the rest are one "more" item that opens the popover. */
export const MAX_MENU_CHANNELS = 8;

export interface SystemTrayOptions {
  platform?: NodeJS.Platform;
  createTray: (image: NativeImage) => Tray;
  /** The icon for a state (a template image on macOS, coloured elsewhere). */
  loadIcon: (state: TrayIconState) => NativeImage;
  buildMenu: (template: MenuItemConstructorOptions[]) => Menu;
  showMessageBox: (options: MessageBoxOptions) => Promise<MessageBoxReturnValue>;
  handlers: Pick<RequestHandlers, 'channels:end' | 'settings:update'>;
  popover: { toggle(trayBounds?: Rectangle | null): void; show(): void; showSection(section: string): void };
  openFolder: (path: string) => void;
  quit: () => void;
  /** Quits and installs the staged update (the "Update ready: restart" line; updates.ts). */
  restartToUpdate?: () => void;
  log?: Log;
  /** The tray app's language (the Language setting): the menu, tooltip and dialogs come from the shell catalogue. */
  language?: () => ShellLanguage;
}

/**
 * Which icon a snapshot shows: the health first (error, then warning or anything else asking for attention),
 * and only while it is ok, downloading beats live beats idle. A tray never looks fine while recordings are lost.
 */
export function trayIconState(snapshot: TraySnapshot): TrayIconState {
  if (snapshot.health.state === 'error') return 'error';
  if (snapshot.health.state === 'warning' || snapshot.attention) return 'warning';
  if (snapshot.downloading > 0) return 'downloading';
  if (snapshot.liveCount > 0) return 'live';
  return 'idle';
}

/**
 * Tooltip such as "Tally: Port 8787 is in use… · 3 live" or "Tally: 3 live · downloading 2 (45%) · All is well…":
 * the health's one line comes first while something is wrong, after what Tally is doing while all is well.
 * Windows cuts tooltips at 127 characters.
 */
export function trayTooltip(snapshot: TraySnapshot, language: ShellLanguage = 'en'): string {
  const say = (key: ShellTextKey, params?: ShellText['params']) => shellText(language, { key, params });
  const { health } = snapshot;
  const summary = cleanText(healthLine(snapshot, language), 100);
  const parts: string[] = [];
  if (health.state !== 'ok' && summary) parts.push(summary);
  if (snapshot.attention && snapshot.attention !== health.summary) {
    const notes = snapshot.attentionNotes;
    const said = notes && notes.length > 0 ? notesTextIn(language, notes) : snapshot.attention;
    parts.push(cleanText(said, 60));
  }
  if (snapshot.liveCount > 0) parts.push(say('tooltipLive', { count: snapshot.liveCount }));
  if (snapshot.downloading > 0) {
    const percent = percentOf(snapshot.progress);
    parts.push(
      percent === null
        ? say('tooltipDownloading', { count: snapshot.downloading })
        : say('tooltipDownloadingPercent', { count: snapshot.downloading, percent }),
    );
  }
  if (snapshot.receivingPaused) parts.push(say('tooltipPaused'));
  if (health.state === 'ok' && summary) parts.push(summary);
  const text = parts.length ? `Tally: ${parts.join(' · ')}` : 'Tally';
  return text.length > 127 ? `${text.slice(0, 126)}…` : text;
}

/** The health's one line in the tray's language, from its notes when the core sent them. */
function healthLine(snapshot: TraySnapshot, language: ShellLanguage): string {
  const notes = snapshot.health.summaryNotes;
  return notes && notes.length > 0 ? notesTextIn(language, notes) : snapshot.health.summary;
}

/** macOS menu-bar title next to the icon: the download percentage, or nothing. */
export function trayTitle(snapshot: TraySnapshot): string {
  const percent = snapshot.downloading > 0 ? percentOf(snapshot.progress) : null;
  return percent === null ? '' : `${percent}%`;
}

function percentOf(progress: number | null): number | null {
  if (progress === null || !Number.isFinite(progress)) return null;
  return Math.floor(Math.min(Math.max(progress, 0), 1) * 100);
}

/**
 * Channel IDs are chosen by broadcasters and are hostile text: control and formatting characters
 * (newlines, bidi overrides) are dropped and long IDs shortened before they reach a menu or dialog.
 */
export function cleanText(text: string, max: number): string {
  const clean = text.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, '').trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** Menu labels treat `&` as a mnemonic marker on Windows and Linux. */
function menuLabel(text: string): string {
  return text.replace(/&/g, '&&');
}

interface MenuEntry {
  label?: string;
  type?: 'separator' | 'checkbox';
  enabled?: boolean;
  checked?: boolean;
  action?: () => void;
}

export class SystemTrayService {
  readonly #options: SystemTrayOptions;
  readonly #platform: NodeJS.Platform;
  #tray: Tray | null = null;
  #snapshot: TraySnapshot | null = null;
  #icon: TrayIconState | null = null;
  #tooltip: string | null = null;
  #title: string | null = null;
  #menu: Menu | null = null;
  #menuKey: string | null = null;
  #updateReady: string | null = null;

  constructor(options: SystemTrayOptions) {
    this.#options = options;
    this.#platform = options.platform ?? process.platform;
  }

  /** The snapshot the tray shows; renders what changed. */
  setSnapshot(snapshot: TraySnapshot): void {
    this.#snapshot = snapshot;
    this.render();
  }

  /** A verified update is staged (its version) or none is (null): the menu offers the restart that installs it. */
  setUpdateReady(version: string | null): void {
    this.#updateReady = version;
    this.render();
  }

  /** The current native menu (rebuilt only when its content changes). */
  get menu(): Menu | null {
    return this.#menu;
  }

  /** Creates the tray on first call, then brings icon, tooltip, title and menu up to date. */
  render(): void {
    const snapshot = this.#snapshot;
    if (!snapshot) return;
    const icon = trayIconState(snapshot);
    const tray = this.#tray ?? this.#createTray(icon);

    if (icon !== this.#icon) {
      tray.setImage(this.#options.loadIcon(icon));
      this.#icon = icon;
    }
    const tooltip = trayTooltip(snapshot, this.#language());
    if (tooltip !== this.#tooltip) {
      tray.setToolTip(tooltip);
      this.#tooltip = tooltip;
    }
    if (this.#platform === 'darwin') {
      const title = trayTitle(snapshot);
      if (title !== this.#title) {
        tray.setTitle(title);
        this.#title = title;
      }
    }
    this.#renderMenu(tray, snapshot);
  }

  /**
   * Asks for confirmation naming the channel, then ends it through the core. Resolves true when the
   * channel was ended; a refusal or failure is shown in a native dialog, never thrown.
   */
  async endChannel(channelId: string): Promise<boolean> {
    const name = cleanText(channelId, 120);
    const { response } = await this.#options.showMessageBox({
      type: 'warning',
      title: this.#say('endTitle'),
      message: this.#say('endMessage', { channel: name }),
      detail: this.#say('endDetail'),
      buttons: [this.#say('endConfirm'), this.#say('cancel')],
      defaultId: 1,
      cancelId: 1,
      noLink: true,
    });
    if (response !== 0) return false;
    try {
      await this.#options.handlers['channels:end'](channelId);
      return true;
    } catch (error) {
      await this.#showError(this.#say('endFailed', { channel: name }), error);
      return false;
    }
  }

  /** Redraws the tooltip and menu in the language now chosen (after the Language setting changed). */
  languageChanged(): void {
    this.#tooltip = null;
    this.#menuKey = null;
    this.render();
  }

  #language(): ShellLanguage {
    return this.#options.language?.() ?? 'en';
  }

  #say(key: ShellTextKey, params?: ShellText['params']): string {
    return shellText(this.#language(), { key, params });
  }

  destroy(): void {
    this.#tray?.destroy();
    this.#tray = null;
  }

  #createTray(icon: TrayIconState): Tray {
    const options = this.#options;
    const tray = options.createTray(options.loadIcon(icon));
    this.#tray = tray;
    this.#icon = icon;
    // Without this macOS holds single clicks back to wait for a possible double click.
    if (this.#platform === 'darwin') tray.setIgnoreDoubleClickEvents(true);
    // Click bounds are right where getBounds() is not (https://github.com/electron/electron/issues/13461).
    tray.on('click', (_event, bounds) => options.popover.toggle(bounds));
    if (this.#platform !== 'linux') {
      // Popping the menu up by hand: with setContextMenu, macOS would open the menu on a left click too.
      tray.on('right-click', () => {
        if (this.#menu) tray.popUpContextMenu(this.#menu);
      });
    }
    return tray;
  }

  #renderMenu(tray: Tray, snapshot: TraySnapshot): void {
    const entries = this.#menuEntries(snapshot);
    const key = JSON.stringify(entries.map(({ action: _action, ...rest }) => rest));
    if (key === this.#menuKey) return;
    this.#menuKey = key;
    this.#menu = this.#options.buildMenu(
      entries.map((entry): MenuItemConstructorOptions => {
        if (entry.type === 'separator') return { type: 'separator' };
        const item: MenuItemConstructorOptions = { label: menuLabel(entry.label ?? '') };
        if (entry.type === 'checkbox') Object.assign(item, { type: 'checkbox', checked: entry.checked ?? false });
        if (entry.enabled === false) item.enabled = false;
        if (entry.action) item.click = entry.action;
        return item;
      }),
    );
    // Linux AppIndicator sends no click events: the menu is the only way in, so it is attached.
    if (this.#platform === 'linux') tray.setContextMenu(this.#menu);
  }

  #menuEntries(snapshot: TraySnapshot): MenuEntry[] {
    const { popover } = this.#options;
    const say = (key: ShellTextKey, params?: ShellText['params']) => this.#say(key, params);
    const entries: MenuEntry[] = [{ label: say('trayOpen'), action: () => popover.show() }];
    // What is wrong, where the menu is the only way in (Linux AppIndicator shows no tooltip); opens the popover.
    if (snapshot.health.state !== 'ok') {
      entries.push({ label: cleanText(healthLine(snapshot, this.#language()), 80), action: () => popover.show() });
    }
    const restart = this.#options.restartToUpdate;
    if (this.#updateReady !== null && restart) {
      entries.push({ label: say('trayUpdateReady'), action: restart });
    }
    entries.push({ type: 'separator' });
    if (snapshot.liveChannels.length > 0) {
      entries.push({ label: say('trayLive', { count: snapshot.liveCount }), enabled: false });
      for (const channel of snapshot.liveChannels.slice(0, MAX_MENU_CHANNELS)) {
        const label = say('trayEnd', { channel: cleanText(channel.id, 40) });
        entries.push({ label, action: () => void this.endChannel(channel.id) });
      }
      const more = snapshot.liveChannels.length - MAX_MENU_CHANNELS;
      if (more > 0) entries.push({ label: say('trayMore', { count: more }), action: () => popover.show() });
      entries.push({ type: 'separator' });
    }
    entries.push(
      { label: say('trayOpenFolder'), action: () => this.#options.openFolder(snapshot.recordingsFolder) },
      {
        // Pausing never refuses webhooks: they are still journalled (the service does not resend), only
        // the downloads wait. Hence "downloads", whatever the setting is called.
        label: say('trayPause'),
        type: 'checkbox',
        checked: snapshot.receivingPaused,
        action: () => void this.#setReceivingPaused(!snapshot.receivingPaused),
      },
      { label: say('traySettings'), action: () => popover.showSection('settings') },
      { type: 'separator' },
      { label: say('trayQuit'), action: () => this.#options.quit() },
    );
    return entries;
  }

  async #setReceivingPaused(paused: boolean): Promise<void> {
    try {
      await this.#options.handlers['settings:update']({ receivingPaused: paused });
    } catch (error) {
      // The native checkbox already flipped: rebuild the menu from the unchanged snapshot.
      this.#menuKey = null;
      this.render();
      await this.#showError(this.#say(paused ? 'pauseFailed' : 'resumeFailed'), error);
    }
  }

  async #showError(message: string, error: unknown): Promise<void> {
    const detail = error instanceof TallyError ? error.message : this.#say('unexpected');
    if (!(error instanceof TallyError))
      (this.#options.log ?? console.error)(`[tray] ${message}: ${describeError(error)}`);
    await this.#options.showMessageBox({
      type: 'error',
      title: 'Tally',
      message,
      detail,
      buttons: [this.#say('ok')],
      noLink: true,
    });
  }
}
