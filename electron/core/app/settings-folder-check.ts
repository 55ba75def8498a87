/**
 * "Can Tally save recordings here?", asked before the producer relies on a folder: the folder is created if
 * missing, and a small file is written and removed, so permissions, a read-only disk or a file in the way
 * show up now rather than when the first recording arrives.
 */
import { note, said, type CheckResult, type Note } from '../../contract.js';
import { ensureWritableFolder, folderProblemNote } from '../folder-check.js';
import { expandFolder } from '../paths.js';

function refused(...notes: Note[]): CheckResult {
  const { text, notes: all } = said(...notes);
  return { ok: false, message: text, notes: all };
}

/** Checks the folder as Settings will save it: `~` and relative paths resolved (see expandFolder). */
export async function checkFolder(input: string, home?: string): Promise<CheckResult> {
  const path = expandFolder(input, home);
  try {
    // The core's one folder check (created level by level, never a recursive mkdir that spins on /proc).
    await ensureWritableFolder(path, { source: 'the recordings folder' });
    return { ok: true, message: null, notes: null, path };
  } catch (error) {
    const code = ((error as { cause?: NodeJS.ErrnoException }).cause ?? (error as NodeJS.ErrnoException)).code;
    return { ...refused(note('folderUnusable', { path }), folderProblemNote(code)), path };
  }
}
