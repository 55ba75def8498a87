/**
 * Bounded shutdown against a team server that never answers (issue 30, item 7): `tally follow` and `tally listen
 * --team` end within 10 s of SIGTERM whatever the server does. Two such servers: a TCP listener that accepts and
 * says nothing (the client's connection attempt hangs on it), and a real nats-server hung with SIGSTOP after the
 * face connected (its socket stays open, nothing answers). Real child processes of the built CLI; the sandbox
 * service for `listen`, and `tally serve --sandbox` as a studio member (from Settings). Each stop is timed on the
 * monotonic clock.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../electron/core/sandbox/index.js';
import { openSettingsStore } from '../electron/core/settings.js';
import { ROOT, TALLY_BIN, ensureBuiltCli } from './support/built-cli.js';
import { startTally, type ListenProcess } from './support/listen-process.js';
import { startNatsServer } from './support/nats-server.js';
import { listenEnv } from './support/sandbox-files.js';

/**
 * A server that accepts every connection and never writes a byte: what a hung team server looks like.
 * `acceptedAgain` resolves at the second connection: the client's first attempt timed out and it tried again.
 */
async function silentServer(): Promise<{
  url: string;
  accepted: Promise<void>;
  acceptedAgain: Promise<void>;
  close: () => Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let accepts = 0;
  let onAccept = () => {};
  let onAgain = () => {};
  const accepted = new Promise<void>((resolve) => (onAccept = resolve));
  const acceptedAgain = new Promise<void>((resolve) => (onAgain = resolve));
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    accepts += 1;
    onAccept();
    if (accepts >= 2) onAgain();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `nats://127.0.0.1:${port}`,
    accepted,
    acceptedAgain,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('SIGTERM ends a studio face within 10 s while its team server never answers', () => {
  let root: string;
  let sb: Sandbox;
  const procs: ListenProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    await ensureBuiltCli();
    sb = await startSandbox({ searchIndexDelayMs: 0, seed: 30 });
  }, 180_000);
  afterAll(async () => {
    await sb?.close();
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tally-hung-stop-'));
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await p.exited;
    }
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await rm(root, { recursive: true, force: true });
  });

  const follow = (url: string) => {
    const proc = startTally('follow', ['--team', url, '--folder', join(root, 'mirror')], {
      TALLY_HOME: join(root, 'member-home'),
      TALLY_TEAM_RETRY_MS: '100',
    });
    procs.push(proc);
    return proc;
  };

  const listen = (url: string) => {
    const args = ['--folder', join(root, 'recv'), '--port', '0', '--tunnel', 'none', '--team', url];
    const proc = startTally('listen', args, { ...listenEnv(sb, join(root, 'recv-home')), TALLY_TEAM_RETRY_MS: '100' });
    procs.push(proc);
    return proc;
  };

  /** SIGTERM, then how long until the process was gone (ms, monotonic). */
  const terminate = async (proc: ListenProcess) => {
    const began = performance.now();
    proc.child.kill('SIGTERM');
    const exit = await proc.exited;
    return { ms: performance.now() - began, exit };
  };

  const hungNats = async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.close());
    return server;
  };

  it('tally follow, connecting to a server that accepts and says nothing', async () => {
    const silent = await silentServer();
    cleanups.push(() => silent.close());
    const proc = follow(silent.url);
    await silent.accepted;
    // Its first attempt timed out: the member is now between attempts with a connection attempt's socket left.
    await proc.waitFor((e) => e.type === 'waiting', 'waiting');
    const { ms } = await terminate(proc);
    expect(ms, proc.stderr()).toBeLessThan(10_000);
  }, 60_000);

  it('tally listen --team, connecting to a server that accepts and says nothing', async () => {
    const silent = await silentServer();
    cleanups.push(() => silent.close());
    const proc = listen(silent.url);
    await proc.waitFor((e) => e.type === 'ready', 'ready');
    await silent.accepted;
    await proc.waitFor((e) => e.type === 'waiting', 'waiting');
    const { ms } = await terminate(proc);
    expect(ms, proc.stderr()).toBeLessThan(10_000);
  }, 60_000);

  it('tally follow, connected to a nats-server that then hangs (SIGSTOP)', async () => {
    const server = await hungNats();
    const proc = follow(server.url);
    await proc.waitFor((e) => e.type === 'ready', 'ready');
    server.pause();
    const { ms } = await terminate(proc);
    expect(ms, proc.stderr()).toBeLessThan(10_000);
  }, 60_000);

  it('tally listen --team, connected to a nats-server that then hangs (SIGSTOP)', async () => {
    const server = await hungNats();
    const proc = listen(server.url);
    await proc.waitFor((e) => e.type === 'team' && e.state === 'connected', 'team connected');
    server.pause();
    const { ms } = await terminate(proc);
    expect(ms, proc.stderr()).toBeLessThan(10_000);
  }, 60_000);

  it('tally serve as a studio member (Settings), connecting to a server that accepts and says nothing', async () => {
    const silent = await silentServer();
    cleanups.push(() => silent.close());
    const home = join(root, 'serve-home');
    openSettingsStore(home).update({
      recordingsFolder: join(root, 'rec'),
      studio: {
        mode: 'follow',
        servers: [silent.url],
        name: 'serve-member',
        store: 'nats',
        retentionDays: 7,
        replicas: null,
      },
    });
    const child = spawn(process.execPath, [TALLY_BIN, 'serve', '--sandbox', '--port', '0', '--json', '--no-open'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TALLY_HOME: home, TALLY_TEAM_RETRY_MS: '100' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const lines = createInterface({ input: child.stdout });
    await new Promise<void>((resolve) => lines.on('line', (l) => l.includes('"ready"') && resolve()));
    // Its first attempt timed out on the silent server and it is trying again.
    await silent.acceptedAgain;
    const began = performance.now();
    child.kill('SIGTERM');
    await exited;
    expect(performance.now() - began, stderr).toBeLessThan(10_000);
  }, 60_000);
});
