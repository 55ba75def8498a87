/**
 * A real `nats-server` with JetStream (the Debian package) on a free loopback port, its storage in a temp
 * folder that survives `restart()`, so tests can stop the server mid-transfer and bring back the same one.
 * Readiness is the server's own "Server is ready" line (and, in a cluster, its route port open), never a timer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NatsServer {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGKILL when `crash`), keeping its storage. */
  stop(crash?: boolean): Promise<void>;
  /** Starts it again on the same port with the same storage. */
  start(): Promise<void>;
  /**
   * Hangs it (SIGSTOP): its sockets stay open and accept connections, and nothing is answered, as a hung server
   * does; `resume()` (SIGCONT) lets it go on. `close()` resumes it first.
   */
  pause(): void;
  resume(): void;
  /** What the server has logged since it was last started (it logs every refused login as an error). */
  log(): string;
  /** Resolves once the log (since the last start) matches: the server may log after the client saw the answer. */
  logged(pattern: RegExp): Promise<void>;
  /** Stops it and removes its storage. */
  close(): Promise<void>;
}

/**
 * Ports are picked below the system's ephemeral range (32768 and up on Linux), where nothing that binds port 0
 * lands: a port handed out here stays free until its server binds it, also while a killed node is down and the
 * rest of the suite binds port 0 all the time. (Picked by binding port 0, a cluster's route port could be one
 * just handed out as another node's client port: that node said "Server is ready", then died on the route port,
 * and the cluster never had all its servers.)
 */
const PICK_FROM = 20_000;
const PICK_TO = 32_000;

/** Listens on `port` of 127.0.0.1, or resolves null when it is taken. */
function hold(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(null));
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
}

/** `count` different ports that were free a moment ago (all held at once while they are picked). */
export async function freePorts(count: number): Promise<number[]> {
  const held = new Map<number, Server>();
  while (held.size < count) {
    const port = PICK_FROM + Math.floor(Math.random() * (PICK_TO - PICK_FROM));
    if (held.has(port)) continue;
    const srv = await hold(port);
    if (srv) held.set(port, srv);
  }
  await Promise.all([...held.values()].map((srv) => new Promise((resolve) => srv.close(resolve))));
  return [...held.keys()];
}

/** A port that was free a moment ago (the server binds it right after). */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

export async function startNatsServer(
  opts: { port?: number; args?: string[]; jetstream?: boolean; config?: string } = {},
): Promise<NatsServer> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-nats-'));
  // Settings only a configuration file takes (the command line's flags win over it).
  if (opts.config !== undefined) await writeFile(join(dir, 'nats.conf'), opts.config);
  const port = opts.port ?? (await freePort());
  let child: ChildProcess | null = null;
  let log = '';
  const waiters = new Set<() => void>();

  const clustered = (opts.args ?? []).includes('--cluster');
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const proc = spawn(
        'nats-server',
        [
          ...(opts.config !== undefined ? ['-c', join(dir, 'nats.conf')] : []),
          ...(opts.jetstream === false ? [] : ['-js', '-sd', join(dir, 'js')]),
          '-a',
          '127.0.0.1',
          '-p',
          String(port),
          ...(opts.args ?? []),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child = proc;
      let ready = false;
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        for (const check of [...waiters]) check();
        // A node of a cluster opens its route port after saying it is ready (and dies if it cannot).
        if (!ready && /Server is ready/.test(log) && (!clustered || /Listening for route connections/.test(log))) {
          ready = true;
          resolve();
        }
      };
      proc.stderr?.on('data', onData);
      proc.stdout?.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`nats-server exited (${code}) before it was ready:\n${log}`)));
      proc.once('error', reject);
    });

  const signal = (sig: NodeJS.Signals) => {
    const proc = child as ChildProcess | null;
    if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
  };
  const stop = async (crash = false) => {
    signal('SIGCONT'); // a hung server ends only once it runs again
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(crash ? 'SIGKILL' : 'SIGTERM');
    await exited;
  };

  log = '';
  await start().catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    stop,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    log: () => log,
    logged: (pattern) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!pattern.test(log)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
    async start() {
      log = '';
      await start();
    },
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface NatsCluster {
  readonly nodes: NatsServer[];
  /** Every node's client URL, for `--team a,b,c`. */
  readonly urls: string[];
  /** Resolves once the cluster's JetStream has a metadata leader again (after a node was killed or restarted). */
  jetStreamReady(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Three (or `size`) nats-servers with JetStream on loopback ports, routed into one cluster named `studio`, each
 * with its own storage. A node can be killed (`nodes[i].stop(true)`) and started again with its storage.
 */
export async function startNatsCluster(size = 3, opts: { config?: string } = {}): Promise<NatsCluster> {
  const picked = await freePorts(2 * size);
  const [ports, routes] = [picked.slice(0, size), picked.slice(size)];
  const routeList = routes.map((p) => `nats://127.0.0.1:${p}`).join(',');
  const starting = ports.map((port, i) =>
    startNatsServer({
      port,
      ...(opts.config !== undefined ? { config: opts.config } : {}),
      args: [
        '--server_name',
        `studio-${i + 1}`,
        '--cluster_name',
        'studio',
        '--cluster',
        `nats://127.0.0.1:${routes[i]}`,
        '--routes',
        routeList,
      ],
    }),
  );
  const nodes = await Promise.all(starting);
  const cluster: NatsCluster = {
    nodes,
    urls: nodes.map((n) => n.url),
    // Each node logs the leader it learns of; one that saw an election is enough for a client to be answered.
    jetStreamReady: () =>
      Promise.race(
        nodes.map((n) =>
          n.logged(/JetStream cluster new metadata leader|Self is new JetStream cluster metadata leader/),
        ),
      ),
    async close() {
      await Promise.all(nodes.map((n) => n.close()));
    },
  };
  await cluster.jetStreamReady();
  return cluster;
}
