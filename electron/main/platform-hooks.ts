/**
 * What only the desktop shell can do for the core (`PlatformHooks`): reveal and open files, pick a
 * folder, write the clipboard, and launch at login. Electron calls are passed in as plain functions.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OpenDialogOptions, OpenDialogReturnValue } from 'electron';
import type { PlatformHooks } from '../core/app/types.js';
import { ConfigError } from '../core/errors.js';

export interface PlatformHookDeps {
  platform?: NodeJS.Platform;
  /** `shell.showItemInFolder`. */
  showItemInFolder: (path: string) => void;
  /** `shell.openPath`: resolves to an error string, empty on success. */
  openPath: (path: string) => Promise<string>;
  /** `dialog.showOpenDialog`, parented to the popover when it is open. */
  showOpenDialog: (options: OpenDialogOptions) => Promise<OpenDialogReturnValue>;
  /**
   * `clipboard.writeText`. Asynchronous since Electron 44, which aligned the clipboard with the W3C Clipboard
   * API (https://github.com/electron/electron/blob/main/docs/breaking-changes.md): awaited so a failed write
   * reaches the renderer as an error instead of vanishing.
   */
  writeText: (text: string) => Promise<void>;
  /** `app.setLoginItemSettings` (macOS and Windows only). */
  setLoginItemSettings: (settings: { openAtLogin: boolean }) => void;
  /** Linux has no login-item API: an XDG autostart entry is written instead. */
  linuxAutostart?: { dir: string; execPath: string };
}

/** The shell's `PlatformHooks` for `createAppCore`. */
export function createPlatformHooks(deps: PlatformHookDeps): Required<PlatformHooks> {
  const platform = deps.platform ?? process.platform;
  return {
    revealFile(path) {
      deps.showItemInFolder(path);
    },
    async openFile(path) {
      const problem = await deps.openPath(path);
      if (problem) throw new ConfigError(`No application could open the recording: ${problem}`);
    },
    async chooseFolder(current) {
      const result = await deps.showOpenDialog({
        title: 'Recordings folder',
        defaultPath: current,
        buttonLabel: 'Use Folder',
        properties: ['openDirectory', 'createDirectory', 'promptToCreate'],
      });
      return result.canceled ? null : (result.filePaths[0] ?? null);
    },
    async writeClipboard(text) {
      await deps.writeText(text);
    },
    async setLaunchAtLogin(enabled) {
      if (platform === 'linux') {
        if (deps.linuxAutostart) await setLinuxAutostart(enabled, deps.linuxAutostart);
        return;
      }
      deps.setLoginItemSettings({ openAtLogin: enabled });
    },
  };
}

export const AUTOSTART_FILE = 'tally.desktop';

/** Writes or removes `<dir>/tally.desktop` (the XDG autostart spec; GNOME, KDE and Xfce read it). */
export async function setLinuxAutostart(enabled: boolean, options: { dir: string; execPath: string }): Promise<void> {
  const file = join(options.dir, AUTOSTART_FILE);
  if (!enabled) {
    await rm(file, { force: true });
    return;
  }
  await mkdir(options.dir, { recursive: true });
  const entry = [
    '[Desktop Entry]',
    'Type=Application',
    'Name=Tally',
    'Comment=Live channels and recordings in the tray',
    `Exec=${desktopExecArg(options.execPath)}`,
    'Terminal=false',
    'X-GNOME-Autostart-enabled=true',
    '',
  ].join('\n');
  await writeFile(file, entry, { mode: 0o644 });
}

/**
 * Quotes one Exec argument per the Desktop Entry spec: quote-escape `"`, backquote, `$` and `\`, then
 * apply the string-value escape to backslashes, and double `%` so it is not read as a field code.
 */
export function desktopExecArg(arg: string): string {
  const quoted = arg.replace(/["`$\\]/g, (c) => `\\${c}`);
  return `"${quoted.replace(/\\/g, '\\\\').replace(/%/g, '%%')}"`;
}
