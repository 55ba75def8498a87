// @ts-check
/**
 * The process and layer boundaries of Tally as one ESLint rule, in the style of Signal-Desktop's file-suffix
 * rule: every import is resolved to the real path of the file it names before it is judged, so a detour
 * (`../../core/pipeline/pipeline.js` from core/download), an absolute path, a symlink, a dynamic `import()`,
 * a `require()` or an `export … from` is judged like a plain relative import. What may import what is decided
 * by the runtime of both files (docs/architecture.md):
 *
 * - contract (electron/contract.ts, contract-errors.ts, shell-text.ts), core/notes.ts and core/health-view.ts: browser-safe, zod only;
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
import { existsSync, realpathSync } from 'node:fs';
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
  if (['electron/core/notes.ts', 'electron/core/notes-ko.ts', 'electron/core/health-view.ts'].includes(relative)) {
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

/** Why a file of `from` may not import the project file `to` (null when it may). */
function fileRule(from, to, toRelative, layers) {
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
      return isContract ? null : 'The contract imports only the contract files, core/notes.ts and core/health-view.ts.';
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
      if (to.zone === 'main' || to.zone === 'core' || isContract) return null;
      if (toRelative === 'electron/preload/ipc-protocol.ts') return null;
      return 'main/ uses the core and the contract; never cli/, renderer/ or the preload (beyond its IPC protocol).';
    case 'cli':
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
        properties: { layers: { type: 'array', items: { type: 'array', items: { type: 'string' } } } },
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const layers = /** @type {string[][]} */ (context.options[0]?.layers ?? []);
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
        const problem = fileRule(from, zoneOf(toRelative), toRelative, layers);
        if (problem) context.report({ node, message: problem });
        return;
      }
      const pkg = packageOf(spec);
      // A renderer spec may start a real server in Node (it runs under vitest); Electron stays out of every spec.
      if (isSpec && NODE_BUILTINS.has(pkg)) return;
      const problem = packageRule(from.zone, pkg);
      if (problem) context.report({ node, message: problem });
    };

    return {
      ImportDeclaration: (node) => judge(node, node.source),
      ExportNamedDeclaration: (node) => node.source && judge(node, node.source),
      ExportAllDeclaration: (node) => judge(node, node.source),
      ImportExpression: (node) => judge(node, node.source),
      CallExpression: (node) => {
        if (node.callee.type === 'Identifier' && node.callee.name === 'require' && node.arguments.length === 1) {
          judge(node, node.arguments[0]);
        }
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
