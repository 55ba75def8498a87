// @ts-check
/**
 * The process and layer boundaries of Tally as one ESLint rule, in the style of Signal-Desktop's file-suffix
 * rule: every import is resolved to the real path of the file it names before it is judged, so a detour
 * (`../../core/pipeline/pipeline.js` from core/download), an absolute path, a symlink, a dynamic `import()`,
 * a `require()` or an `export … from` is judged like a plain relative import. What may import what is decided
 * by the runtime of both files (docs/architecture.md):
 *
 * - contract (electron/contract.ts, contract-errors.ts, shell-text.ts), core/notes.ts, core/health-view.ts and
 *   core/backoff.ts + core/retry-loop.ts (the one retry policy and loop, the browser's reconnect too): browser-safe, zod only;
 * - renderer/: the browser and the contract, never Node, Electron or the core;
 * - preload/: Electron's sandboxed preload and the contract, never Node or the core;
 * - main/: Electron and Node, the core, the contract and the preload's IPC protocol, never the CLI or renderer;
 * - cli/: Node without Electron, the core and the contract, never main/, preload/ or renderer/;
 * - electron/core: Node without Electron, each folder only the layers below it (CORE_LAYERS); only app/ knows
 *   the contract; root files know no folder.
 *
 * Specs are exempt from the file rules (an integration spec may reach across) and may use Node, never Electron
 * outside main/ and the preload.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
const NODE_BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
const ELECTRON_PACKAGES = ['electron', 'electron-store', 'electron-updater'];

/** The real path of `file` when it (or its `.ts` source, for a `.js` specifier) exists; else `file` itself. */
function realPath(file) {
  for (const candidate of [file, file.replace(/\.js$/, '.ts'), file.replace(/\.js$/, '.svelte.ts')]) {
    if (existsSync(candidate)) return realpathSync(candidate);
  }
  return file;
}

/** The package a bare specifier names (`@scope/name`, `name`), or the builtin itself. */
function packageOf(spec) {
  if (NODE_BUILTINS.has(spec) || NODE_BUILTINS.has(spec.split('/')[0] ?? '')) return spec.split('/')[0] ?? spec;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec);
}

/** `export … from '…'` and `export * from '…'` specifiers of a file, by its real path (cached per lint run). */
const reexportCache = new Map();
function reexportsOf(file) {
  let stamp = -1;
  try {
    stamp = statSync(file).mtimeMs;
  } catch {
    // A package or a missing file: nothing to follow.
  }
  const cached = reexportCache.get(file);
  let specs = cached?.stamp === stamp ? cached.specs : undefined;
  if (specs === undefined) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // Not a readable source file (a package, a missing file): it re-exports nothing we can judge.
    }
    specs = [...text.matchAll(/^\s*export\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s*from\s*['"]([^'"]+)['"]/gm)]
      .map((m) => m[1] ?? '')
      .filter((spec) => spec.startsWith('.'));
    reexportCache.set(file, { stamp, specs });
  }
  return specs;
}

/**
 * Follows the re-export chains that start at `file` and returns the first file the importer may not reach,
 * with the file that relayed it. The contract's re-exports are exempt: they are the vocabulary it publishes
 * to the renderer and the shells on purpose.
 */
function throughReexports(file, judgeFile, seen = new Set()) {
  if (seen.has(file)) return null;
  seen.add(file);
  const relative = path.relative(ROOT, file).split(path.sep).join('/');
  if (zoneOf(relative).zone === 'contract') return null;
  for (const spec of reexportsOf(file)) {
    const next = realPath(path.resolve(path.dirname(file), spec));
    const nextRelative = path.relative(ROOT, next).split(path.sep).join('/');
    const problem = judgeFile(nextRelative);
    if (problem) return { problem, via: relative };
    const deeper = throughReexports(next, judgeFile, seen);
    if (deeper) return deeper;
  }
  return null;
}

/**
 * Where a project file sits: its runtime zone, and for electron/core its folder ('' for the root files).
 * Paths are relative to the project root, with forward slashes.
 */
export function zoneOf(relative) {
  // The shell's words (tray menu, notifications) are contract vocabulary: main, the core and the renderer share them.
  if (['electron/contract.ts', 'electron/contract-errors.ts', 'electron/shell-text.ts'].includes(relative)) {
    return { zone: 'contract' };
  }
  // The core's vocabulary that the contract re-exports to the renderer: browser-safe like the contract.
  if (
    [
      'electron/core/notes.ts',
      'electron/core/note-schema.ts',
      'electron/core/notes-ko.ts',
      'electron/core/health-view.ts',
      'electron/core/view-shapes.ts',
      'electron/core/backoff.ts',
      'electron/core/retry-loop.ts',
    ].includes(relative)
  ) {
    return { zone: 'notes' };
  }
  const core = /^electron\/core\/(?:([^/]+)\/)?[^/]+$/.exec(relative) ?? /^electron\/core\/([^/]+)\//.exec(relative);
  if (core) return { zone: 'core', folder: core[1] ?? '' };
  if (relative === 'electron/cli.ts' || relative.startsWith('electron/cli/')) return { zone: 'cli' };
  if (relative.startsWith('electron/main/')) return { zone: 'main' };
  if (relative.startsWith('electron/preload/')) return { zone: 'preload' };
  if (relative.startsWith('renderer/')) return { zone: 'renderer' };
  if (relative.startsWith('tests/') || relative.startsWith('bench/') || relative.startsWith('scripts/')) {
    return { zone: 'test' };
  }
  if (relative.startsWith('..') || path.isAbsolute(relative)) return { zone: 'outside' };
  if (relative.startsWith('electron/')) return { zone: 'unplaced' };
  return { zone: 'other' };
}

/** Packages each runtime may not load (null: any package). */
function packageRule(zone, pkg) {
  const isNode = NODE_BUILTINS.has(pkg);
  const isElectron = ELECTRON_PACKAGES.includes(pkg);
  switch (zone) {
    case 'contract':
    case 'notes':
      return pkg === 'zod'
        ? null
        : 'The contract and core/notes.ts run in the browser too: they import nothing but zod.';
    case 'renderer':
      if (isNode || isElectron) return 'renderer/ runs in the browser: no Node, no Electron; go through the contract.';
      return null;
    case 'preload':
      if (isNode) return 'The preload is sandboxed: no Node modules, only electron and the contract.';
      return null;
    case 'core':
    case 'cli':
      if (isElectron)
        return `electron/${zone === 'core' ? 'core' : 'cli'} runs in plain Node: it never imports Electron.`;
      return null;
    default:
      return null;
  }
}

/** Why a face (cli/, main/) may not reach into a domain folder of the core. */
const faceRule = (folder) =>
  `Faces talk to services only: electron/cli and electron/main never import electron/core/${folder} (use the app core, the receive service or the member service; docs/architecture.md).`;

/** Why a file of `from` may not import the project file `to` (null when it may). */
function fileRule(from, to, toRelative, layers, domain = []) {
  const isContract = to.zone === 'contract' || to.zone === 'notes';
  const layerOf = (folder) => layers.findIndex((layer) => layer.includes(folder));
  if (to.zone === 'unplaced') {
    return `${toRelative} has no runtime in the boundary rules: place it in eslint/boundaries.js (zoneOf) first.`;
  }
  if (to.zone === 'test' || to.zone === 'outside' || to.zone === 'other') {
    if (from.zone === 'test' || from.zone === 'other') return null;
    return `${toRelative} is not source of the app: production code imports only from electron/ and renderer/.`;
  }
  switch (from.zone) {
    case 'contract':
      return isContract
        ? null
        : 'The contract imports only the contract files, core/notes.ts, core/health-view.ts, core/view-shapes.ts, core/backoff.ts and core/retry-loop.ts.';
    case 'notes':
      return to.zone === 'notes'
        ? null
        : 'core/notes.ts and core/health-view.ts import only each other (the renderer bundles them).';
    case 'renderer':
      return to.zone === 'renderer' || to.zone === 'contract'
        ? null
        : 'renderer/ knows only the contract (electron/contract.ts): never the core, main/, preload/ or cli/.';
    case 'preload':
      return to.zone === 'preload' || to.zone === 'contract'
        ? null
        : 'The preload knows only the contract and its own files: never the core, main/ or cli/.';
    case 'main':
      if (to.zone === 'core' && domain.includes(to.folder ?? '')) return faceRule(to.folder ?? '');
      if (to.zone === 'main' || to.zone === 'core' || isContract) return null;
      if (toRelative === 'electron/preload/ipc-protocol.ts') return null;
      return 'main/ uses the core and the contract; never cli/, renderer/ or the preload (beyond its IPC protocol).';
    case 'cli':
      if (to.zone === 'core' && domain.includes(to.folder ?? '')) return faceRule(to.folder ?? '');
      if (to.zone === 'cli' || to.zone === 'core' || isContract) return null;
      return 'cli/ is headless: it uses the core and the contract, never main/, preload/ or renderer/.';
    case 'core': {
      if (to.zone === 'notes') return null;
      if (to.zone === 'contract') {
        return from.folder === 'app'
          ? null
          : `Only electron/core/app maps the core's types to the contract's views: electron/core/${from.folder || '(root)'} returns its own types (notes come from core/notes.ts).`;
      }
      if (to.zone !== 'core') return 'electron/core never imports the shells that sit on top of it.';
      if (from.folder === '') {
        return to.folder === '' ? null : 'Files at the root of electron/core import no folder of it.';
      }
      if (to.folder === '' || to.folder === from.folder) return null;
      const mine = layerOf(from.folder);
      const theirs = layerOf(to.folder);
      if (theirs !== -1 && mine !== -1 && theirs < mine) return null;
      return `electron/core/${from.folder} may import only from the layers below it (docs/architecture.md).`;
    }
    default:
      return null;
  }
}

/** @type {import('eslint').Rule.RuleModule} */
export const boundaries = {
  meta: {
    type: 'problem',
    docs: { description: 'Process and layer boundaries, judged on resolved paths (docs/architecture.md).' },
    schema: [
      {
        type: 'object',
        properties: {
          layers: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
          // Folders of electron/core that the faces (cli/, main/) may not import: they go through the services.
          domain: { type: 'array', items: { type: 'string' } },
        },
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const layers = /** @type {string[][]} */ (context.options[0]?.layers ?? []);
    const domain = /** @type {string[]} */ (context.options[0]?.domain ?? []);
    const filename = realPath(context.filename);
    const relativeFile = path.relative(ROOT, filename).split(path.sep).join('/');
    const from = zoneOf(relativeFile);
    if (from.zone === 'test' || from.zone === 'other' || from.zone === 'outside') return {};
    if (from.zone === 'unplaced') {
      return {
        Program: (node) =>
          context.report({
            node,
            message: `${relativeFile} has no runtime in the boundary rules: place it in eslint/boundaries.js (zoneOf).`,
          }),
      };
    }
    const isSpec = /\.(spec|e2e)\.ts$/.test(filename);
    // End-to-end tests drive the built app from outside: in a production folder they would be built with it.
    if (/\.e2e\.ts$/.test(filename)) {
      return {
        Program: (node) =>
          context.report({
            node,
            message: `${relativeFile}: end-to-end tests live in tests/e2e, not beside production code.`,
          }),
      };
    }

    /** @param {import('estree').Node} node @param {unknown} source */
    const judge = (node, source) => {
      if (!source || typeof source !== 'object') return;
      const literal =
        /** @type {{ type: string; value?: unknown; quasis?: { value: { cooked: string } }[]; expressions?: unknown[] }} */ (
          source
        );
      let spec = null;
      if (literal.type === 'Literal' && typeof literal.value === 'string') spec = literal.value;
      else if (literal.type === 'TemplateLiteral' && literal.expressions?.length === 0) {
        spec = literal.quasis?.[0]?.value.cooked ?? null;
      }
      if (spec === null) {
        if (isSpec) return;
        context.report({
          node,
          message: 'A computed import() cannot be judged by the layer rules: import a literal path.',
        });
        return;
      }
      if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('file:')) {
        const target = spec.startsWith('file:') ? fileURLToPath(spec) : path.resolve(path.dirname(filename), spec);
        const resolved = realPath(target);
        const toRelative = path.relative(ROOT, resolved).split(path.sep).join('/');
        if (isSpec) return;
        if (/\.(spec|e2e)\.ts$/.test(resolved)) {
          context.report({ node, message: `${toRelative} is a test: production code never imports one.` });
          return;
        }
        const problem = fileRule(from, zoneOf(toRelative), toRelative, layers, domain);
        if (problem) {
          context.report({ node, message: problem });
          return;
        }
        // A re-export passes on what its file imports: follow the chain and judge every file it reaches.
        const relayed = throughReexports(resolved, (next) => fileRule(from, zoneOf(next), next, layers, domain));
        if (relayed) context.report({ node, message: `${relayed.problem} (re-exported by ${relayed.via})` });
        return;
      }
      const pkg = packageOf(spec);
      // A renderer spec may start a real server in Node (it runs under vitest); Electron stays out of every spec.
      if (isSpec && NODE_BUILTINS.has(pkg)) return;
      const problem = packageRule(from.zone, pkg);
      if (problem) context.report({ node, message: problem });
    };

    /** Names bound to a `require` made by `createRequire(…)` (or to `require` itself): each call is an import. */
    const requires = new Set(['require']);
    /** @param {any} node a callee: `createRequire(…)` or `module.createRequire(…)` */
    const isCreateRequire = (node) =>
      node?.type === 'CallExpression' &&
      ((node.callee.type === 'Identifier' && node.callee.name === 'createRequire') ||
        (node.callee.type === 'MemberExpression' &&
          node.callee.property.type === 'Identifier' &&
          node.callee.property.name === 'createRequire'));
    /** @param {any} node `import.meta` */
    const isImportMeta = (node) =>
      node?.type === 'MetaProperty' && node.meta.name === 'import' && node.property.name === 'meta';

    return {
      ImportDeclaration: (node) => judge(node, node.source),
      ExportNamedDeclaration: (node) => node.source && judge(node, node.source),
      ExportAllDeclaration: (node) => judge(node, node.source),
      ImportExpression: (node) => judge(node, node.source),
      VariableDeclarator: (node) => {
        const init = /** @type {any} */ (node.init);
        const aliasOfRequire = isCreateRequire(init) || (init?.type === 'Identifier' && requires.has(init.name));
        if (aliasOfRequire && node.id.type === 'Identifier') requires.add(node.id.name);
      },
      CallExpression: (node) => {
        const callee = /** @type {any} */ (node.callee);
        const first = node.arguments[0];
        // require('…'), an alias of it, createRequire(url)('…'), and req.resolve('…') name a file to load.
        const isRequire =
          (callee.type === 'Identifier' && requires.has(callee.name)) ||
          isCreateRequire(callee) ||
          (callee.type === 'MemberExpression' &&
            callee.property.type === 'Identifier' &&
            callee.property.name === 'resolve' &&
            ((callee.object.type === 'Identifier' && requires.has(callee.object.name)) || isImportMeta(callee.object)));
        // process.getBuiltinModule('…') loads a Node module like an import does.
        const isBuiltinLoad =
          callee.type === 'MemberExpression' &&
          callee.property.type === 'Identifier' &&
          callee.property.name === 'getBuiltinModule';
        if ((isRequire || isBuiltinLoad) && node.arguments.length >= 1) judge(node, first);
      },
      // new Worker(new URL('./worker.js', import.meta.url)): a module named by a URL relative to this one.
      NewExpression: (node) => {
        const callee = /** @type {any} */ (node.callee);
        const base = /** @type {any} */ (node.arguments[1]);
        if (callee.type !== 'Identifier' || callee.name !== 'URL' || !isImportMeta(base?.object)) return;
        const source = /** @type {any} */ (node.arguments[0]);
        // Data files (package.json, icons) are not modules; a module's URL names a script.
        const names = source?.type === 'Literal' && typeof source.value === 'string' ? source.value : null;
        if (names !== null && !/\.(?:[cm]?js|ts)$/.test(names)) return;
        judge(node, source);
      },
      // `typeof import('…')` in a type position.
      TSImportType: (node) => {
        const argument = /** @type {{ argument?: { type: string; literal?: unknown } }} */ (
          /** @type {unknown} */ (node)
        ).argument;
        if (argument?.type === 'TSLiteralType') judge(/** @type {any} */ (node), argument.literal);
      },
    };
  },
};

export default { rules: { boundaries } };
