/**
 * What the tray app remembers of its crashes, in the data folder so it outlives the process that crashed: the
 * times of its last crashes (`crash-history.json`, for the crash-loop guard: no relaunch after CRASH_LOOP_COUNT
 * crashes within CRASH_LOOP_WINDOW_MS) and the minidumps Electron's crashReporter writes locally (`crashes/`,
 * never uploaded). `tally doctor` and Copy diagnostics list both.
 *
 * Crash times are wall-clock times on purpose: they are compared across processes (a monotonic clock starts
 * again with each one), on the same machine that wrote them.
 */
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Crashes within CRASH_LOOP_WINDOW_MS that make a crash loop: the app stops relaunching itself. */
export const CRASH_LOOP_COUNT = 3;
export const CRASH_LOOP_WINDOW_MS = 60_000;
/** Crash times kept (older ones are forgotten). */
const KEEP = 20;

/** The file of crash times in the data folder `home`. */
export function crashHistoryFile(home: string): string {
  return join(home, 'crash-history.json');
}

/** Where Electron's crashReporter writes its minidumps (set as the app's `crashDumps` path). */
export function crashDumpFolder(home: string): string {
  return join(home, 'crashes');
}

/** The crash times recorded under `home` (ms since the epoch, oldest first); none when unreadable. */
export function readCrashes(home: string): number[] {
  try {
    const parsed = JSON.parse(readFileSync(crashHistoryFile(home), 'utf8')) as { crashes?: unknown };
    return Array.isArray(parsed.crashes)
      ? parsed.crashes.filter((t): t is number => typeof t === 'number' && Number.isFinite(t)).sort((a, b) => a - b)
      : [];
  } catch {
    return [];
  }
}

/**
 * Records a crash at `at` and answers how many crashes (this one included) fall within the crash-loop window
 * before it. Written synchronously, through a temporary file: the process is about to end.
 */
export function recordCrash(home: string, at: number): number {
  const crashes = [...readCrashes(home), at].slice(-KEEP);
  const file = crashHistoryFile(home);
  try {
    writeFileSync(`${file}.tmp`, JSON.stringify({ crashes }), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  } catch {
    // A data folder that cannot be written: the guard still counts this process's own crash.
  }
  return crashes.filter((t) => t <= at && at - t < CRASH_LOOP_WINDOW_MS).length;
}

/** A minidump on disk. */
export interface CrashDump {
  /** Relative to the dump folder. */
  path: string;
  bytes: number;
  at: Date;
}

/** The minidumps under `home`'s dump folder, newest first (none when there is no folder). */
export function listCrashDumps(home: string): CrashDump[] {
  const root = crashDumpFolder(home);
  const found: CrashDump[] = [];
  const walk = (dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < 4) walk(path, depth + 1);
      else if (entry.isFile() && entry.name.endsWith('.dmp')) {
        try {
          const s = statSync(path);
          found.push({ path: relative(root, path), bytes: s.size, at: s.mtime });
        } catch {
          // Removed while listing.
        }
      }
    }
  };
  walk(root, 0);
  return found.sort((a, b) => b.at.getTime() - a.at.getTime());
}
