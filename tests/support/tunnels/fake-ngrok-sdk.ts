/**
 * TEST HELPER (not used by the app): `fakeNgrokSdk` replaces only the ngrok SDK's cloud boundary
 * (`forward` / `disconnect`). Each `forward` starts a loopback HTTP proxy to the configured `addr`, so a
 * self-check really travels "edge -> agent -> receiver". Its URL is `http://<domain>` (the static domain
 * when one is configured, a random name otherwise); `connectTo` maps that name to the proxy's port.
 * Like the real service, it rejects an unknown authtoken with ERR_NGROK_107 quoting the token.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { ConnectToOverride } from '../../../electron/core/tunnels/http.js';
import type { NgrokConfig, NgrokListenerLike, NgrokSdk } from '../../../electron/core/tunnels/ngrok.js';

export interface FakeNgrokSdk extends NgrokSdk {
  /** Every config passed to `forward`, in order (authtoken included, so tests can check it was passed). */
  readonly forwardCalls: NgrokConfig[];
  readonly disconnectCalls: (string | null | undefined)[];
  /** Number of listeners currently open. */
  readonly openListeners: number;
  readonly connectTo: ConnectToOverride;
  /** Simulates losing the session: every proxy stops and the SDK reports status 'closed'. */
  dropSession(): void;
  /** Closes everything still open. */
  close(): Promise<void>;
}

interface FakeListener {
  hostname: string;
  port: number;
  server: http.Server;
  onStatusChange: ((status: string) => void) | undefined;
}

/** Creates a fake SDK that accepts `acceptedAuthtoken` only. */
export function fakeNgrokSdk(options: { acceptedAuthtoken: string }): FakeNgrokSdk {
  const forwardCalls: NgrokConfig[] = [];
  const disconnectCalls: (string | null | undefined)[] = [];
  const listeners = new Map<string, FakeListener>();

  const stop = async (listener: FakeListener): Promise<void> => {
    listeners.delete(listener.hostname);
    listener.server.closeAllConnections();
    await new Promise<void>((resolve) => listener.server.close(() => resolve()));
  };

  const sdk: FakeNgrokSdk = {
    forwardCalls,
    disconnectCalls,
    get openListeners() {
      return listeners.size;
    },
    connectTo: (url: URL) => {
      const listener = listeners.get(url.hostname);
      return listener ? { host: '127.0.0.1', port: listener.port } : undefined;
    },
    async forward(config: NgrokConfig): Promise<NgrokListenerLike> {
      forwardCalls.push({ ...config });
      if (config.authtoken_from_env) throw new Error('fake: authtoken_from_env must not be used');
      if (config.authtoken !== options.acceptedAuthtoken) {
        // The real service quotes the token in this message; the provider must redact it.
        throw Object.assign(
          new Error(
            `failed to connect session: The authtoken you specified is properly formed, but it is invalid. Your authtoken: ${String(config.authtoken)} ERR_NGROK_107`,
          ),
          { errorCode: 'ERR_NGROK_107' },
        );
      }
      const hostname = config.domain ?? `${randomBytes(6).toString('hex')}.ngrok-free.test`;
      if (listeners.has(hostname)) {
        throw Object.assign(new Error(`The endpoint 'https://${hostname}' is already online. ERR_NGROK_334`), {
          errorCode: 'ERR_NGROK_334',
        });
      }
      const addr = String(config.addr);
      const split = addr.lastIndexOf(':');
      const upstreamHost = addr.slice(0, split).replace(/^\[|\]$/g, '');
      const upstreamPort = Number(addr.slice(split + 1));
      const server = http.createServer((req, res) => {
        const upstream = http.request(
          {
            host: upstreamHost,
            port: upstreamPort,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, 'x-forwarded-host': req.headers.host ?? '' },
            agent: false,
          },
          (upstreamRes) => {
            res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
            upstreamRes.pipe(res);
          },
        );
        upstream.on('error', () => {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
          res.end('ERR_NGROK_8012: upstream connection refused');
        });
        req.pipe(upstream);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as { port: number }).port;
      const listener: FakeListener = { hostname, port, server, onStatusChange: config.onStatusChange };
      listeners.set(hostname, listener);
      const url = `http://${hostname}`;
      let closed = false;
      return {
        url: () => url,
        close: async () => {
          if (closed) return;
          closed = true;
          if (listeners.get(hostname) === listener) await stop(listener);
        },
      };
    },
    async disconnect(url?: string | null): Promise<void> {
      disconnectCalls.push(url);
      for (const listener of [...listeners.values()]) {
        if (url == null || url === `http://${listener.hostname}`) await stop(listener);
      }
    },
    dropSession(): void {
      for (const listener of [...listeners.values()]) {
        void stop(listener);
        listener.onStatusChange?.('closed');
      }
    },
    async close(): Promise<void> {
      await Promise.all([...listeners.values()].map(stop));
    },
  };
  return sdk;
}
