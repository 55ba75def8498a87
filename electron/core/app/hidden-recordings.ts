/**
 * Recordings the producer removed from the list. Removing hides the entry only: the file stays where it
 * was saved, and the inbox keeps its job so a repeated webhook for the same recording is still recognised
 * as a duplicate. Kept in its own small file in the state folder (not in the journal, whose format the
 * pipeline owns), bounded so it cannot grow without end.
 */
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

export const HIDDEN_FILE = 'hidden-recordings.json';
/** Far more than a list anyone scrolls; the oldest removals are forgotten first. */
const MAX_KEYS = 5000;

const fileSchema = z.object({ keys: z.array(z.string().max(4096)).max(MAX_KEYS) });

/** What a reader of the removed rows sees (the receive service, the studio host): handed down, read live. */
export type HiddenKeys = Pick<HiddenRecordings, 'has'>;

export class HiddenRecordings {
  readonly #file: string;
  readonly #keys: Set<string>;
  /** Saves run one after another so an older write never lands after a newer one. */
  #saving: Promise<void> = Promise.resolve();

  constructor(stateDir: string) {
    this.#file = join(stateDir, HIDDEN_FILE);
    this.#keys = new Set(readKeys(this.#file));
  }

  has(key: string): boolean {
    return this.#keys.has(key);
  }

  /** Hides `key` and persists the list; resolves once it is on disk. */
  add(key: string): Promise<void> {
    this.#keys.delete(key);
    this.#keys.add(key);
    while (this.#keys.size > MAX_KEYS) this.#keys.delete(this.#keys.values().next().value as string);
    const body = JSON.stringify({ keys: [...this.#keys] });
    const write = async () => {
      // Write-then-rename: a crash mid-write leaves the previous list, never half a file.
      const temp = `${this.#file}.tmp`;
      await writeFile(temp, body, { mode: 0o600 });
      await rename(temp, this.#file);
    };
    this.#saving = this.#saving.then(write, write);
    return this.#saving;
  }
}

/** The saved keys; a missing or damaged file means none are hidden (hiding is a convenience, never data). */
function readKeys(file: string): string[] {
  try {
    const parsed = fileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data.keys : [];
  } catch {
    return [];
  }
}
