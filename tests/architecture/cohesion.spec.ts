/**
 * Cohesion, not a line count: a file is as long as what it holds, and its name says what that is. The line
 * limit this replaces trimmed files to fit and made grab-bags (a queue, live state, tray snapshot, folder
 * check and message constants in one `core-support.ts`). What is checked instead:
 *
 * - no file is named after nothing (`utils`, `helpers`, `support`, `common`, `misc`…): such a name invites
 *   whatever does not fit elsewhere;
 * - every source file opens with a comment that says what it holds, the first thing a reviewer reads and
 *   the sentence a split is judged by;
 * - within electron/core no two files share a name, beyond each folder's own `index.ts`, `types.ts` and
 *   `errors.ts` (two `folder-check.ts` or two `context.ts` hide which one a reader has open).
 *
 * The review itself (which file holds what, and why it is one file) is docs/architecture.md's tables.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The source files a build ships (no specs, no declarations), under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|svelte)$/.test(e.name) && !/\.(spec|e2e|d)\.ts$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

const ELECTRON = sources('electron');
const RENDERER = sources('renderer/src');

describe('cohesion', () => {
  it('names no file after nothing (utils, helpers, support, common, misc, shared, stuff)', () => {
    const vague = [...ELECTRON, ...RENDERER].filter((f) =>
      /(^|-)(utils?|helpers?|support|common|misc|shared|stuff|things)\.(ts|svelte)$/.test(basename(f)),
    );
    expect(vague).toEqual([]);
  });

  it('opens every source file with a comment that says what it holds', () => {
    const files = [...ELECTRON, ...RENDERER.filter((f) => f.endsWith('.ts'))];
    expect(files.length).toBeGreaterThan(150);
    const silent = files.filter((f) => {
      const first = readFileSync(join(ROOT, f), 'utf8').trimStart();
      return !/^(\/\*\*|\/\/|#!)/.test(first);
    });
    expect(silent).toEqual([]);
  });

  it('gives every file of electron/core a name of its own', () => {
    const byName = new Map<string, string[]>();
    for (const f of ELECTRON.filter((f) => f.startsWith('electron/core/'))) {
      const name = basename(f);
      if (['index.ts', 'types.ts', 'errors.ts'].includes(name)) continue;
      byName.set(name, [...(byName.get(name) ?? []), f]);
    }
    const shared = [...byName.values()].filter((files) => files.length > 1);
    expect(shared).toEqual([]);
  });
});
