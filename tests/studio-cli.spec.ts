/**
 * `tally follow` and `tally listen --team` as a new user meets them: every flag and variable an error message
 * names exists in the help, and each setup mistake (a folder that cannot be written, a server that is not
 * there, tls:// to a server without TLS, wrong team credentials) gives one clear line and never wedges:
 * Ctrl-C (SIGINT) stops it. Real child processes of the built CLI, a real nats-server, the sandbox service.
 */
import { execFile } from 'node:child_process';
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../electron/core/sandbox/index.js';
import { ROOT, TALLY_BIN, ensureBuiltCli } from './support/built-cli.js';
import { startTally, type ListenProcess } from './support/listen-process.js';
import { freePort, startNatsServer, type NatsServer } from './support/nats-server.js';
import { listenEnv } from './support/sandbox-files.js';

const run = promisify(execFile);
const help = async (command: string) =>
  (await run(process.execPath, [TALLY_BIN, command, '--help'], { cwd: ROOT, env: { PATH: process.env.PATH } })).stdout;

/** Lines on stderr, without the empty last one. */
const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

describe('tally follow / tally listen --team as a new user', () => {
  let root: string;
  let sb: Sandbox;
  const procs: ListenProcess[] = [];
  const servers: NatsServer[] = [];

  beforeAll(async () => {
    await ensureBuiltCli();
    sb = await startSandbox({ searchIndexDelayMs: 0, seed: 14 });
  }, 180_000);
  afterAll(async () => {
    await sb?.close();
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tally-studio-cli-'));
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await p.exited;
    }
    for (const s of servers.splice(0)) await s.close();
    await rm(root, { recursive: true, force: true });
  });

  async function nats(args: string[] = []): Promise<NatsServer> {
    const server = await startNatsServer({ args });
    servers.push(server);
    return server;
  }

  function follow(args: string[], env: NodeJS.ProcessEnv = {}): ListenProcess {
    const proc = startTally('follow', args, { TALLY_HOME: join(root, 'home'), TALLY_TEAM_RETRY_MS: '100', ...env });
    procs.push(proc);
    return proc;
  }

  /** SIGINT (Ctrl-C) ends it with exit code 0 and the stopped event. */
  async function interrupt(proc: ListenProcess): Promise<void> {
    proc.child.kill('SIGINT');
    const { code } = await proc.exited;
    expect(code, proc.stderr()).toBe(0);
    expect(proc.events.at(-1)).toEqual({ type: 'stopped' });
  }

  it('names in its error messages only flags and variables its help (or tally login --help) explains', async () => {
    const helps = (await Promise.all(['follow', 'listen', 'login'].map(help))).join('\n');
    const sources = [
      'electron/cli/follow.ts',
      'electron/cli/listen-studio.ts',
      'electron/cli/studio-output.ts',
      'electron/core/studio/team.ts',
      'electron/core/studio/team-credentials.ts',
      'electron/core/studio/store.ts',
      'electron/core/studio/follower.ts',
      'electron/core/studio/publisher.ts',
    ];
    const named = new Set<string>();
    for (const file of sources) {
      const text = await readFile(join(ROOT, file), 'utf8');
      // The text of every error thrown or written: new XError(`...`), super(`...`), stderr lines.
      for (const m of text.matchAll(/(?:Error\(|super\(|\.write\()\s*(`[^`]*`|'[^']*'|"[^"]*")/g)) {
        for (const name of m[1]!.matchAll(/--[a-z][a-z-]+|\b(?:TALLY|AWS)_[A-Z0-9_]+/g)) named.add(name[0]);
      }
    }
    expect(named.size).toBeGreaterThan(5);
    const missing = [...named].filter((name) => !new RegExp(`${name}(?![A-Za-z0-9_-])`).test(helps));
    expect(missing, 'named in an error but not in any help').toEqual([]);
  });

  it('stops with one line naming --folder when the folder cannot be written', async () => {
    const file = join(root, 'a-file');
    await writeFile(file, 'not a folder');
    const proc = follow(['--team', `nats://127.0.0.1:${await freePort()}`, '--folder', join(file, 'studio')]);
    const { code } = await proc.exited;
    expect(code).toBe(1);
    expect(lines(proc.stderr())).toEqual([
      expect.stringMatching(
        /^tally follow: Cannot use .* as the studio folder \(--folder\): a part of the path is a file/,
      ),
    ]);
  });

  it('keeps its health as a member: health lines, tally status (exit 0, then 1 while the team server is gone)', async () => {
    const server = await nats();
    const proc = follow(['--team', server.url, '--folder', join(root, 'm')]);
    await proc.waitFor((e) => e.type === 'health' && e.state === 'ok', 'health ok');
    const status = async () => {
      try {
        const { stdout } = await run(process.execPath, [TALLY_BIN, 'status', '--json'], {
          cwd: ROOT,
          env: { PATH: process.env.PATH, TALLY_HOME: join(root, 'home') },
        });
        return { code: 0, body: JSON.parse(stdout) as { running: { face: string }[] } };
      } catch (error) {
        const failed = error as { code: number; stdout: string };
        return { code: failed.code, body: JSON.parse(failed.stdout) as { running: { face: string }[] } };
      }
    };
    const ok = await status();
    expect(ok.code).toBe(0);
    expect(ok.body.running).toMatchObject([{ face: 'follow' }]);
    const seen = proc.events.length;
    await server.stop(true);
    await proc.waitFor(
      (e) => proc.events.indexOf(e) >= seen && e.type === 'health' && e.state === 'warning',
      'health warning',
    );
    expect((await status()).code).toBe(1);
    await interrupt(proc);
  });

  it('says once per try that the server is unreachable, and Ctrl-C stops it while it waits', async () => {
    const proc = follow(['--team', `nats://127.0.0.1:${await freePort()}`, '--folder', join(root, 'm')]);
    await proc.waitFor((e) => e.type === 'waiting', 'waiting');
    await proc.waitFor((e) => e.type === 'waiting' && e !== proc.events[0], 'a second try');
    expect(lines(proc.stderr()).every((l) => /^tally follow: The team server .* is unreachable/.test(l))).toBe(true);
    await interrupt(proc);
  });

  it('stops with one line naming --team nats:// when a tls:// URL points at a server without TLS', async () => {
    const server = await nats();
    const proc = follow(['--team', server.url.replace('nats://', 'tls://'), '--folder', join(root, 'm')]);
    const { code } = await proc.exited;
    expect(code).toBe(1);
    expect(lines(proc.stderr())).toEqual([
      `tally follow: The team server tls://127.0.0.1:${server.port} does not offer TLS: use --team ${server.url}.`,
    ]);
  });

  it('stops with one line naming "tally login --team" and the variables when the credentials are refused', async () => {
    const server = await nats(['--user', 'studio', '--pass', 'right-pass']);
    const proc = follow(['--team', server.url, '--folder', join(root, 'm')], {
      TALLY_TEAM_USER: 'studio',
      TALLY_TEAM_PASSWORD: 'wrong-pass',
    });
    const { code } = await proc.exited;
    expect(code).toBe(1);
    const out = lines(proc.stderr());
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(
      /^tally follow: The team server nats:\/\/127\.0\.0\.1:\d+ refused the credentials \(Authorization Violation\): store them with "tally login --team nats:\/\/127\.0\.0\.1:\d+" or set TALLY_TEAM_USER \+ TALLY_TEAM_PASSWORD \(or TALLY_TEAM_TOKEN\)\.$/,
    );
    expect(proc.stderr()).not.toContain('wrong-pass');
    expect(server.log().match(/authentication error/g)).toHaveLength(1);

    // With the right ones it follows, and Ctrl-C stops it.
    const ok = follow(['--team', server.url, '--folder', join(root, 'm')], {
      TALLY_TEAM_USER: 'studio',
      TALLY_TEAM_PASSWORD: 'right-pass',
    });
    await ok.waitFor((e) => e.type === 'ready', 'ready');
    await interrupt(ok);
  });

  it('tally listen --team: refused credentials are one line, recordings are still saved, Ctrl-C stops it', async () => {
    const server = await nats(['--user', 'studio', '--pass', 'right-pass']);
    const folder = join(root, 'recv');
    const proc = startTally('listen', ['--folder', folder, '--port', '0', '--tunnel', 'none', '--team', server.url], {
      ...listenEnv(sb, join(root, 'recv-home')),
      TALLY_TEAM_TOKEN: 'wrong-token',
    });
    procs.push(proc);
    const ready = await proc.waitFor((e) => e.type === 'ready', 'ready');
    const refused = await proc.waitFor((e) => e.type === 'team' && e.state === 'refused', 'refused');
    expect(String(refused.message)).toMatch(/refused the credentials \(Authorization Violation\)/);
    sb.control.setWebhookUrl(String(ready.localUrl));
    const id = `refused-${Date.now()}`;
    sb.control.startBroadcast({ id, record: true, recordingBytes: 200_000 });
    const rec = await sb.control.endBroadcast(id);
    await proc.waitFor((e) => e.type === 'saved' && e.bytes === rec!.size, 'saved while refused');

    const teamLines = lines(proc.stderr()).filter((l) => /team server/.test(l));
    expect(teamLines).toHaveLength(1);
    expect(teamLines[0]).toMatch(
      /^tally listen: The team server nats:\/\/127\.0\.0\.1:\d+ refused the credentials .*"tally login --team nats:\/\/127\.0\.0\.1:\d+".*TALLY_TEAM_TOKEN.*Recordings are still received and saved here/,
    );
    expect(proc.stderr()).not.toContain('wrong-token');
    expect(server.log().match(/authentication error/g)).toHaveLength(1);
    proc.child.kill('SIGINT');
    const { code } = await proc.exited;
    expect(code, proc.stderr()).toBe(0);
  });
});
