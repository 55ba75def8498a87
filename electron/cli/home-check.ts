/**
 * Whether the data folder (`TALLY_HOME`, or the OS app-data folder) can hold Tally's state, checked before any
 * command runs: a folder that is a file, that this user cannot read or write, or that sits on a read-only disk is
 * said in one line naming TALLY_HOME (issue 32), instead of surfacing later as an unexplained internal error.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { appDataDir } from '../core/paths.js';

/** The error codes of a folder that cannot be used, and how each is said. */
const REASONS: Record<string, string> = {
  EACCES: 'cannot be read and written by this user (permission denied)',
  EPERM: 'cannot be read and written by this user (not permitted)',
  EROFS: 'is on a read-only disk',
  ENOTDIR: 'is inside a file, not a folder',
  EISDIR: 'holds a folder where Tally keeps a file',
  ELOOP: 'is a loop of symbolic links',
  ENAMETOOLONG: 'is too long a path',
};

/** The one line for a data folder `home` that `reason` makes unusable. */
function unusable(home: string, env: NodeJS.ProcessEnv, reason: string): ConfigError {
  return env.TALLY_HOME
    ? new ConfigError(`TALLY_HOME (${home}) ${reason}: point TALLY_HOME at a folder Tally can read and write.`)
    : new ConfigError(
        `The data folder ${home} ${reason}: fix it, or set TALLY_HOME to a folder Tally can read and write.`,
      );
}

/**
 * Throws a ConfigError (one line naming TALLY_HOME) when the data folder cannot be used. A folder that does not
 * exist yet is fine when the nearest folder above it can be written (the commands create it).
 */
export async function checkDataFolder(env: NodeJS.ProcessEnv): Promise<void> {
  const home = resolve(appDataDir(env));
  let path = home;
  for (;;) {
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => error);
    if (info instanceof Error) {
      if (info.code === 'ENOENT' && dirname(path) !== path) {
        path = dirname(path);
        continue;
      }
      throw unusable(home, env, REASONS[info.code ?? ''] ?? `cannot be used (${info.code ?? info.message})`);
    }
    if (!info.isDirectory()) throw unusable(home, env, path === home ? 'is a file, not a folder' : REASONS.ENOTDIR!);
    break;
  }
  // The folder itself (or, before it exists, the one it will be made in) must be readable, writable, searchable.
  const mode = path === home ? constants.R_OK | constants.W_OK | constants.X_OK : constants.W_OK | constants.X_OK;
  const denied = await access(path, mode).catch((error: NodeJS.ErrnoException) => error);
  if (denied) throw unusable(home, env, REASONS[denied.code ?? ''] ?? `cannot be used (${denied.code ?? ''})`);
}

/** An error from the file system about a path inside the data folder, said as the data folder's problem; else null. */
export function dataFolderError(error: unknown, env: NodeJS.ProcessEnv): ConfigError | null {
  const e = error as NodeJS.ErrnoException | null;
  const reason = REASONS[e?.code ?? ''];
  if (!reason || typeof e?.path !== 'string') return null;
  const home = resolve(appDataDir(env));
  const path = resolve(e.path);
  return path === home || path.startsWith(`${home}/`) || path.startsWith(`${home}\\`)
    ? unusable(home, env, reason)
    : null;
}
