/**
 * TEST ORIGIN over a raw TCP socket, for what a well-behaved HTTP server cannot do: headers or bodies trickled
 * byte by byte, bodies without a length that never end, answers whose bytes differ from what the headers say.
 * Each request's answer is written by a `respond` function given the request head and the socket.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export type RawResponder = (head: string, socket: Socket) => void;

export class RawOrigin {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();
  origin = '';
  /** Request heads received, in order. */
  readonly heads: string[] = [];

  private constructor(respond: RawResponder) {
    this.#server = createServer((socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
      socket.on('error', () => undefined);
      let buffered = '';
      const onData = (chunk: Buffer): void => {
        buffered += chunk.toString('latin1');
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        const head = buffered.slice(0, end);
        this.heads.push(head);
        respond(head, socket);
      };
      socket.on('data', onData);
    });
  }

  static async start(respond: RawResponder): Promise<RawOrigin> {
    const origin = new RawOrigin(respond);
    origin.#server.listen(0, '127.0.0.1');
    await once(origin.#server, 'listening');
    origin.origin = `http://127.0.0.1:${(origin.#server.address() as AddressInfo).port}`;
    return origin;
  }

  /** Writes `bytes` to `socket` one byte every `everyMs` until the socket closes or the bytes run out. */
  trickle(socket: Socket, bytes: Buffer | (() => Buffer), everyMs: number): void {
    let sent = 0;
    const timer = setInterval(() => {
      const next = typeof bytes === 'function' ? bytes() : bytes.subarray(sent, sent + 1);
      if (socket.destroyed || next.length === 0) {
        clearInterval(timer);
        this.#timers.delete(timer);
        return;
      }
      socket.write(next);
      sent += next.length;
    }, everyMs);
    this.#timers.add(timer);
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    for (const socket of this.#sockets) socket.destroy();
    this.#server.close();
    await once(this.#server, 'close');
  }
}
