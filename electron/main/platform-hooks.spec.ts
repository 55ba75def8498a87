import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenDialogOptions } from 'electron';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { AUTOSTART_FILE, createPlatformHooks, desktopExecArg } from './platform-hooks.js';
import type { PlatformHookDeps } from './platform-hooks.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-hooks-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function setup(platform: NodeJS.Platform, patch: Partial<PlatformHookDeps> = {}) {
  const calls: string[] = [];
  const dialogs: OpenDialogOptions[] = [];
  const loginItems: { openAtLogin: boolean }[] = [];
  const hooks = createPlatformHooks({
    platform,
    showItemInFolder: (path) => calls.push(`reveal ${path}`),
    openPath: async (path) => {
      if (path.endsWith('.bad')) return 'No application is registered';
      calls.push(`open ${path}`);
      return '';
    },
    showOpenDialog: async (options) => {
      dialogs.push(options);
      return { canceled: false, filePaths: ['/picked'] };
    },
    writeText: async (text) => {
      if (text === 'denied') throw new Error('clipboard write refused');
      calls.push(`clip ${text}`);
    },
    setLoginItemSettings: (settings) => loginItems.push(settings),
    ...patch,
  });
  return { hooks, calls, dialogs, loginItems };
}

describe('createPlatformHooks', () => {
  it('reveals, opens and copies through the shell functions', async () => {
    const { hooks, calls } = setup('darwin');
    hooks.revealFile('/rec/a.mp4');
    await hooks.openFile('/rec/a.mp4');
    await hooks.writeClipboard('https://x.ngrok.app/hook?token=t');
    expect(calls).toEqual(['reveal /rec/a.mp4', 'open /rec/a.mp4', 'clip https://x.ngrok.app/hook?token=t']);
  });

  it('awaits the asynchronous clipboard (Electron 44+), so a refused write is an error, not a silent no-op', async () => {
    const { hooks } = setup('linux');
    await expect(hooks.writeClipboard('denied')).rejects.toThrow('clipboard write refused');
  });

  it('turns a failed open into a ConfigError the user can read', async () => {
    const { hooks } = setup('win32');
    await expect(hooks.openFile('/rec/a.bad')).rejects.toThrow(ConfigError);
  });

  it('picks a folder starting at the current one; a cancel resolves null', async () => {
    const { hooks, dialogs } = setup('darwin');
    await expect(hooks.chooseFolder('/home/me/Videos')).resolves.toBe('/picked');
    expect(dialogs[0]).toMatchObject({
      defaultPath: '/home/me/Videos',
      properties: expect.arrayContaining(['openDirectory', 'createDirectory']),
    });
    const cancelled = setup('darwin', { showOpenDialog: async () => ({ canceled: true, filePaths: [] }) });
    await expect(cancelled.hooks.chooseFolder('/x')).resolves.toBeNull();
  });

  it('macOS and Windows use the login-item API', async () => {
    const { hooks, loginItems } = setup('win32', { linuxAutostart: { dir, execPath: '/x' } });
    await hooks.setLaunchAtLogin(true);
    await hooks.setLaunchAtLogin(false);
    expect(loginItems).toEqual([{ openAtLogin: true }, { openAtLogin: false }]);
  });

  it('Linux writes and removes an XDG autostart entry', async () => {
    const autostart = join(dir, 'autostart');
    const { hooks, loginItems } = setup('linux', {
      linuxAutostart: { dir: autostart, execPath: '/opt/My Apps/Tally.AppImage' },
    });
    await hooks.setLaunchAtLogin(true);
    const entry = await readFile(join(autostart, AUTOSTART_FILE), 'utf8');
    expect(entry).toContain('[Desktop Entry]');
    expect(entry).toContain('Exec="/opt/My Apps/Tally.AppImage"');
    expect(entry).toContain('X-GNOME-Autostart-enabled=true');
    await hooks.setLaunchAtLogin(false);
    await expect(stat(join(autostart, AUTOSTART_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
    await hooks.setLaunchAtLogin(false);
    expect(loginItems).toEqual([]);
  });

  it('quotes Exec arguments per the Desktop Entry spec', () => {
    expect(desktopExecArg('/opt/tally')).toBe('"/opt/tally"');
    expect(desktopExecArg('/a "b"/$HOME/`x`/100%')).toBe('"/a \\\\"b\\\\"/\\\\$HOME/\\\\`x\\\\`/100%%"');
    expect(desktopExecArg('C:\\odd')).toBe('"C:\\\\\\\\odd"');
  });
});
