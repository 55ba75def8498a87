/**
 * The layering of electron/core is a lint rule, not a habit: these specs prove the rule bites on an
 * upward import (through ESLint itself, with the project's own config), and that no import cycle exists.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { CORE_LAYERS } from '../../eslint.config.js';
import { findCycles, importsOf, sourceFiles } from './imports.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const eslint = new ESLint({ cwd: ROOT });

/** The boundary messages ESLint reports for `code` placed at `path` (eslint/boundaries.js). */
async function layerErrors(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}/${path}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'tally/boundaries').map((m) => m.message);
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
    // Only app/ knows the contract: the domain speaks its own types and notes (core/notes.ts).
    ['electron/core/tunnels/fixture.ts', "import type { TunnelStatus } from '../../contract.js';"],
    ['electron/core/recordings/fixture.ts', "import { note } from '../../contract.js';"],
    ['electron/core/settings-fixture.ts', "import { note } from '../contract.js';"],
  ])('fails an upward import in %s', async (path, code) => {
    expect(await layerErrors(path, `${code}\nexport {};\n`)).toHaveLength(1);
  });

  it.each([
    ['electron/core/pipeline/fixture.ts', "import { downloadFile } from '../download/fetch-file.js';"],
    ['electron/core/uploads/fixture.ts', "import { WebhookReceiver } from '../webhook/receiver.js';"],
    ['electron/core/studio/fixture.ts', "import type { RecordingPipeline } from '../pipeline/pipeline.js';"],
    ['electron/core/app/fixture.ts', "import type { TunnelStatus } from '../../contract.js';"],
    ['electron/core/download/fixture.ts', "import { TallyError } from '../errors.js';"],
    ['electron/core/tunnels/fixture.ts', "import { note } from '../notes.js';"],
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

describe('boundaries at every entry point (npm run lint)', () => {
  it.each([
    // Detours, dynamic imports, absolute paths, require() and re-exports are judged on the resolved path.
    ['electron/core/download/fixture.ts', "import { RecordingPipeline } from '../../core/pipeline/pipeline.js';"],
    ['electron/core/download/fixture.ts', "export const load = () => import('../pipeline/pipeline.js');"],
    [
      'electron/core/download/fixture.ts',
      `import { RecordingPipeline } from '${ROOT}/electron/core/pipeline/pipeline.js';`,
    ],
    [
      'electron/core/download/fixture.ts',
      `export const load = () => import('file://${ROOT}/electron/core/app/app-core.js');`,
    ],
    ['electron/core/download/fixture.ts', "export { Inbox } from '../recordings/inbox.js';"],
    ['electron/core/download/fixture.ts', "export const inbox = require('../recordings/inbox.js');"],
    ['electron/core/download/fixture.ts', "export type P = typeof import('../pipeline/pipeline.js');"],
    ['electron/core/download/fixture.ts', 'export const load = (name: string) => import(name);'],
    ['electron/core/download/fixture.ts', "import { makeCore } from '../../../tests/support/app/core-helpers.js';"],
    // Walk-arounds (issue 35): every way of naming a module is judged like an import.
    [
      'electron/core/download/fixture.ts',
      "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nexport const p = req('../pipeline/pipeline.js');",
    ],
    [
      'electron/core/download/fixture.ts',
      "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nconst again = req;\nexport const p = again('../pipeline/pipeline.js');",
    ],
    [
      'electron/core/fixture.ts',
      "import module from 'node:module';\nexport const p = module.createRequire(import.meta.url)('electron');",
    ],
    [
      'electron/core/download/fixture.ts',
      "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nexport const p = req.resolve('../pipeline/pipeline.js');",
    ],
    ['renderer/src/fixture.ts', "export const fs = process.getBuiltinModule('node:fs');"],
    ['electron/preload/fixture.ts', "export const fs = process.getBuiltinModule('fs');"],
    [
      'electron/core/download/fixture.ts',
      "import { Worker } from 'node:worker_threads';\nexport const w = new Worker(new URL('../pipeline/pipeline.js', import.meta.url));",
    ],
    ['electron/core/download/fixture.ts', "export const where = import.meta.resolve('../app/app-core.js');"],
    // Tests stay out of production folders and out of production imports.
    ['electron/core/download/fixture.e2e.ts', "import { z } from 'zod';"],
    ['electron/core/download/fixture.ts', "import { x } from './fetch-file.spec.js';"],
    // The CLI is headless: no Electron, no main process.
    ['electron/cli/fixture.ts', "import { app } from 'electron';"],
    ['electron/cli/fixture.ts', "import { registerIpc } from '../main/ipc.js';"],
    ['electron/cli/fixture.ts', "import Store from 'electron-store';"],
    // The preload knows the contract only.
    ['electron/preload/fixture.ts', "import { createAppCore } from '../core/app/app-core.js';"],
    ['electron/preload/fixture.ts', "import { readFileSync } from 'node:fs';"],
    ['electron/preload/fixture.ts', "import { registerIpc } from '../main/ipc.js';"],
    // The contract runs in the browser.
    ['electron/contract.ts', "import { app } from 'electron';"],
    ['electron/contract.ts', "import { readFileSync } from 'node:fs';"],
    ['electron/contract.ts', "import { Inbox } from './core/recordings/inbox.js';"],
    ['electron/core/notes.ts', "import { TallyError } from './errors.js';"],
    // The renderer knows the contract only.
    ['renderer/src/fixture.ts', "import { createAppCore } from '../../electron/core/app/app-core.js';"],
    ['renderer/src/fixture.ts', "import { note } from '../../electron/core/notes.js';"],
    ['renderer/src/fixture.ts', "import { readFileSync } from 'fs';"],
    ['renderer/src/fixture.ts', "import { ipcRenderer } from 'electron';"],
    ['renderer/src/fixture.ts', "import { contextBridge } from '../../electron/preload/index.js';"],
    // Main never reaches into the CLI or the renderer.
    ['electron/main/fixture.ts', "import { main } from '../cli.js';"],
    ['electron/main/fixture.ts', "import { i18n } from '../../renderer/src/lib/i18n.js';"],
    ['electron/core/fixture.ts', "import { app } from 'electron';"],
    ['electron/core/health-view.ts', "import { TallyError } from './errors.js';"],
    // A file in electron/ that no runtime rule covers is an error of its own, not a free pass.
    ['electron/new-face.ts', "import { z } from 'zod';"],
  ])('rejects %s: %s', async (path, code) => {
    expect(await layerErrors(path, `${code}\nexport {};\n`)).toHaveLength(1);
  });

  it('follows a re-export chain to the file it ends at (each link allowed, the whole not)', async () => {
    // A face may use the receive service, and the receive service may use the pipeline; a face that imports
    // the pipeline through a relay in receive/ is still a face importing the pipeline.
    const faces = new ESLint({
      cwd: ROOT,
      overrideConfig: {
        files: ['electron/**/*.ts'],
        rules: { 'tally/boundaries': ['error', { layers: CORE_LAYERS, domain: ['pipeline'] }] },
      },
    });
    const relay = `${ROOT}/electron/core/receive/relay-fixture.ts`;
    const hop = `${ROOT}/electron/core/receive/hop-fixture.ts`;
    await writeFile(hop, "export * from '../pipeline/pipeline.js';\n");
    await writeFile(relay, "export type { Nothing } from './nothing.js';\nexport * from './hop-fixture.js';\n");
    try {
      const lint = async (code: string) => {
        const [result] = await faces.lintText(`${code}\nexport {};\n`, { filePath: `${ROOT}/electron/cli/fixture.ts` });
        return (result?.messages ?? []).filter((m) => m.ruleId === 'tally/boundaries').map((m) => m.message);
      };
      expect(await lint("import { RecordingPipeline } from '../core/receive/relay-fixture.js';")).toEqual([
        expect.stringMatching(
          /never import electron\/core\/pipeline .*re-exported by electron\/core\/receive\/hop-fixture\.ts/,
        ),
      ]);
      expect(await lint("import { RecordingPipeline } from '../core/pipeline/pipeline.js';")).toEqual([
        expect.stringContaining('never import electron/core/pipeline'),
      ]);
      expect(await lint("import { ReceiveService } from '../core/receive/receive-service.js';")).toEqual([]);
    } finally {
      await rm(relay, { force: true });
      await rm(hop, { force: true });
    }
  });

  it('follows a symlink to the file it names before judging', async () => {
    const link = `${ROOT}/tests/architecture/fixtures/pipeline-link.ts`;
    await rm(link, { force: true });
    await symlink(`${ROOT}/electron/core/pipeline/pipeline.ts`, link);
    try {
      const code = "import { RecordingPipeline } from '../../../tests/architecture/fixtures/pipeline-link.js';";
      expect(await layerErrors('electron/core/download/fixture.ts', `${code}\nexport {};\n`)).toEqual([
        'electron/core/download may import only from the layers below it (docs/architecture.md).',
      ]);
    } finally {
      await rm(link, { force: true });
    }
  });

  it.each([
    ['electron/cli/fixture.ts', "import { createAppCore } from '../core/app/app-core.js';"],
    ['electron/main/fixture.ts', "import { app } from 'electron';"],
    ['electron/main/fixture.ts', "import { READY_CHANNEL } from '../preload/ipc-protocol.js';"],
    ['electron/preload/fixture.ts', "import { contextBridge } from 'electron';"],
    ['electron/preload/fixture.ts', "import { createBridge } from '../contract.js';"],
    ['electron/contract.ts', "import { z } from 'zod';"],
    ['renderer/src/fixture.ts', "import { createBridge } from '../../electron/contract.js';"],
    ['renderer/src/fixture.svelte.ts', "import { SvelteMap } from 'svelte/reactivity';"],
    ['electron/core/download/fixture.spec.ts', "import { RecordingPipeline } from '../pipeline/pipeline.js';"],
  ])('lets %s: %s', async (path, code) => {
    expect(await layerErrors(path, `${code}\nexport {};\n`)).toEqual([]);
  });
});

/** The domain folders the faces reach only through the services, with a real file of each (issue 35). */
const DOMAIN_FILES = [
  ['pipeline', 'pipeline/pipeline.js', 'RecordingPipeline'],
  ['studio', 'studio/publisher.js', 'StudioPublisher'],
  ['download', 'download/fetch-file.js', 'downloadFile'],
  ['recordings', 'recordings/inbox.js', 'Inbox'],
  ['webhook', 'webhook/receiver.js', 'WebhookReceiver'],
  ['tunnels', 'tunnels/index.js', 'parseTunnelFlag'],
] as const;

describe('faces talk to services only (issue 35, npm run lint)', () => {
  const faces = ['electron/cli/fixture.ts', 'electron/main/fixture.ts'] as const;
  const cases = faces.flatMap((face) =>
    DOMAIN_FILES.map(([folder, file, name]) => [face, folder, file, name] as const),
  );

  it('names the domain folders in the project config', () => {
    expect(DOMAIN_FILES.map(([folder]) => folder).sort()).toEqual(
      ['download', 'pipeline', 'recordings', 'studio', 'tunnels', 'webhook'].sort(),
    );
  });

  it.each(cases)('fails %s importing electron/core/%s directly', async (face, folder, file, name) => {
    expect(await layerErrors(face, `import { ${name} } from '../core/${file}';\nexport {};\n`)).toEqual([
      expect.stringContaining(`never import electron/core/${folder}`),
    ]);
  });

  it.each(cases)(
    'fails %s importing electron/core/%s through a relay in receive/',
    async (face, folder, file, name) => {
      // Each link is allowed (a face may use receive/, receive/ may use the domain): the chain is not.
      const relay = `${ROOT}/electron/core/receive/relay-${face.split('/')[1]}-${folder}-fixture.ts`;
      await writeFile(relay, `export { ${name} } from '../${file}';\n`);
      try {
        const code = `import { ${name} } from '../core/receive/${relay.split('/').pop()!.replace(/\.ts$/, '.js')}';`;
        expect(await layerErrors(face, `${code}\nexport {};\n`)).toEqual([
          expect.stringMatching(
            new RegExp(`never import electron/core/${folder} .*re-exported by electron/core/receive/`),
          ),
        ]);
      } finally {
        await rm(relay, { force: true });
      }
    },
  );

  it.each(faces)('lets %s use the services and their event types', async (face) => {
    const code = [
      "import { ReceiveService } from '../core/receive/receive-service.js';",
      "import type { RecordingSaved } from '../core/receive/receive-events.js';",
      "import { createAppCore } from '../core/app/app-core.js';",
    ].join('\n');
    expect(await layerErrors(face, `${code}\nexport {};\n`)).toEqual([]);
  });

  it('finds no production file of electron/cli or electron/main that imports a domain folder', () => {
    const folders = DOMAIN_FILES.map(([folder]) => `${ROOT}/electron/core/${folder}/`);
    const faceFiles = [
      ...sourceFiles(`${ROOT}/electron/cli`),
      ...sourceFiles(`${ROOT}/electron/main`),
      `${ROOT}/electron/cli.ts`,
    ];
    expect(faceFiles.length).toBeGreaterThan(30);
    const reaching = faceFiles.flatMap((file) =>
      importsOf(file)
        .filter((target) => folders.some((folder) => target.startsWith(folder)))
        .map((target) => `${relative(ROOT, file)} -> ${relative(ROOT, target)}`),
    );
    expect(reaching).toEqual([]);
  });
});

describe('one backoff (npm run lint)', () => {
  const syntaxErrors = async (path: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath: `${ROOT}/${path}` });
    return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
  };

  it.each([
    ['electron/core/studio/fixture.ts', 'export const wait = (n: number) => Math.min(30_000, 500 * 2 ** n);'],
    ['electron/cli/fixture.ts', 'export const wait = (n: number) => 250 * 2 ** (n - 1);'],
    ['electron/main/ipc.ts', 'export const wait = (n: number) => 250 * 2 ** n;'],
    ['electron/core/tunnels/fixture.ts', 'export const wait = (n: number) => 250 * Math.pow(2, n);'],
    ['electron/core/tunnels/fixture.ts', 'export const wait = (n: number) => 250 * (1 << n);'],
    ['renderer/src/lib/fixture.ts', 'export const wait = (n: number) => Math.min(10_000, 500 * 2 ** n);'],
  ])('rejects a backoff formula of its own in %s: %s', async (path, code) => {
    expect(await syntaxErrors(path, code)).toEqual([expect.stringContaining('electron/core/backoff.ts')]);
  });

  // The walk-around pipeline.ts used: a wait doubled by hand, no `**` anywhere.
  it.each([
    'let delayMs = 2_000; export const next = () => (delayMs = Math.min(delayMs * 2, 30_000));',
    'let wait = 2_000; export const next = () => (wait = Math.min(2 * wait, 30_000));',
    'let RETRY_MS = 2_000; export const next = () => (RETRY_MS <<= 1);',
    'let pause = 500; export const next = () => (pause *= 2);',
    'export class A { #listenDelayMs = 2_000; next() { this.#listenDelayMs = this.#listenDelayMs * 2; } }',
    'export const o = { backoff: 100 }; export const next = () => (o.backoff = o.backoff << 1);',
  ])('rejects a wait doubled by hand: %s', async (code) => {
    expect(await syntaxErrors('electron/core/pipeline/fixture.ts', code)).toEqual([
      expect.stringContaining('electron/core/backoff.ts'),
    ]);
  });

  it.each([
    'export const MAX = 2 ** 32 - 1;',
    'export const left = (i: number) => 2 * i + 1;',
    'export const grown = (size: number) => size * 2;',
    'export const FLAG = 1 << 4;',
    'export const halfMs = (ms: number) => ms / 2;',
  ])('lets arithmetic that is no backoff be: %s', async (code) => {
    expect(await syntaxErrors('electron/core/sandbox/fixture.ts', code)).toEqual([]);
  });
});

describe('import graph', () => {
  it('has no cycles in electron/ (core, shells and contract)', () => {
    const files = sourceFiles(`${ROOT}/electron`);
    // The walker must see the graph for its verdict to mean anything.
    expect(importsOf(`${ROOT}/electron/core/pipeline/pipeline.ts`)).toContain(
      `${ROOT}/electron/core/pipeline/download-manager.ts`,
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
describe('test code', () => {
  /** Every file under `dir` that is not a spec (what a build or a bundle may pick up). */
  const productionFiles = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && !/\.(spec|e2e)\.ts$/.test(e.name))
      .map((e) => join(e.parentPath, e.name));

  it('keeps test helpers out of electron/ and renderer/src (they live in tests/support and renderer/testing)', () => {
    const files = [...productionFiles(`${ROOT}/electron`), ...productionFiles(`${ROOT}/renderer/src`)];
    expect(files.length).toBeGreaterThan(100);
    const helpers = files.filter((f) => /(^|\/)test-/.test(relative(ROOT, f)));
    const usingVitest = files.filter((f) => /from ['"]vitest['"]/.test(readFileSync(f, 'utf8')));
    expect([...helpers, ...usingVitest].map((f) => relative(ROOT, f))).toEqual([]);
  });

  it('has no test hook in production code, exported or not: tests inject what they replace (issue 35)', () => {
    // A `setXForTesting` / `testOnlyX` function, method or accessor is a door into production state that only
    // discipline keeps shut; a dependency handed in (CommandIo.secrets for the keychain, the app core's
    // startSandbox and openPipeline, a Redactor of the test's own) needs none.
    const hooks = (file: string): string[] =>
      hookNames(readFileSync(file, 'utf8')).map((name) => `${relative(ROOT, file)}: ${name}`);
    const found = productionFiles(`${ROOT}/electron`)
      .filter((f) => f.endsWith('.ts'))
      .flatMap(hooks);
    expect(found).toEqual([]);
    // The check finds each shape a hook had (exported, module-private, an accessor, a method) and no word in a
    // comment or a string.
    expect(hookNames(readFileSync(`${ROOT}/tests/architecture/fixtures/test-hooks.ts`, 'utf8')).sort()).toEqual([
      'forgetForTesting',
      'setSecretStoreForTesting',
      'testOnly',
      'testOnlyConnectTo',
    ]);
  });

  it('ships no test twin: an in-memory stand-in for tests lives in tests/support (issue 35)', () => {
    const twins = productionFiles(`${ROOT}/electron`).filter((f) =>
      /TEST (TWIN|HELPER)|not for production/i.test(readFileSync(f, 'utf8').slice(0, 2_000)),
    );
    expect(twins.map((f) => relative(ROOT, f))).toEqual([]);
  });
});

describe('one receive service (issue 19)', () => {
  it('is the only place a recording pipeline is opened and a studio publisher is made', () => {
    const makers = sourceFiles(`${ROOT}/electron`)
      .filter((f) => /RecordingPipeline\.open\(|new StudioPublisher\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(makers).toEqual(['electron/core/receive/receive-service.ts']);
  });
});

describe('one member service (issue 31)', () => {
  it('is the only place a studio follower is made: the app and tally follow both go through it', () => {
    const makers = sourceFiles(`${ROOT}/electron`)
      .filter((f) => /new StudioFollower\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(makers).toEqual(['electron/core/receive/member-service.ts']);
    const faces = ['electron/cli/follow.ts', 'electron/core/app/studio-host.ts'];
    for (const face of faces) expect(readFileSync(`${ROOT}/${face}`, 'utf8')).toContain('new MemberService(');
  });
});

/** The names in `code` (comments and strings left out) that only a test hook bears: `…ForTesting`, `testOnly…`. */
function hookNames(code: string): string[] {
  const bare = code
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '')
    .replace(/(['"`])(?:\\.|(?!\1)[^\\\n])*\1/g, "''");
  return [...new Set(bare.match(/\b\w*ForTesting\b|\btestOnly\w*\b/g) ?? [])];
}
