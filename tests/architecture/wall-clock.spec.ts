/**
 * The rule `tally/wall-clock` (eslint/wall-clock.js, issue 30) bites: a fixture with deadlines, retry times and
 * ages on the wall clock, and one with durations read from `performance.now()` around the core's clock, fail
 * `npm run lint` wherever timing code lives in electron/ (the core, the CLI, the main process), while a time
 * stored or shown, the time module itself, the sandbox and the specs are left alone; and electron/ as it is passes.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const eslint = new ESLint({ cwd: ROOT });
const FIXTURE = readFileSync(join(ROOT, 'tests/architecture/fixtures/wall-clock-deadline.ts'), 'utf8');
const BYPASS = readFileSync(join(ROOT, 'tests/architecture/fixtures/monotonic-bypass.ts'), 'utf8');

/** The lines tally/wall-clock reports for `code` placed at `path`. */
async function wallClockLines(path: string, code: string): Promise<number[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}/${path}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'tally/wall-clock').map((m) => m.line);
}

/** 1-based numbers of a fixture's lines marked `bad`. */
const badLines = (code: string): number[] =>
  code.split('\n').flatMap((line, i) => (line.includes('// bad:') ? [i + 1] : []));
const BAD = badLines(FIXTURE);

describe('tally/wall-clock (npm run lint)', () => {
  it.each([
    'electron/core/pipeline/deadline-fixture.ts',
    'electron/core/download/deadline-fixture.ts',
    'electron/core/recordings/deadline-fixture.ts',
    'electron/core/receive/deadline-fixture.ts',
    'electron/core/app/deadline-fixture.ts',
    'electron/core/deadline-fixture.ts',
    'electron/cli/deadline-fixture.ts',
    'electron/main/deadline-fixture.ts',
  ])('reports every wall-clock deadline, retry time and age in %s', async (path) => {
    expect(BAD).toHaveLength(4);
    expect(await wallClockLines(path, FIXTURE)).toEqual(BAD);
  });

  it.each([
    'electron/core/receive/throttle-fixture.ts',
    'electron/core/studio/throttle-fixture.ts',
    'electron/core/throttle-fixture.ts',
    'electron/cli/throttle-fixture.ts',
    'electron/main/throttle-fixture.ts',
  ])('reports every duration read around the core clock (performance.now, Date.now) in %s', async (path) => {
    expect(badLines(BYPASS)).toHaveLength(5);
    expect(await wallClockLines(path, BYPASS)).toEqual(badLines(BYPASS));
  });

  it.each([
    // The time module reads both clocks; the emulator plays the service, whose clock is the wall clock.
    'electron/core/time.ts',
    'electron/core/sandbox/deadline-fixture.ts',
    // Specs may move clocks by hand.
    'electron/core/pipeline/deadline-fixture.spec.ts',
  ])('leaves %s alone', async (path) => {
    expect(await wallClockLines(path, FIXTURE)).toEqual([]);
    expect(await wallClockLines(path, BYPASS)).toEqual([]);
  });

  it('lets a time be stored or shown, and a stored one be read', async () => {
    const code = [
      'export const at = new Date().toISOString();',
      "export const when = Date.parse('2026-01-02T03:04:05Z');",
      'export const shown = new Date(when).toLocaleTimeString();',
    ].join('\n');
    expect(await wallClockLines('electron/core/pipeline/fine-fixture.ts', code)).toEqual([]);
  });

  it('finds nothing in electron/ as it is', async () => {
    const files: string[] = [];
    for (const entry of readdirSync(join(ROOT, 'electron'), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = join(entry.parentPath, entry.name);
      if (/Date\b|performance|perf_hooks/.test(readFileSync(file, 'utf8'))) files.push(file);
    }
    const results = await eslint.lintFiles(files);
    const found = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === 'tally/wall-clock').map((m) => `${relative(ROOT, r.filePath)}:${m.line}`),
    );
    expect(found).toEqual([]);
  }, 60_000);
});
