/**
 * The socket half of the localtunnel protocol: after the control request (`GET <host>/?new`, in
 * localtunnel.ts) the server listens on one port for up to `max_conn_count` client sockets, and sends each public
 * request down one of them. The client keeps that many sockets open to the server and pipes each, byte for
 * byte, to a fresh connection to the local receiver.
 *
 * Why not the `localtunnel` package (issue 35): it is unmaintained since 2021 and pins axios 0.21; its maintained
 * fork keeps the two behaviours Tally could only avoid by reaching into private methods: a control request retried
 * every second forever on a timer nothing cancels, and tunnel sockets sent to whatever `ip` the server names. Its
 * Host-header rewrite also decodes the first chunk of each request as UTF-8, which mangles a binary upload body.
 * The protocol itself is a plain TCP relay: these are the few lines it takes, with every timer cancellable.
 */
import { EventEmitter } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { BackoffPolicy } from '../backoff.js';
import { RetryLoop } from '../retry-loop.js';
import { systemClock } from '../time.js';

export interface LocaltunnelSocketsOptions {
  /** The tunnel server's host name (the configured host's, never an address the server names). */
  remoteHost: string;
  /** The port the server opened for this client. */
  remotePort: number;
  /** How many sockets the server accepts from this client. */
  count: number;
  /** The local receiver. */
  localHost: string;
  localPort: number;
}

interface LocaltunnelSocketsEvents {
  /** The first socket to the server is connected: public requests can get through. */
  open: [];
  /** The server refused a socket: the tunnel is gone (the server restarted or dropped this client). */
  error: [Error];
}

/** Waits between reconnects of one slot, so a server that accepts and closes at once is not hammered. */
const RECONNECT: BackoffPolicy = { baseMs: 250, maxMs: 5_000, jitter: 0.5 };
/** Waits before connecting to a receiver that refused (it is restarting on the same port). */
const LOCAL_RETRY: BackoffPolicy = { baseMs: 250, maxMs: 2_000 };

/** `count` relays between the tunnel server and the local receiver, each replaced when it closes. */
export class LocaltunnelSockets extends EventEmitter<LocaltunnelSocketsEvents> {
  readonly #options: LocaltunnelSocketsOptions;
  readonly #sockets = new Set<Socket>();
  /** Stops every slot's pending reconnect at once. */
  readonly #stop = new AbortController();
  #opened = false;

  constructor(options: LocaltunnelSocketsOptions) {
    super();
    this.#options = options;
  }

  /** Opens every slot. */
  open(): void {
    for (let slot = 0; slot < this.#options.count; slot++) this.#connectRemote(this.#loop(RECONNECT));
  }

  /** Closes every socket and cancels every pending reconnect; nothing is reopened after. */
  close(): void {
    this.#stop.abort();
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
  }

  get #closed(): boolean {
    return this.#stop.signal.aborted;
  }

  #loop(policy: BackoffPolicy): RetryLoop {
    return new RetryLoop({ policy, signal: this.#stop.signal, clock: systemClock });
  }

  #track(socket: Socket): Socket {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    return socket;
  }

  /** One slot: a socket to the server, replaced (after a wait that grows while it keeps failing) when it closes. */
  #connectRemote(retry: RetryLoop): void {
    const { remoteHost, remotePort } = this.#options;
    const remote = this.#track(connect({ host: remoteHost, port: remotePort }));
    remote.setKeepAlive(true);
    let connected = false;
    remote.once('connect', () => {
      connected = true;
      retry.reset();
      if (!this.#opened) {
        this.#opened = true;
        this.emit('open');
      }
      remote.pause();
      this.#connectLocal(remote, this.#loop(LOCAL_RETRY));
    });
    remote.on('error', (error: NodeJS.ErrnoException) => {
      // A refused socket means the server no longer has this client's port: the tunnel must be opened anew.
      if (error.code === 'ECONNREFUSED' && !this.#closed) {
        this.emit('error', new Error(`connection refused: ${remoteHost}:${remotePort}`, { cause: error }));
      }
    });
    remote.once('close', () => {
      if (this.#closed) return;
      // A relay that carried a request is replaced at once; one that never connected waits first.
      const again = (): void => this.#connectRemote(retry);
      if (connected) retry.again(again);
      else retry.retry(again);
    });
  }

  /** Relays `remote` to a new connection to the receiver, retrying while the receiver refuses. */
  #connectLocal(remote: Socket, retry: RetryLoop): void {
    if (remote.destroyed || this.#closed) return;
    const { localHost, localPort } = this.#options;
    const local = this.#track(connect({ host: localHost, port: localPort }));
    const onRemoteClose = (): void => void local.destroy();
    remote.once('close', onRemoteClose);
    local.once('error', (error: NodeJS.ErrnoException) => {
      remote.off('close', onRemoteClose);
      if (error.code === 'ECONNREFUSED') retry.retry(() => this.#connectLocal(remote, retry));
      else remote.destroy();
    });
    local.once('connect', () => {
      // Each side ends the other when it ends; the remote's close then replaces this slot.
      remote.pipe(local).pipe(remote);
      remote.resume();
    });
  }
}
