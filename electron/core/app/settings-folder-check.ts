/**
 * "Can Tally save recordings here?", asked before the producer relies on a folder: the folder is created if
 * missing, and a small file is written and removed, so permissions, a read-only disk or a file in the way
 * show up now rather than when the first recording arrives.
 */
import { isAbsolute } from 'node:path';
import { note, said, type CheckResult, type Note } from '../../contract.js';
import { ensureWritableFolder, folderProblemNote } from '../folder-check.js';

function refused(...notes: Note[]): CheckResult {
  const { text, notes: all } = said(...notes);
  return { ok: false, message: text, notes: all };
}

export async function checkFolder(path: string): Promise<CheckResult> {
  if (!isAbsolute(path)) return refused(note('folderNotAbsolute'));
  try {
    // The core's one folder check (created level by level, never a recursive mkdir that spins on /proc).
    await ensureWritableFolder(path, { source: 'the recordings folder' });
    return { ok: true, message: null, notes: null };
  } catch (error) {
    const code = ((error as { cause?: NodeJS.ErrnoException }).cause ?? (error as NodeJS.ErrnoException)).code;
    return refused(note('folderUnusable', { path }), folderProblemNote(code));
  }
}
