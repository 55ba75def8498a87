/**
 * Open and Show in folder for `tally serve`: the tray app has Electron's `shell`, the browser UI has the
 * operating system's own opener (`open` on macOS, `explorer` on Windows, `xdg-open` elsewhere), run by the core
 * on the machine where the recordings are. Only when that machine is the one the page is shown on: a loopback
 * UI on a desktop session. Served to other machines (`--host`) or without a desktop, the actions are absent and
 * the page says why (Copy path still works).
 */
import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import type { PlatformHooks } from '../core/app/types.js';
import { ConfigError } from '../core/errors.js';

export type FileHooks = Pick<PlatformHooks, 'openFile' | 'revealFile'>;

export interface DesktopOpenOptions {
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** Whether the page is served on loopback only (the browser runs on this machine). */
  loopbackOnly: boolean;
}

/** The opener command for a file, and the one that shows it in its folder. */
export function openerCommands(
  path: string,
  platform: NodeJS.Platform,
): { open: [string, string[]]; reveal: [string, string[]] } {
  if (platform === 'darwin') return { open: ['open', [path]], reveal: ['open', ['-R', path]] };
  if (platform === 'win32') return { open: ['explorer.exe', [path]], reveal: ['explorer.exe', [`/select,${path}`]] };
  // xdg-open has no "select this file": the folder opens instead.
  return { open: ['xdg-open', [path]], reveal: ['xdg-open', [dirname(path)]] };
}

/** Whether this process can show files to the person looking at the page. */
export function hasDesktop(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): boolean {
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/** Runs an opener detached; resolves once it started, rejects with one line when it cannot start. */
function launch([command, args]: [string, string[]], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    // An argument vector, never a shell: the path is passed as one argument whatever it contains.
    const child = spawn(command, args, { detached: true, stdio: 'ignore', env });
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
    child.once('error', () =>
      reject(new ConfigError(`"${command}" could not be started to show the recording on this computer.`)),
    );
  });
}

/** The hooks for `createAppCore`, or none when the files cannot be shown to whoever looks at the page. */
export function desktopFileHooks(opts: DesktopOpenOptions): FileHooks {
  const platform = opts.platform ?? process.platform;
  if (!opts.loopbackOnly || !hasDesktop(opts.env, platform)) return {};
  return {
    openFile: (path) => launch(openerCommands(path, platform).open, opts.env),
    revealFile: (path) => launch(openerCommands(path, platform).reveal, opts.env),
  };
}
