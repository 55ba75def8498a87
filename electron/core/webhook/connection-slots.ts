/**
 * The receiver's connection limit, kept so that slow or silent clients cannot starve genuine webhooks. Node's
 * own `server.maxConnections` refuses the newcomer, which under a slow-client flood is the genuine webhook;
 * here the least useful connection makes room instead. No token is needed to hold a connection with slow
 * headers, and the upload route's token sits in a web page, so anyone can hold one with a stalled body.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { systemClock } from '../time.js';

interface Connection {
  /** When it connected or its last request was answered. */
  since: number;
  /** The request being handled on it, if any. */
  request: IncomingMessage | null;
  /** `socket.bytesRead` when last looked at, and when that count last moved. */
  bytesSeen: number;
  progressAt: number;
}

export class ConnectionSlots {
  readonly #max: number;
  readonly #connections = new Map<Socket, Connection>();

  constructor(max: number) {
    this.#max = max;
  }

  /** A new connection (the server's `connection` event). Over the limit, one connection is closed. */
  admit(socket: Socket): void {
    const now = systemClock.now();
    this.#connections.set(socket, { since: now, request: null, bytesSeen: 0, progressAt: now });
    socket.once('close', () => this.#connections.delete(socket));
    if (this.#connections.size <= this.#max) return;
    // Only when every other connection is a request already fully received (a webhook waiting for its fsync,
    // answered in milliseconds) does the newcomer wait its turn elsewhere.
    (this.#leastUseful(socket, now) ?? socket).destroy();
  }

  /** A request began on its connection; call what this returns once its response is closed. */
  started(req: IncomingMessage): () => void {
    const socket = req.socket as Socket;
    const connection = this.#connections.get(socket);
    if (!connection) return () => undefined;
    Object.assign(connection, { request: req, bytesSeen: socket.bytesRead, progressAt: systemClock.now() });
    return () => Object.assign(connection, { request: null, since: systemClock.now() });
  }

  /**
   * Which connection gives way to a newcomer: the oldest one with no request in progress (headers still
   * arriving, or idle between requests), else the request whose body has gone longest without a byte (a stalled
   * or trickled webhook body, a stalled upload). A request whose body has fully arrived is being answered and
   * is never cut. Progress is the socket's byte count, sampled here: a body that moved since the last look
   * counts as moving now.
   */
  #leastUseful(newcomer: Socket, now: number): Socket | null {
    let idle: Socket | null = null;
    let idleSince = Infinity;
    let stalled: Socket | null = null;
    let stalledSince = Infinity;
    for (const [socket, connection] of this.#connections) {
      if (socket === newcomer) continue;
      const { request } = connection;
      if (!request) {
        if (connection.since < idleSince) [idle, idleSince] = [socket, connection.since];
        continue;
      }
      if (request.complete) continue;
      if (socket.bytesRead !== connection.bytesSeen) {
        connection.bytesSeen = socket.bytesRead;
        connection.progressAt = now;
      }
      if (connection.progressAt < stalledSince) [stalled, stalledSince] = [socket, connection.progressAt];
    }
    return idle ?? stalled;
  }
}
