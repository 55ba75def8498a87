/**
 * The dependency tree as `npm ls` sees it: nothing invalid or missing, no runtime package on a version with
 * published advisories we know of, only the runtime dependencies reviewed below (the unmaintained localtunnel
 * client and its pinned axios 0.21 are gone), and `engines`
 * naming the Node major the suite runs on (.nvmrc: the one Electron bundles), not an older one nobody tests.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const npm = (args: string[]) =>
  promisify(execFile)('npm', args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }).catch(
    (error: { stdout?: string; stderr?: string; code?: number }) => ({
      stdout: error.stdout ?? '',
      stderr: `${error.stderr ?? ''} (exit ${error.code})`,
    }),
  );

interface Tree {
  version?: string;
  dependencies?: Record<string, Tree>;
}

/** Every version of `name` in the tree. */
function versionsOf(tree: Tree, name: string): string[] {
  const out: string[] = [];
  for (const [dep, sub] of Object.entries(tree.dependencies ?? {})) {
    if (dep === name && sub.version) out.push(sub.version);
    out.push(...versionsOf(sub, name));
  }
  return out;
}

describe('dependencies', () => {
  it('npm ls --all finds nothing invalid, missing or extraneous', async () => {
    const { stdout, stderr } = await npm(['ls', '--all']);
    const problems = stdout.split('\n').filter((line) => /\b(invalid|missing|extraneous)\b/.test(line));
    expect(problems, stderr).toEqual([]);
    expect(stderr).not.toMatch(/ERR!/);
  }, 60_000);

  it('ships exactly the reviewed runtime dependencies, and no unmaintained tunnel client', () => {
    // Adding a runtime dependency is a decision: it is reviewed here, with why it is the one.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      overrides?: unknown;
    };
    expect(Object.keys(pkg.dependencies).sort()).toEqual(
      [
        '@aws-sdk/client-s3', // studio: the S3 team store
        '@aws-sdk/lib-storage', // studio: multipart uploads of large recordings
        '@napi-rs/keyring', // the OS keychain (keytar is archived)
        '@nats-io/jetstream', // studio: announcements and claims
        '@nats-io/kv',
        '@nats-io/obj', // studio: the Object Store team store
        '@nats-io/transport-node',
        '@ngrok/ngrok', // the ngrok tunnel, ngrok's own SDK
        'busboy', // multipart uploads from the web SDK
        'content-type', // strict Content-Type parsing at the receiver
        'electron-updater', // the tray app's updates: electron-builder's own updater (feed, SHA-512, install on quit)
        'got', // the service's API
        'http-parser-js', // the download engine's response heads on raw sockets (core/download/response-head.ts)
        'pino', // the log files
        'ws', // the popover's WebSocket transport in a browser
        'zod', // every trust boundary
      ].sort(),
    );
    // localtunnel (unmaintained since 2021, axios 0.21 pinned inside) is replaced by tunnels/localtunnel-sockets.ts:
    // nothing overrides a dependency's own pins any more.
    expect(pkg.overrides).toBeUndefined();
  });

  it('resolves no runtime dependency to axios at all', async () => {
    const { stdout } = await npm(['ls', 'axios', '--omit=dev', '--all', '--json']);
    expect(versionsOf(JSON.parse(stdout) as Tree, 'axios')).toEqual([]);
  }, 60_000);

  it('names in engines the Node major that the suite and CI run on', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const tested = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim();
    expect(pkg.engines.node).toBe(`>=${tested}`);
    expect(process.versions.node.split('.')[0]).toBe(tested);
  });
});
