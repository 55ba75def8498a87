/**
 * WebSocket transport: the browser twin of the Electron preload. `tally serve` serves the popover and a
 * WebSocket endpoint on the same loopback origin; this module speaks to it and hands `createBridge` a
 * `Transport`, so views cannot tell which shell they run in.
 *
 * Protocol (JSON text frames, one message per frame). The server implements exactly this.
 *
 * Endpoint: `ws(s)://<host of the page>/ws`, with the page's credential in `Sec-WebSocket-Protocol`
 * (contract.ts `uiProtocols`): the one-time code of the page link at first, the session key after. The server
 * answers a missing or wrong credential with close code 4401 just after the handshake (a page of another
 * origin gets HTTP 403 at it); the client then stops reconnecting and asks the user for a new link.
 *
 * Client -> server
 *   {"id":n,"type":"invoke","name":"channels:live","args":[...]}   n: positive integer, unique per socket
 *   {"type":"subscribe","event":"channels:live"}                    start pushing this event to the socket
 *   {"type":"unsubscribe","event":"channels:live"}
 *   {"type":"visibility","visible":true}                            page shown/hidden (live polling pauses)
 *
 * Server -> client
 *   {"type":"session","key":"..."}                                  first, after a one-time code was spent
 *   {"id":n,"type":"result","ok":true,"result":<RequestMap[name]["result"]>}
 *   {"id":n,"type":"result","ok":false,"error":{"code":"validation","message":"..."}}
 *   {"type":"event","event":"channels:live","payload":<EventMap[event]>}
 *
 * Rules: every invoke gets exactly one result with its id. Subscriptions and visibility belong to one
 * socket: after a reconnect the client sends `subscribe` again for every event it listens to, then its
 * current `visibility`. A socket starts hidden until told otherwise. Unknown message types are ignored
 * by both sides. Close code 4401 (or 1008) means the token was refused.
 */
import {
  RemoteError,
  RetryLoop,
  type BackoffPolicy,
  type ErrorView,
  type EventName,
  type RequestName,
  type Transport,
} from '../../../electron/contract.js';

/** A request from the page. */
export interface InvokeMessage {
  id: number;
  type: 'invoke';
  name: RequestName;
  args: unknown[];
}

export type ClientMessage =
  | InvokeMessage
  | { type: 'subscribe'; event: EventName }
  | { type: 'unsubscribe'; event: EventName }
  | { type: 'visibility'; visible: boolean };

export type ResultMessage =
  | { id: number; type: 'result'; ok: true; result: unknown }
  | { id: number; type: 'result'; ok: false; error: ErrorView };

export type ServerMessage =
  ResultMessage | { type: 'event'; event: EventName; payload: unknown } | { type: 'session'; key: string };

/** Close code the server uses when it refuses the token. */
export const CLOSE_UNAUTHORIZED = 4401;

export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'unauthorized';

/** What the header and the reconnect banner watch. The Electron shell is always 'open'. */
export interface ConnectionSource {
  readonly state: ConnectionState;
  onState(listener: (state: ConnectionState) => void): () => void;
}

/** A connection that never changes state (Electron IPC). */
export function staticConnection(state: ConnectionState = 'open'): ConnectionSource {
  return { state, onState: () => () => {} };
}

type Listener = (payload: unknown) => void;

interface Pending {
  message: InvokeMessage;
  sent: boolean;
  timer: ReturnType<typeof setTimeout>;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** The part of `document` the transport needs to report visibility. */
export type VisibilitySource = Pick<Document, 'visibilityState' | 'addEventListener' | 'removeEventListener'>;

export interface WsTransportOptions {
  url: string;
  /** Injected in tests; defaults to the global WebSocket. */
  WebSocket?: typeof WebSocket;
  /** How long an invoke may wait for its result (default 30 s). */
  timeoutMs?: number;
  /** The waits between reconnects (default RECONNECT_BACKOFF). */
  backoff?: BackoffPolicy;
  /** Visibility to report; null disables reporting (always visible). */
  visibility?: VisibilitySource | null;
  /** The subprotocols of each handshake: they carry the page's credential (asked again at each reconnect). */
  protocols?: () => string[];
  /** The server's session key, sent once after a one-time code was spent: what later handshakes carry. */
  onSession?: (key: string) => void;
}

/**
 * From 0.5 s to 10 s, a quarter of each wait random so that many tabs do not reconnect in lockstep. The core's
 * one retry loop and formula (electron/core/retry-loop.ts and backoff.ts, browser-safe, through the contract).
 */
export const RECONNECT_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 10_000, jitter: 0.25 };

function isServerMessage(value: unknown): value is ServerMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  if (m.type === 'event') return typeof m.event === 'string';
  if (m.type === 'session') return typeof m.key === 'string';
  if (m.type !== 'result' || typeof m.id !== 'number') return false;
  if (m.ok === true) return true;
  const e = m.error as Record<string, unknown> | undefined;
  return m.ok === false && typeof e === 'object' && e !== null;
}

/** Request/response and push events over one WebSocket, reconnecting with backoff. */
export class WsTransport implements Transport, ConnectionSource {
  readonly #url: string;
  readonly #WebSocket: typeof WebSocket;
  readonly #timeoutMs: number;
  readonly #reconnect: RetryLoop;
  readonly #visibility: VisibilitySource | null;
  readonly #protocols: () => string[];
  readonly #onSession: (key: string) => void;
  #socket: WebSocket | null = null;
  #state: ConnectionState = 'connecting';
  #nextId = 1;
  #closed = false;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Map<EventName, Set<Listener>>();
  readonly #stateListeners = new Set<(state: ConnectionState) => void>();

  constructor(options: WsTransportOptions) {
    this.#url = options.url;
    const Ctor = options.WebSocket ?? globalThis.WebSocket;
    if (!Ctor) throw new Error('This browser has no WebSocket support.');
    this.#WebSocket = Ctor;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#reconnect = new RetryLoop({
      policy: options.backoff ?? RECONNECT_BACKOFF,
      // The page's monotonic clock (the core's time module is Node's): the loop reads it only for a deadline.
      clock: { now: () => performance.now() },
    });
    this.#visibility = options.visibility === undefined ? globalThis.document : options.visibility;
    this.#protocols = options.protocols ?? (() => []);
    this.#onSession = options.onSession ?? (() => {});
    this.#visibility?.addEventListener('visibilitychange', this.#onVisibility);
    this.#connect();
  }

  get state(): ConnectionState {
    return this.#state;
  }

  /** Number of events with at least one listener (what a reconnect resubscribes). */
  get subscribedEvents(): EventName[] {
    return [...this.#listeners.keys()];
  }

  onState(listener: (state: ConnectionState) => void): () => void {
    this.#stateListeners.add(listener);
    return () => this.#stateListeners.delete(listener);
  }

  invoke(name: RequestName, args: readonly unknown[]): Promise<unknown> {
    if (this.#closed || this.#state === 'unauthorized') {
      return Promise.reject(new RemoteError('disconnected', 'Not connected to Tally.'));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        const seconds = this.#timeoutMs / 1000;
        reject(new RemoteError('timeout', `Tally did not answer "${name}" within ${seconds} s.`));
      }, this.#timeoutMs);
      const pending: Pending = {
        message: { id, type: 'invoke', name, args: [...args] },
        sent: false,
        timer,
        resolve,
        reject,
      };
      this.#pending.set(id, pending);
      // While (re)connecting the request waits in the queue; the timeout still bounds it.
      if (this.#state === 'open') this.#sendInvoke(pending);
    });
  }

  subscribe(event: EventName, listener: (payload: unknown) => void): () => void {
    let set = this.#listeners.get(event);
    if (!set) {
      set = new Set();
      this.#listeners.set(event, set);
      this.#send({ type: 'subscribe', event });
    }
    set.add(listener);
    return () => {
      const current = this.#listeners.get(event);
      if (!current?.delete(listener) || current.size > 0) return;
      this.#listeners.delete(event);
      this.#send({ type: 'unsubscribe', event });
    };
  }

  /** Closes for good: no reconnect, every waiting request is rejected. */
  close(): void {
    this.#closed = true;
    this.#reconnect.cancel();
    this.#visibility?.removeEventListener('visibilitychange', this.#onVisibility);
    this.#rejectAll(() => true, 'disconnected', 'The connection to Tally was closed.');
    this.#socket?.close(1000);
    this.#socket = null;
  }

  #setState(state: ConnectionState): void {
    if (state === this.#state) return;
    this.#state = state;
    for (const listener of [...this.#stateListeners]) listener(state);
  }

  #connect(): void {
    const protocols = this.#protocols();
    const socket = protocols.length > 0 ? new this.#WebSocket(this.#url, protocols) : new this.#WebSocket(this.#url);
    this.#socket = socket;
    socket.addEventListener('open', () => {
      if (socket !== this.#socket) return;
      this.#reconnect.reset();
      for (const event of this.#listeners.keys()) this.#send({ type: 'subscribe', event }, socket);
      this.#send({ type: 'visibility', visible: this.#visible() }, socket);
      this.#setState('open');
      for (const pending of this.#pending.values()) if (!pending.sent) this.#sendInvoke(pending);
    });
    socket.addEventListener('message', (e: MessageEvent) => {
      if (socket === this.#socket) this.#onMessage(e.data);
    });
    socket.addEventListener('close', (e: CloseEvent) => {
      if (socket !== this.#socket) return;
      this.#socket = null;
      this.#onClose(e.code);
    });
    // An error is always followed by a close event, which does the work.
    socket.addEventListener('error', () => {});
  }

  #onClose(code: number): void {
    // Requests already sent may or may not have run: the caller must be told, not silently replayed.
    this.#rejectAll((p) => p.sent, 'disconnected', 'Lost the connection to Tally before it answered.');
    if (this.#closed) return;
    if (code === CLOSE_UNAUTHORIZED || code === 1008) {
      this.#setState('unauthorized');
      this.#rejectAll(
        () => true,
        'unauthorized',
        'Tally refused this page. Each link opens Tally once: start "tally serve" again for a new link.',
      );
      return;
    }
    this.#setState('reconnecting');
    this.#reconnect.retry(() => this.#connect());
  }

  #onMessage(data: unknown): void {
    let message: unknown;
    try {
      message = JSON.parse(String(data));
    } catch {
      return;
    }
    if (!isServerMessage(message)) return;
    if (message.type === 'session') {
      this.#onSession(message.key);
      return;
    }
    if (message.type === 'event') {
      for (const listener of [...(this.#listeners.get(message.event) ?? [])]) {
        try {
          listener(message.payload);
        } catch (error) {
          // One broken listener must not starve the others.
          console.error(error);
        }
      }
      return;
    }
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    this.#pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.ok) pending.resolve(message.result);
    else {
      const { code, message: text, params } = message.error;
      const fields = typeof params === 'object' && params !== null ? params : undefined;
      pending.reject(new RemoteError(String(code), String(text), fields));
    }
  }

  #sendInvoke(pending: Pending): void {
    if (this.#send(pending.message)) pending.sent = true;
  }

  #send(message: ClientMessage, socket = this.#socket): boolean {
    if (!socket || socket.readyState !== this.#WebSocket.OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  #rejectAll(which: (p: Pending) => boolean, code: string, message: string): void {
    for (const [id, pending] of [...this.#pending]) {
      if (!which(pending)) continue;
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(new RemoteError(code, message));
    }
  }

  #visible(): boolean {
    return this.#visibility ? this.#visibility.visibilityState !== 'hidden' : true;
  }

  readonly #onVisibility = (): void => {
    const visible = this.#visible();
    this.#send({ type: 'visibility', visible });
    // Coming back to the tab should not wait out a long backoff.
    if (visible && this.#state === 'reconnecting' && this.#reconnect.pending)
      this.#reconnect.again(() => this.#connect());
  };
}
