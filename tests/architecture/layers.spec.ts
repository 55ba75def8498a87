/**
 * The layering of electron/core is a lint rule, not a habit: these specs prove the rule bites on an
 * upward import (through ESLint itself, with the project's own config), and that no import cycle exists.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { CORE_LAYERS } from '../../eslint.config.js';
import { findCycles, importsOf, sourceFiles } from './imports.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const eslint = new ESLint({ cwd: ROOT });

/** The no-restricted-imports messages ESLint reports for `code` placed at `path`. */
async function layerErrors(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}/${path}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layer rule (npm run lint)', () => {
  it.each([
    // A generic engine reaching into the domain: the cycle this issue started from.
    ['electron/core/download/fixture.ts', "import type { RecordingJob } from '../recordings/types.js';"],
    ['electron/core/recordings/fixture.ts', "import { RecordingPipeline } from '../pipeline/pipeline.js';"],
    ['electron/core/webhook/fixture.ts', "import { mountUploads } from '../uploads/upload-route.js';"],
    ['electron/core/pipeline/fixture.ts', "import { createAppCore } from '../app/app-core.js';"],
    ['electron/core/pipeline/fixture.ts', "import { StudioPublisher } from '../studio/publisher.js';"],
    ['electron/core/studio/fixture.ts', "import { createAppCore } from '../app/app-core.js';"],
    // Siblings in one layer stay apart too.
    ['electron/core/tunnels/fixture.ts', "import { Inbox } from '../recordings/inbox.js';"],
    ['electron/core/download/nested/fixture.ts', "import { Inbox } from '../../recordings/inbox.js';"],
    ['electron/core/settings-fixture.ts', "import { Inbox } from './recordings/inbox.js';"],
    ['electron/core/app/fixture.ts', "import { main } from '../../cli.js';"],
  ])('fails an upward import in %s', async (path, code) => {
    expect(await layerErrors(path, `${code}\nexport {};\n`)).toHaveLength(1);
  });

  it.each([
    ['electron/core/pipeline/fixture.ts', "import { downloadFile } from '../download/fetch-file.js';"],
    ['electron/core/uploads/fixture.ts', "import { WebhookReceiver } from '../webhook/receiver.js';"],
    ['electron/core/studio/fixture.ts', "import type { RecordingPipeline } from '../pipeline/pipeline.js';"],
    ['electron/core/app/fixture.ts', "import type { TunnelStatus } from '../../contract.js';"],
    ['electron/core/download/fixture.ts', "import { TallyError } from '../errors.js';"],
  ])('lets %s import downward', async (path, code) => {
    expect(await layerErrors(path, `${code}\nexport {};\n`)).toEqual([]);
  });

  it('covers every folder of electron/core', () => {
    const folders = new Set(
      sourceFiles(`${ROOT}/electron/core`)
        .map((f) => f.slice(`${ROOT}/electron/core/`.length).split('/'))
        .filter((parts) => parts.length > 1)
        .map((parts) => parts[0]),
    );
    expect([...folders].sort()).toEqual(CORE_LAYERS.flat().sort());
  });
});

describe('import graph', () => {
  it('has no cycles in electron/ (core, shells and contract)', () => {
    const files = sourceFiles(`${ROOT}/electron`);
    // The walker must see the graph for its verdict to mean anything.
    expect(importsOf(`${ROOT}/electron/core/pipeline/pipeline.ts`)).toContain(
      `${ROOT}/electron/core/pipeline/download-queue.ts`,
    );
    expect(findCycles(files, ROOT)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const a = `${ROOT}/tests/architecture/fixtures/cycle-a.ts`;
    const b = `${ROOT}/tests/architecture/fixtures/cycle-b.ts`;
    expect(findCycles([a, b], ROOT)).toEqual([
      ['tests/architecture/fixtures/cycle-a.ts', 'tests/architecture/fixtures/cycle-b.ts'],
    ]);
  });
});
