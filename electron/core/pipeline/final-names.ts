/**
 * Final names of downloads: a name is reserved by a marker file until the verified file is renamed onto it, and
 * the extension is the one the file's first bytes announce. Split from the download queue, which uses both.
 */
import { lstat, open, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UnsafePathError } from '../download/errors.js';
import { statePathFor } from '../download/part-state.js';
import { removePlantedLink } from '../folder-check.js';
import { mediaExt, pickFinalName, safeFileName, sniffMediaExt } from '../recordings/filename.js';

/** Suffix of the marker file that holds a final name for one job while its file is being put in place. */
export const RESERVATION_SUFFIX = '.reserved';

/** Markers this process holds (path → job key): authoritative while their content may still be being written. */
const heldMarkers = new Map<string, string>();

/**
 * Chooses the final path for a verified download (`base.ext`, then `base (2).ext`...) WITHOUT creating it: a
 * final name must only ever appear with the complete file, which the engine's rename puts there, so a crash
 * can never leave an empty or partial file under it. The name is held by a marker `<name>.reserved` that
 * contains the job key (created exclusively, so other jobs and other processes skip the name); a restart of
 * the same job finds its own marker and gets the same name back. An EMPTY marker that this process is not
 * writing was cut short by a crash between its creation and its content (nobody holds it): it is taken over.
 */
export async function reserveFinalName(folder: string, base: string, ext: string, key: string): Promise<string> {
  return pickFinalName(folder, safeFileName(base), mediaExt(ext), async (candidate) => {
    const marker = `${candidate}${RESERVATION_SUFFIX}`;
    const holder = heldMarkers.get(marker);
    if (holder !== undefined && holder !== key) return undefined;
    if (holder === undefined) {
      heldMarkers.set(marker, key);
      // A link planted at the marker would make the take-over below write through it: the link goes first.
      await removePlantedLink(marker);
      try {
        await writeFile(marker, key, { flag: 'wx', mode: 0o600 });
      } catch (error) {
        const found =
          (error as NodeJS.ErrnoException).code === 'EEXIST' ? await readFile(marker, 'utf8').catch(() => null) : null;
        if (found === '') await writeFile(marker, key, { mode: 0o600 }).catch(() => undefined);
        if (found !== key && found !== '') {
          heldMarkers.delete(marker);
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
          return undefined;
        }
      }
    }
    // lstat: anything at the name counts, a link (even a dangling one) too, so a rename never replaces it.
    const taken = await lstat(candidate).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    if (!taken) return candidate;
    heldMarkers.delete(marker);
    await rm(marker, { force: true });
    return undefined;
  });
}

/** The media extension the part's first bytes announce, or null (unknown container, or unreadable). */
export async function sniffPart(partPath: string): Promise<string | null> {
  const handle = await open(partPath, 'r').catch(() => null);
  if (!handle) return null;
  try {
    const head = Buffer.alloc(64);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return sniffMediaExt(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** Removes the marker of a final name once the file is in place and recorded. */
export async function releaseFinalName(finalPath: string): Promise<void> {
  const marker = `${finalPath}${RESERVATION_SUFFIX}`;
  heldMarkers.delete(marker);
  await rm(marker, { force: true }).catch(() => undefined);
}

/**
 * The paths this job writes (part, its sidecar and the sidecar's temporary) must not be symbolic links: a link
 * found there is removed (never followed) and the attempt fails saying so; the next attempt starts clean.
 */
export async function refusePlantedLinks(partPath: string): Promise<void> {
  const sidecar = statePathFor(partPath);
  const found: string[] = [];
  for (const file of [partPath, sidecar, `${sidecar}.tmp`]) {
    if (await removePlantedLink(file)) found.push(path.basename(file));
  }
  if (found.length > 0) {
    throw new UnsafePathError(
      `A symbolic link had been put at ${found.join(', ')} in the recordings folder. Tally removed it without following it and tries again.`,
    );
  }
}
