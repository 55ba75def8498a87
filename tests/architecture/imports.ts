/**
 * The relative imports between source files, read straight from the text: enough to find cycles and
 * layer breaks without a bundler, and strict enough that `import type` counts too (a type-only cycle
 * still ties two modules' designs together).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Every non-test `.ts` file under `dir`, as absolute paths. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts')) {
      out.push(path);
    }
  }
  return out;
}

/** The files `file` imports by relative path (`.js` specifiers resolved to their `.ts` sources). */
export function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = new Set<string>();
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2];
    if (!spec) continue;
    found.add(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
  }
  return [...found];
}

/** The import cycles among `files`, each as the list of files around it (relative to `root`). */
export function findCycles(files: string[], root: string): string[][] {
  const inSet = new Set(files);
  const graph = new Map(files.map((f) => [f, importsOf(f).filter((t) => inSet.has(t))]));
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        cycles.push(stack.slice(stack.indexOf(next)).map((f) => relative(root, f)));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
}
