/**
 * What a new producer met that said the wrong thing (issue 33), each through the built `tally` as a child process
 * against the sandbox over real HTTP: a file where the recordings folder was, `--folder '~/x'` unexpanded by a
 * shell, `tally retry` and its help example, `--tunnel ngrok` without a token, and a port another Tally holds.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HealthView } from '../electron/contract.js';
import { startSandbox, type Sandbox } from '../electron/core/sandbox/index.js';
import { ensureBuiltCli, TALLY_BIN } from './support/built-cli.js';
import { startListen, startTally, type ListenEvent, type ListenProcess } from './support/listen-process.js';
import { listenEnv } from './support/sandbox-files.js';

let sb: Sandbox;
const running: ListenProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  await ensureBuiltCli();
  sb = await startSandbox({ searchIndexDelayMs: 0, seed: 33 });
}, 180_000);

afterAll(async () => {
  await sb?.close();
});

afterEach(async () => {
  for (const proc of running.splice(0)) {
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  sb.control.setFaults('download', null);
  sb.control.setWebhookUrl(null);
});

async function tempDir(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `tally-${name}-`));
  dirs.push(dir);
  return dir;
}

/** The environment of a producer whose service is the sandbox (its variables, as `tally sandbox` prints them). */
function serviceEnv(home: string): NodeJS.ProcessEnv {
  return listenEnv(sb, join(home, 'state'));
}

function track(proc: ListenProcess): ListenProcess {
  running.push(proc);
  return proc;
}

/** Starts `tally listen` for the sandbox and points the sandbox's webhook at it. */
async function listen(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<ListenProcess> {
  const proc = track(startTally('listen', ['--port', '0', '--tunnel', 'none', ...args], env, cwd ? { cwd } : {}));
  const ready = await proc.waitFor((e) => e.type === 'ready', 'ready');
  sb.control.setWebhookUrl(String(ready.localUrl));
  return proc;
}

/** Runs a shell line with the built `tally` on PATH; its exit code and output. */
async function sh(
  line: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ code: number | null; out: string; err: string }> {
  const bin = join(cwd, 'bin');
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, 'tally'), `#!/bin/sh\nexec '${process.execPath}' '${TALLY_BIN}' "$@"\n`, { mode: 0o755 });
  const child = spawn('bash', ['-c', line], {
    cwd,
    env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: cwd, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, out, err };
}

const health = (e: ListenEvent) => e as unknown as HealthView & { type: 'health' };
const part = (view: HealthView, id: string) => view.components.find((c) => c.id === id);

describe('misleads a new producer met', () => {
  it('a file in place of the recordings folder: health error (red), Disk not green, tally status exits 2', async () => {
    const home = await tempDir('folder-file');
    const folder = join(home, 'rec');
    const env = serviceEnv(home);
    const proc = await listen(['--folder', folder], env);
    // Without a tunnel the health is a warning (no public URL), never an error, while the folder is a folder.
    const before = health(await proc.waitFor((e) => e.type === 'health', 'health'));
    expect(before.state).toBe('warning');
    expect(part(before, 'disk')?.state).toBe('ok');

    // The folder is replaced by a file: nothing can be saved any more.
    await rm(folder, { recursive: true });
    await writeFile(folder, 'not a folder');
    sb.control.startBroadcast({ id: 'into-a-file', record: true, recordingBytes: 20_000 });
    await sb.control.endBroadcast('into-a-file');

    const down = health(
      await proc.waitFor((e) => e.type === 'health' && part(health(e), 'disk')?.state === 'error', 'disk error'),
    );
    expect(down.state).toBe('error');
    expect(part(down, 'disk')?.reason).toBe(`${folder} is a file, not a folder: no recording can be saved.`);
    expect(part(down, 'disk')?.action).toContain('--folder');

    const status = await sh('tally status', env, home);
    expect(status.code, status.out + status.err).toBe(2);
    // The Disk line is marked as an error, not with the free space in green.
    expect(status.out).toMatch(/\n {2}✖ disk +\S+ is a file, not a folder/);
    expect(status.out).not.toMatch(/free for recordings/);
  });

  it("tally listen --folder '~/x' saves into the home's x, and no folder named ~ appears", async () => {
    const home = await tempDir('tilde-home');
    const cwd = await tempDir('tilde-cwd');
    const env = { ...serviceEnv(home), HOME: home };
    const proc = await listen(['--folder', '~/x'], env, cwd);
    sb.control.startBroadcast({ id: 'tilde-show', record: true, recordingBytes: 30_000 });
    await sb.control.endBroadcast('tilde-show');
    const saved = await proc.waitFor((e) => e.type === 'saved' && e.channelId === 'tilde-show', 'saved');
    expect(String(saved.path).startsWith(join(home, 'x') + '/')).toBe(true);
    expect(await readdir(join(home, 'x'))).toEqual([expect.stringMatching(/^tilde-show/)]);
    expect(existsSync(join(cwd, '~'))).toBe(false);
  });

  it('tally retry names the channel, and its help example retries when something needs attention', async () => {
    const home = await tempDir('retry');
    const env = serviceEnv(home);
    const proc = await listen(['--folder', join(home, 'rec')], env);
    // Every download attempt fails: the recording waits on an error, so the health is not ok.
    sb.control.setFaults('download', { status: 503 });
    sb.control.startBroadcast({ id: 'night-owl', record: true, recordingBytes: 10_000 });
    await sb.control.endBroadcast('night-owl');
    await proc.waitFor((e) => e.type === 'health' && health(e).state !== 'ok', 'health not ok');

    const help = await sh('tally retry --help', env, home);
    const example = help.out.split('\n').find((l) => /^ {2}tally status .*tally retry night-owl/.test(l));
    expect(example, help.out).toBeDefined();
    const ran = await sh(example!.replace(/\s+#.*$/, '').trim(), env, home);
    expect(ran.code, ran.err).toBe(0);
    expect(ran.out).toContain('retrying night-owl now');
    expect(ran.out).not.toMatch(/https?:|sandbox-service/);
  });

  it('--tunnel ngrok without a token names the ngrok authtoken first, not the service secret', async () => {
    const home = await tempDir('ngrok');
    // No keychain reachable, no credentials: both are missing, and the first thing said is about ngrok.
    const run = await sh(
      `tally listen --tunnel ngrok --register --folder '${join(home, 'rec')}'`,
      { TALLY_HOME: home },
      home,
    );
    expect(run.code).not.toBe(0);
    const first = run.err.split('\n')[0] ?? '';
    expect(first).toMatch(/ngrok authtoken/);
    expect(first).not.toMatch(/TALLY_SECRET|TALLY_SERVICE_ID|secret/i);
  });

  it('a port held by another Tally names that Tally and its process, not "node"', async () => {
    const home = await tempDir('port');
    const first = await listen(['--folder', join(home, 'one')], serviceEnv(home));
    const ready = await first.waitFor((e) => e.type === 'ready');
    const port = Number(new URL(String(ready.localUrl)).port);

    const other = await tempDir('port-other');
    const second = track(
      startListen(['--port', String(port), '--tunnel', 'none', '--folder', join(other, 'two')], {
        TALLY_HOME: join(other, 'state'),
      }),
    );
    const down = health(
      await second.waitFor((e) => e.type === 'health' && part(health(e), 'receiver')?.state === 'error', 'port held'),
    );
    expect(part(down, 'receiver')?.reason).toBe(
      `Port ${port} is in use by another Tally (tally listen, process ${first.child.pid}): webhooks reach that one, not this one.`,
    );
  });
});
