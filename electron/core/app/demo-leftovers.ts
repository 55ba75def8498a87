/**
 * What a demo run leaves behind, cleaned when the next demo starts. A demo's journal cannot outlive its run (its
 * jobs point at a sandbox that is gone, on ports that are gone), so each demo starts with an empty list; the
 * files it left must go with that list, or the popover says "nothing yet" beside a folder of older recordings and
 * a `.part` that nothing will ever finish (a trial as a new user found both after restarting `tally serve
 * --sandbox`). The demo's own folder is emptied; in a folder the producer chose (`tally listen --sandbox --folder
 * DIR`) only the unfinished downloads of the previous run are removed, never a saved recording.
 */
import { lstat, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { discardPart } from '../download/fetch-file.js';
import { partPathFor } from '../pipeline/download-manager.js';
import { JOURNAL_FILE, parseLine } from '../recordings/journal-lines.js';
import type { RecordingJob } from '../recordings/types.js';

/** In the demo's state folder: the recordings folder that run downloads into, for the next start to clean. */
const FOLDER_FILE = 'recordings-folder';

/** The last state of every job of a journal (each line is a whole job); none when there is no journal. */
async function lastJobs(stateDir: string): Promise<RecordingJob[]> {
  const text = await readFile(join(stateDir, JOURNAL_FILE), 'utf8').catch(() => '');
  const latest = new Map<string, RecordingJob>();
  for (const line of text.split('\n')) {
    const job = line.trim() === '' ? null : parseLine(line);
    if (job) latest.set(job.key, job);
  }
  return [...latest.values()];
}

/**
 * Removes the partial downloads the previous demo run left in the folder it downloaded into (recorded by
 * `rememberDemoFolder`, else `fallbackFolder`): one for each of its jobs that was not saved. Call it before the
 * demo's state folder is emptied, while the demo's lock is free. Answers how many parts were removed.
 */
export async function removeDemoParts(stateDir: string, fallbackFolder: string): Promise<number> {
  const recorded = (await readFile(join(stateDir, FOLDER_FILE), 'utf8').catch(() => '')).trim();
  const folder = recorded === '' ? fallbackFolder : recorded;
  let removed = 0;
  for (const job of await lastJobs(stateDir)) {
    if (job.state === 'saved') continue;
    const part = partPathFor(folder, job);
    if (!(await lstat(part).catch(() => null))) continue;
    await discardPart(part).catch(() => undefined);
    removed += 1;
  }
  return removed;
}

/** Notes which recordings folder this demo run downloads into (see `removeDemoParts`). */
export async function rememberDemoFolder(stateDir: string, folder: string): Promise<void> {
  await writeFile(join(stateDir, FOLDER_FILE), `${folder}\n`, { mode: 0o600 });
}

/**
 * Empties the demo's own recordings folder of the files a previous run left (recordings, parts, sidecars, and the
 * web client's uploads in its `client` folder, whose list goes with the demo's state too), so a new demo's list
 * and its folder agree. One level of folders is emptied and removed when empty; links are never followed; a
 * missing folder is nothing to do. Answers how many files were removed.
 */
export async function emptyDemoFolder(dir: string, depth = 1): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    const path = join(dir, name);
    const info = await lstat(path).catch(() => null);
    if (info?.isFile()) {
      await rm(path, { force: true });
      removed += 1;
    } else if (info?.isDirectory() && depth > 0) {
      removed += await emptyDemoFolder(path, depth - 1);
      await rmdir(path).catch(() => undefined);
    }
  }
  return removed;
}
