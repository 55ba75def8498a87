/**
 * A reverse proxy on 127.0.0.1 that plays a public address (a tunnel, a producer's own URL) in tests. It
 * forwards each request to the loopback port `target()` names at that moment, and waits for it while it is not
 * known yet: a receiver started on port 0 can be given this proxy's URL as its public URL before it has a port.
 */
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * `intercept` answers a request itself instead of forwarding it when it returns true (a tunnel's own warning
 * page, say).
 */
export async function startLoopbackProxy(
  target: () => number | null | Promise<number | null>,
  intercept: (req: IncomingMessage, res: ServerResponse) => boolean = () => false,
): Promise<LoopbackProxy> {
  const server = createServer((req, res) => {
    if (intercept(req, res)) return;
    void (async () => {
      const port = await target();
      if (port === null) {
        req.resume();
        res.writeHead(502).end();
        return;
      }
      const upstream = request(
        { host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
