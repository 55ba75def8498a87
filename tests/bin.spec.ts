/**
 * The installed entry point, `node bin/tally.js`, as a real child process over the built CLI in dist/.
 * dist/ is rebuilt with tsc first, but only when it is missing or older than a source file.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../electron/core/sandbox/index.js';
import { ensureBuiltCli, ROOT, staleOutputs } from './support/built-cli.js';
import { runToEnd, type ChildOutput } from './support/child-output.js';
import { startListen } from './support/listen-process.js';

function tally(args: string[], env: NodeJS.ProcessEnv): Promise<ChildOutput> {
  return runToEnd(process.execPath, [join(ROOT, 'bin/tally.js'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
}

describe('bin/tally.js', () => {
  let home: string;
  let sb: Awaited<ReturnType<typeof startSandbox>>;

  beforeAll(async () => {
    await ensureBuiltCli();
    const cliFiles = staleOutputs().filter((f) => f === 'electron/cli.ts' || f.startsWith('electron/cli/'));
    expect(cliFiles, 'the CLI was not compiled').toEqual([]);
    home = await mkdtemp(join(tmpdir(), 'tally-bin-'));
    sb = await startSandbox({ searchIndexDelayMs: 0, seed: 1 });
  }, 180_000);

  afterAll(async () => {
    await sb?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('prints the main help and exits 0', async () => {
    const result = await tally(['--help'], { TALLY_HOME: home });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^tally: live channels/);
    expect(result.stdout).toContain('Usage: tally <command> [options]');
    for (const name of ['live', 'search', 'end', 'login', 'logout'])
      expect(result.stdout).toMatch(new RegExp(`\\n  ${name} `));
    expect(result.stderr).toBe('');
  });

  it('prints a command help', async () => {
    const result = await tally(['search', '--help'], { TALLY_HOME: home });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: tally search/);
  });

  it('exits 2 on an unknown command or a bad option', async () => {
    const unknown = await tally(['frobnicate'], { TALLY_HOME: home });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    const bad = await tally(['search', '--since', 'whenever'], { TALLY_HOME: home });
    expect(bad.code).toBe(2);
  });

  it('lists live channels from the sandbox as JSON, and exits 1 on a refused connection', async () => {
    sb.control.startBroadcast({ id: 'bin-live', watchers: 2 });
    const env = {
      TALLY_HOME: home,
      TALLY_BASE_URL: sb.endpoints.baseUrl,
      TALLY_SERVICE_ID: sb.credentials.serviceId,
      TALLY_SECRET: sb.credentials.secret,
    };
    const ok = await tally(['live', '--json'], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect((JSON.parse(ok.stdout) as Array<{ id: string }>).map((c) => c.id)).toEqual(['bin-live']);

    const refused = await tally(['live'], { ...env, TALLY_BASE_URL: 'http://127.0.0.1:9', TALLY_RETRIES: '0' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^tally live: Could not reach the service/);
    expect(refused.stderr).not.toContain(sb.credentials.secret);
  });

  // Studio mode's clients (NATS, the AWS SDK) were about 10 MB of `tally listen`'s RSS before the first
  // webhook, for every producer, team or not (issue 10: peak RSS under 100 MB while downloading). Node's
  // bundled fetch client (undici), loaded by any ESM import of node:http, was 6 more (issue 22: under 80 MB);
  // Node's own modules are listed in process.moduleLoadList.
  it('tally listen without studio flags loads no NATS client, no AWS SDK, no fetch client, no idle keyring', async () => {
    const log = join(home, 'loaded-modules.txt');
    const hook =
      "import { registerHooks } from 'node:module'; import { writeFileSync } from 'node:fs'; const seen = [];" +
      'registerHooks({ load(url, context, next) { seen.push(url); return next(url, context); } });' +
      "process.on('exit', () => writeFileSync(process.env.TALLY_TEST_MODULE_LOG, [...seen, ...process.moduleLoadList].join('\\n')));";
    const listen = startListen(
      ['--folder', join(home, 'recordings'), '--port', '0', '--tunnel', 'none'],
      { HOME: home, TALLY_HOME: home, TALLY_TEST_MODULE_LOG: log },
      { nodeArgs: ['--import', `data:text/javascript,${encodeURIComponent(hook)}`] },
    );
    await listen.waitFor((e) => e.type === 'ready', 'ready');
    listen.child.kill('SIGTERM');
    await listen.exited;
    const loaded = (await readFile(log, 'utf8')).split('\n');
    expect(loaded.some((url) => url.includes('/dist/electron/core/pipeline/pipeline.js'))).toBe(true);
    expect(loaded.filter((url) => /@nats-io|@aws-sdk|@smithy|\/core\/studio\//.test(url))).toEqual([]);
    expect(loaded).toContain('NativeModule http');
    // No session bus in this environment: the Secret Service is out of reach, known without the native keyring.
    expect(loaded.filter((url) => url.includes('@napi-rs/keyring'))).toEqual([]);
    expect(loaded.filter((name) => /undici/.test(name))).toEqual([]);
  });
});
