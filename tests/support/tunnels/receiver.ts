/**
 * TEST HELPER (not used by the app): a stand-in for `WebhookReceiver` with the two behaviours the tunnel
 * code relies on: `GET /healthz/<token>` answers `{ ok: true, id: <instance nonce> }`, and anything under
 * `/hooks/<token>` is recorded (method, path, body) and answered 200. A browser's CORS preflight to
 * `/uploads/<token>` is allowed as Tally's upload route allows it, and `setHealthy(false)` makes the self-check
 * fail as a dead tunnel would.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { TunnelSupervisorOptions } from '../../../electron/core/tunnels/supervisor.js';

export interface ReceivedHook {
  method: string;
  path: string;
  body: string;
  host: string;
}

export interface TestReceiver {
  readonly host: string;
  readonly port: number;
  readonly localUrl: string;
  readonly hooks: ReceivedHook[];
  /** Emits 'hook' with each ReceivedHook. */
  readonly events: EventEmitter<{ hook: [ReceivedHook] }>;
  webhookUrl(base: string): string;
  selfCheckUrl(base: string): string;
  /** With false, the self-check answers 503 until set back to true. */
  setHealthy(healthy: boolean): void;
  close(): Promise<void>;
}

/** What a TunnelSupervisor is told about the receiver it forwards to: where it listens and its URLs. */
export function supervisedReceiver(
  receiver: TestReceiver,
): Pick<TunnelSupervisorOptions, 'local' | 'localUrl' | 'webhookUrl' | 'selfCheckUrl'> {
  return {
    local: { host: receiver.host, port: receiver.port },
    localUrl: receiver.localUrl,
    webhookUrl: (base) => receiver.webhookUrl(base),
    selfCheckUrl: (base) => receiver.selfCheckUrl(base),
  };
}

/** Starts the stand-in on 127.0.0.1 with an ephemeral port. */
export async function startTestReceiver(options: { token: string; id: string }): Promise<TestReceiver> {
  const hooks: ReceivedHook[] = [];
  const events = new EventEmitter<{ hook: [ReceivedHook] }>();
  let healthy = true;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (req.method === 'GET' && path === `/healthz/${options.token}`) {
        res.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, id: options.id }));
        return;
      }
      if (req.method === 'OPTIONS' && path === `/uploads/${options.token}`) {
        const origin = req.headers.origin ?? '';
        res.writeHead(204, { 'access-control-allow-origin': origin, 'access-control-allow-headers': 'x-filename' });
        res.end();
        return;
      }
      if (path.startsWith(`/hooks/${options.token}`)) {
        const hook = {
          method: req.method ?? '',
          path,
          body: Buffer.concat(chunks).toString('utf8'),
          host: req.headers.host ?? '',
        };
        hooks.push(hook);
        events.emit('hook', hook);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"received":true}');
        return;
      }
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    host: '127.0.0.1',
    port,
    localUrl: `http://127.0.0.1:${port}/hooks/${options.token}`,
    hooks,
    events,
    webhookUrl: (base) => `${base}/hooks/${options.token}`,
    selfCheckUrl: (base) => `${base}/healthz/${options.token}`,
    setHealthy: (value) => {
      healthy = value;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resolves with the first `event` payload that satisfies `predicate` (no timers: vitest's timeout bounds it). */
export function waitForEvent<T>(
  emitter: { on(event: string, fn: (value: T) => void): unknown; off(event: string, fn: (value: T) => void): unknown },
  event: string,
  predicate: (value: T) => boolean = () => true,
): Promise<T> {
  return new Promise<T>((resolve) => {
    const listener = (value: T): void => {
      if (!predicate(value)) return;
      emitter.off(event, listener);
      resolve(value);
    };
    emitter.on(event, listener);
  });
}
