/**
 * A TCP proxy on 127.0.0.1 in front of one server (a nats-server node) that can lose the server's answers: from
 * the moment the client sends bytes matching a pattern, nothing the server sends reaches the client any more
 * (the request reached the server, its answer is lost), until the connection ends. When the server side closes
 * (the node killed), the client's side is closed too, as a dead node's connection would be.
 */
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpHoldProxy {
  readonly port: number;
  readonly url: string;
  /**
   * Resolves once a client sent bytes matching `pattern`: from that chunk on (it is still forwarded), the
   * server's bytes to that client are dropped.
   */
  loseAnswersAfter(pattern: RegExp): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpHoldProxy(targetPort: number): Promise<TcpHoldProxy> {
  const sockets = new Set<Socket>();
  let trigger: { pattern: RegExp; fire: () => void } | null = null;
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let losing = false;
    let tail = ''; // a pattern split over two chunks still matches
    client.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      tail = text.slice(-512);
      if (trigger && trigger.pattern.test(text)) {
        losing = true;
        trigger.fire();
        trigger = null;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!losing) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    loseAnswersAfter: (pattern) =>
      new Promise<void>((resolve) => {
        trigger = { pattern, fire: resolve };
      }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
