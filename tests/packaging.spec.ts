/**
 * The packaged app, as electron-builder really builds it. The Electron runtime cannot be downloaded
 * here, so the build uses a placeholder `electron` file (with a real fuse wire, so fuse flipping is
 * exercised too) via `electronDist`; everything else is electron-builder's real Linux `--dir` pipeline.
 * Needs a prior `npm run build` (npm test builds first).
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as asar from '@electron/asar';
import { FuseState, FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const root = join(import.meta.dirname, '..');
const BUILT = ['dist/electron/main/index.js', 'dist/preload/index.cjs', 'dist/renderer/index.html'];
const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';

/** js-yaml ships without types (a devDependency, also what electron-builder reads its config with). */
const yaml = require('js-yaml') as { load(text: string): unknown };

async function loadConfig(): Promise<Record<string, unknown>> {
  return yaml.load(await readFile(join(root, 'electron-builder.yml'), 'utf8')) as Record<string, unknown>;
}

async function validator() {
  const schema = JSON.parse(await readFile(join(root, 'node_modules/app-builder-lib/scheme.json'), 'utf8')) as object;
  // The scheme is draft-07 with union types; strict mode would reject its vendor keywords.
  const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
  return ajv.compile(schema);
}

describe('electron-builder.yml', () => {
  it('is valid against electron-builder’s own schema', async () => {
    const validate = await validator();
    const config = await loadConfig();
    expect(validate(config), JSON.stringify(validate.errors, null, 2)).toBe(true);
    // The schema check can fail: a misspelt key is refused.
    expect(validate({ ...config, asarUnpak: ['x'] })).toBe(false);
  });

  it('declares the app identity and the tray-app specifics', async () => {
    const config = await loadConfig();
    expect(config).toMatchObject({
      appId: 'com.tally.app',
      productName: 'Tally',
      asar: true,
      directories: { output: 'release' },
      extraMetadata: { main: 'dist/electron/main/index.js' },
      mac: { category: 'public.app-category.video', extendInfo: { LSUIElement: true } },
      linux: { category: 'AudioVideo', target: ['AppImage', 'deb'] },
      win: { target: ['nsis'] },
      // electron-updater's feed: generic (a folder of latest*.yml and installers), on https.
      publish: { provider: 'generic', url: expect.stringMatching(/^https:\/\//) },
    });
  });
});

/** Width and height from a PNG's IHDR chunk (and a check that it is a PNG at all). */
async function pngSize(file: string): Promise<{ width: number; height: number }> {
  const data = await readFile(file);
  expect(data.subarray(0, 8).toString('hex'), file).toBe('89504e470d0a1a0a');
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

describe('icons', () => {
  it('has the app icon and every tray icon at 1x and 2x', async () => {
    expect(await pngSize(join(root, 'build/icon.png'))).toEqual({ width: 1024, height: 1024 });
    for (const name of ['trayTemplate', 'tray-idle', 'tray-live', 'tray-downloading', 'tray-warning', 'tray-error']) {
      expect(await pngSize(join(root, `build/tray/${name}.png`)), name).toEqual({ width: 16, height: 16 });
      expect(await pngSize(join(root, `build/tray/${name}@2x.png`)), name).toEqual({ width: 32, height: 32 });
    }
  });
});

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, CSC_IDENTITY_AUTO_DISCOVERY: 'false' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('packaged app (electron-builder --dir --linux)', () => {
  let work: string;
  let unpacked: string;
  let archive: string;
  let files: string[];

  beforeAll(async () => {
    const missing: string[] = [];
    for (const file of BUILT) await stat(join(root, file)).catch(() => missing.push(file));
    if (missing.length) throw new Error(`Run \`npm run build\` before this test: missing ${missing.join(', ')}`);

    work = await mkdtemp(join(tmpdir(), 'tally-pack-'));
    const electronDist = join(work, 'electron-dist');
    await mkdir(electronDist);
    // A stand-in executable carrying Electron 45's fuse wire: version 1 and 9 fuses at Electron's defaults (the
    // ninth, WasmTrapHandlers, is new since 1.x of @electron/fuses; electron-builder leaves it as shipped).
    const placeholder = join(electronDist, 'electron');
    await writeFile(
      placeholder,
      Buffer.concat([
        Buffer.from(`#!/bin/sh\n# placeholder\n${SENTINEL}`),
        Buffer.from([1, 9]),
        Buffer.from('101100011\n'),
      ]),
    );
    await chmod(placeholder, 0o755);

    const electronVersion = (require('electron/package.json') as { version: string }).version;
    const { code, output } = await run(
      process.execPath,
      [
        require.resolve('electron-builder/cli.js'),
        '--dir',
        '--linux',
        '--x64',
        `-c.electronDist=${electronDist}`,
        `-c.electronVersion=${electronVersion}`,
        '-c.npmRebuild=false',
        `-c.directories.output=${join(work, 'out')}`,
      ],
      root,
    );
    if (code !== 0) throw new Error(`electron-builder failed (exit ${code}):\n${output}`);
    unpacked = join(work, 'out', 'linux-unpacked');
    archive = join(unpacked, 'resources', 'app.asar');
    files = asar.listPackage(archive, { isPack: false }).map((f) => f.replace(/\\/g, '/').replace(/^\//, ''));
  }, 240_000);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('holds the built main, preload, renderer and package.json', () => {
    for (const file of [...BUILT, 'package.json']) expect(files, file).toContain(file);
    const manifest = JSON.parse(asar.extractFile(archive, 'package.json').toString()) as { main: string; type: string };
    expect(manifest.main).toBe('dist/electron/main/index.js');
    expect(manifest.type).toBe('module');
  });

  it('bundles the preload into one file that requires nothing but electron (a sandboxed preload cannot)', () => {
    const bundle = asar.extractFile(archive, 'dist/preload/index.cjs').toString();
    const required = new Set([...bundle.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]));
    expect([...required]).toEqual(['electron']);
    expect(bundle).toContain('exposeInMainWorld');
    // Electron 45 took these out of sandboxed preloads.
    expect(bundle).not.toMatch(/\b(Buffer|setImmediate|clearImmediate|process\.nextTick)\b/);
  });

  it('leaves out sources, specs, maps, tooling and dev dependencies', () => {
    const own = files.filter((f) => !f.startsWith('node_modules/'));
    const offenders = own.filter(
      (f) =>
        /\.spec\.|\.test\.|\.map$|\.ts$/.test(f) ||
        /^(tests|bench|scripts|renderer|electron|build|docs|\.ci)(\/|$)/.test(f) ||
        /(^|\/)test-[^/]*$/.test(f),
    );
    expect(offenders).toEqual([]);
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    for (const dev of [
      'vitest',
      'electron',
      'electron-builder',
      'typescript',
      'vite',
      'svelte',
      'esbuild',
      'playwright-core',
      'eslint',
    ]) {
      expect(files, dev).not.toContain(`node_modules/${dev}`);
    }
    expect(files).toContain('node_modules/zod');
  });

  it('unpacks the keyring native addon next to the archive', async () => {
    const addon = files.find((f) => /^node_modules\/@napi-rs\/keyring-[^/]+\/.*\.node$/.test(f));
    expect(addon, 'keyring .node in the archive index').toBeDefined();
    await expect(stat(join(unpacked, 'resources', 'app.asar.unpacked', addon!))).resolves.toMatchObject({
      size: expect.any(Number),
    });
    expect(asar.statFile(archive, addon!)).toMatchObject({ unpacked: true });
  });

  it('ships electron-updater and the feed it reads (resources/app-update.yml)', async () => {
    expect(files).toContain('node_modules/electron-updater/out/main.js');
    const feed = yaml.load(await readFile(join(unpacked, 'resources', 'app-update.yml'), 'utf8'));
    expect(feed).toMatchObject({ provider: 'generic', url: expect.stringMatching(/^https:\/\//) });
    expect(feed).toHaveProperty('updaterCacheDirName');
  });

  it('ships the tray icons as plain files beside the archive', async () => {
    for (const name of ['trayTemplate.png', 'trayTemplate@2x.png', 'tray-live.png', 'tray-error@2x.png']) {
      await expect(stat(join(unpacked, 'resources', 'tray', name)), name).resolves.toBeTruthy();
    }
  });

  it('flips the security fuses on the executable', async () => {
    const wire = await getCurrentFuseWire(join(unpacked, 'tally'));
    expect(wire[FuseV1Options.RunAsNode]).toBe(FuseState.DISABLE);
    expect(wire[FuseV1Options.EnableNodeOptionsEnvironmentVariable]).toBe(FuseState.DISABLE);
    expect(wire[FuseV1Options.EnableNodeCliInspectArguments]).toBe(FuseState.DISABLE);
    expect(wire[FuseV1Options.OnlyLoadAppFromAsar]).toBe(FuseState.ENABLE);
    expect(wire[FuseV1Options.EnableEmbeddedAsarIntegrityValidation]).toBe(FuseState.ENABLE);
    expect(wire[FuseV1Options.EnableCookieEncryption]).toBe(FuseState.ENABLE);
    // The popover loads from file://, which needs these privileges.
    expect(wire[FuseV1Options.GrantFileProtocolExtraPrivileges]).toBe(FuseState.ENABLE);
    // Not a security fuse: Electron's default is kept.
    expect(wire[FuseV1Options.WasmTrapHandlers]).toBe(FuseState.ENABLE);
  });

  it('packs the Electron major that package.json pins, inside the supported window (latest three majors)', () => {
    const manifest = JSON.parse(asar.extractFile(archive, 'package.json').toString()) as {
      devDependencies?: Record<string, string>;
    };
    // Dev dependencies are stripped from the packed manifest; the version comes from the installed package.
    expect(manifest.devDependencies).toBeUndefined();
    const installed = (require('electron/package.json') as { version: string }).version;
    expect(Number(installed.split('.')[0])).toBeGreaterThanOrEqual(45);
  });
});
