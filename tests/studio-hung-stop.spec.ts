/**
 * Bounded shutdown against a team server that never answers (issue 30, item 7): `tally follow` and `tally listen
 * --team` end within 10 s of SIGTERM whatever the server does. Two such servers: a TCP listener that accepts and
 * says nothing (the client's connection attempt hangs on it), and a real nats-server hung with SIGSTOP after the
 * face connected (its socket stays open, nothing answers). Real child processes of the built CLI; the sandbox
 * service for `listen`. Each stop is timed on the monotonic clock.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../electron/core/sandbox/index.js';
import { ensureBuiltCli } from './support/built-cli.js';
import { startTally, type ListenProcess } from './support/listen-process.js';
import { startNatsServer } from './support/nats-server.js';
import { listenEnv } from './support/sandbox-files.js';

/** A server that accepts every connection and never writes a byte: what a hung team server looks like. */
async function silentServer(): Promise<{ url: string; accepted: Promise<void>; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let onAccept = () => {};
  const accepted = new Promise<void>((resolve) => (onAccept = resolve));
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    onAccept();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `nats://127.0.0.1:${port}`,
    accepted,
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
});
