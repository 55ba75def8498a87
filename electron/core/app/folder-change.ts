/**
 * A changed recordings folder is accepted only once it exists and takes a file: saving /proc/x would otherwise
 * wedge the pipeline. Replaces the folder in both the patch and the next settings with its resolved path.
 */
import { note } from '../../contract.js';
import { ensureWritableFolder } from '../folder-check.js';
import type { Settings } from '../settings.js';

export async function checkFolderChange(
  before: Settings,
  next: Settings,
  patch: { recordingsFolder?: string },
): Promise<void> {
  if (patch.recordingsFolder === undefined || patch.recordingsFolder === before.recordingsFolder) return;
  // Said under the folder field itself: no pointer to the section the producer is already in.
  const folder = await ensureWritableFolder(next.recordingsFolder, { source: note('folderSourceField') });
  patch.recordingsFolder = folder;
  next.recordingsFolder = folder;
}
