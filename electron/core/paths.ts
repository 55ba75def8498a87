/** Where Tally keeps its state and, by default, the recordings, per OS (TALLY_HOME overrides the state). */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * The folder for settings and state (journal, queue, tokens). It is the same folder Electron's
 * `app.getPath('userData')` gives for productName "Tally", so the app and the CLI share state.
 * `TALLY_HOME` overrides it for scripts and tests.
 */
export function appDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.TALLY_HOME) return env.TALLY_HOME;
  const home = homedir();
  switch (platform) {
    case 'darwin':
      return join(home, 'Library', 'Application Support', 'Tally');
    case 'win32':
      return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Tally');
    default:
      return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'Tally');
  }
}

/** Default recordings folder: ~/Movies/Tally on macOS, ~/Videos/Tally elsewhere. */
export function defaultRecordingsDir(platform: NodeJS.Platform = process.platform): string {
  return join(homedir(), platform === 'darwin' ? 'Movies' : 'Videos', 'Tally');
}

/**
 * A folder as a producer types it, made absolute: `~` and `~/…` (as the CLI examples and shells write it) are
 * the home folder, and a relative path is taken from the home folder (a tray app has no working directory worth
 * meaning). Absolute paths are only normalised. The result is what Settings shows back.
 */
export function expandFolder(input: string, home: string = homedir()): string {
  const path = input.trim();
  if (path === '~') return home;
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(home, path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(home, path);
}

/**
 * A folder given on the command line (`--folder`): `~` and `~/…` are the home folder as Settings takes them, for
 * when no shell expanded them (quoted, or from a script), so no folder named `~` is ever made; any other relative
 * path is the shell's, taken from the working directory.
 */
export function expandFolderFlag(input: string, home: string = homedir(), cwd: string = process.cwd()): string {
  const path = input.trim();
  if (path === '~' || path.startsWith('~/') || path.startsWith('~\\')) return expandFolder(path, home);
  return resolve(cwd, path);
}
