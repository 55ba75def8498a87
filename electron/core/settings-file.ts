/**
 * The one writer of `settings.json`, for every face (the tray app, `tally serve`, the CLI): read whole and
 * written whole, a write atomic (a temporary file beside it, fsync, rename), tab-indented as `conf` /
 * electron-store wrote it, so files written by earlier versions of the app read as they are.
 *
 * Not `conf` / electron-store (issue 35: two writers of one file, free to drift): conf's schema validator (ajv),
 * migrations (semver) and file watching were about 7 MB of every `tally listen`'s memory (issue 22: under
 * 80 MB), for features Tally does not use. The schema, migrations and repair of the settings are settings.ts's.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The settings file: the whole store, read and written, and where it lives. */
export interface SettingsFileBackend {
  /** The parsed file; `{}` when there is none. Throws a SyntaxError when the file is not JSON. */
  store: Record<string, unknown>;
  readonly path: string;
}

/** Opens `<cwd>/<configName>.json` (nothing is read or created until the store is read or written). */
export function openJsonSettingsFile(options: { cwd: string; configName: string }): SettingsFileBackend {
  const path = join(options.cwd, `${options.configName}.json`);
  return {
    path,
    get store(): Record<string, unknown> {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
        throw error;
      }
      return JSON.parse(text) as Record<string, unknown>;
    },
    set store(value: Record<string, unknown>) {
      mkdirSync(options.cwd, { recursive: true });
      const temporary = `${path}.${process.pid}.tmp`;
      try {
        const fd = openSync(temporary, 'w');
        try {
          // writeFileSync on a descriptor writes it all (a single writeSync may write less).
          writeFileSync(fd, JSON.stringify(value, undefined, '\t'));
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        renameSync(temporary, path);
        // The rename itself is durable only once the folder is flushed too.
        syncFolder(options.cwd);
      } catch (error) {
        rmSync(temporary, { force: true });
        throw error;
      }
    },
  };
}

/** Flushes a folder's entries (a rename in it); where folders cannot be opened for that (Windows), a no-op. */
function syncFolder(folder: string): void {
  let fd: number;
  try {
    fd = openSync(folder, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse to flush a folder: the file's own fsync above still holds.
  } finally {
    closeSync(fd);
  }
}
