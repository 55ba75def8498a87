/**
 * The WebSocket transport against a real `ws` server on 127.0.0.1 (port 0), speaking the documented
 * protocol. The client side is the `ws` package's WebSocket, which implements the browser's event API
 * (addEventListener, MessageEvent.data, CloseEvent.code): jsdom's own WebSocket dispatches Node `Event`s from
 * another realm under Node 24 and never opens. A real browser's WebSocket is covered by the Chromium e2e tests.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type * as WsModule from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteError, createBridge, type ChannelView } from '../../../electron/contract.js';
import { takeCredential, webSocketUrl } from './bridge.js';
import {
  CLOSE_UNAUTHORIZED,
  WsTransport,
  type ClientMessage,
  type ConnectionState,
  type ServerMessage,
  type VisibilitySource,
} from './transport-ws.js';

// The dom project resolves the 'browser' condition, which maps `ws` to a stub: load the Node build.
const { WebSocketServer, WebSocket: NodeWebSocket } = createRequire(import.meta.url)('ws') as typeof WsModule;

/** One server-side socket with its received messages as an awaitable queue. */
class Peer {
  readonly #queue: ClientMessage[] = [];
  readonly #waiters: ((m: ClientMessage) => void)[] = [];
  constructor(
    readonly socket: WsModule.WebSocket,
    readonly url: string,
    /** The subprotocols the handshake offered (where the page's credential travels). */
    readonly protocols: string,
  ) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as ClientMessage;
      const waiter = this.#waiters.shift();
      if (waiter) waiter(message);
      else this.#queue.push(message);
    });
  }
  next(): Promise<ClientMessage> {
    const queued = this.#queue.shift();
    return queued ? Promise.resolve(queued) : new Promise((resolve) => this.#waiters.push(resolve));
  }
  send(message: ServerMessage): void {
    this.socket.send(JSON.stringify(message));
  }
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function startServer() {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (offered) => [...offered][0] ?? false,
  });
  await once(wss, 'listening');
  const peers: Peer[] = [];
  const waiting: ((p: Peer) => void)[] = [];
  wss.on('connection', (socket, req) => {
    const peer = new Peer(socket, req.url ?? '', String(req.headers['sec-websocket-protocol'] ?? ''));
    const waiter = waiting.shift();
    if (waiter) waiter(peer);
    else peers.push(peer);
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  );
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/ws`,
    /** The next client connection (each reconnect is a new one). */
    connection(): Promise<Peer> {
      const ready = peers.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

function connect(url: string, options: Partial<ConstructorParameters<typeof WsTransport>[0]> = {}) {
  const transport = new WsTransport({
    url,
    backoff: { baseMs: 5, maxMs: 5 },
    visibility: null,
    WebSocket: NodeWebSocket as unknown as typeof WebSocket,
    ...options,
  });
  cleanups.push(() => transport.close());
  return transport;
}

/** Resolves when the transport reaches `state`. */
function reach(transport: WsTransport, state: ConnectionState): Promise<void> {
  if (transport.state === state) return Promise.resolve();
  return new Promise((resolve) => {
    const off = transport.onState((s) => {
      if (s === state) {
        off();
        resolve();
      }
    });
  });
}

describe('WsTransport', () => {
  it('sends invokes in the documented shape and resolves with the result', async () => {
    const server = await startServer();
    const transport = connect(server.url);
    // Invoked before the socket is open: queued, then sent.
    const bridge = createBridge(transport);
    const result = bridge.channels.live();

    const peer = await server.connection();
    expect(peer.url).toBe('/ws');
    expect(await peer.next()).toEqual({ type: 'visibility', visible: true });
    const invoke = await peer.next();
    expect(invoke).toEqual({ id: 1, type: 'invoke', name: 'channels:live', args: [] });

    const channels: ChannelView[] = [
      {
        id: 'a',
        serviceId: 's',
        state: 'live',
        createdAt: '2024-05-14T10:00:00Z',
        endedAt: null,
        durationSeconds: null,
        watchers: 3,
        cumulativeSessions: null,
      },
    ];
    peer.send({ id: 1, type: 'result', ok: true, result: channels });
    expect(await result).toEqual(channels);
    expect(transport.state).toBe('open');

    const ended = bridge.channels.end('a');
    expect(await peer.next()).toEqual({ id: 2, type: 'invoke', name: 'channels:end', args: ['a'] });
    peer.send({ id: 2, type: 'result', ok: true, result: { ended: true } });
    expect(await ended).toEqual({ ended: true });
  });

  it('turns an error result into a RemoteError with its code', async () => {
    const server = await startServer();
    const transport = connect(server.url);
    const call = transport.invoke('channels:end', ['x']);
    const peer = await server.connection();
    await peer.next(); // visibility
    const { id } = (await peer.next()) as { id: number };
    peer.send({ id, type: 'result', ok: false, error: { code: 'unknown_channel', message: 'No live channel "x".' } });

    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toMatchObject({ code: 'unknown_channel', message: 'No live channel "x".' });
  });

  it('delivers events to subscribers and subscribes once per event', async () => {
    const server = await startServer();
    const transport = connect(server.url);
    const bridge = createBridge(transport);
    const a: unknown[] = [];
    const b: unknown[] = [];
    const offA = bridge.on('app:error', (e) => a.push(e));
    const offB = bridge.on('app:error', (e) => b.push(e));
    const offOther = bridge.on('tunnel:status', () => a.push('wrong event'));

    const peer = await server.connection();
    const first = [await peer.next(), await peer.next(), await peer.next()];
    expect(first).toEqual([
      { type: 'subscribe', event: 'app:error' },
      { type: 'subscribe', event: 'tunnel:status' },
      { type: 'visibility', visible: true },
    ]);

    peer.send({ type: 'event', event: 'app:error', payload: { code: 'c', message: 'm' } });
    await expect.poll(() => b).toEqual([{ code: 'c', message: 'm' }]);
    expect(a).toEqual([{ code: 'c', message: 'm' }]);
    offOther();
    expect(await peer.next()).toEqual({ type: 'unsubscribe', event: 'tunnel:status' });

    offA();
    offB();
    expect(await peer.next()).toEqual({ type: 'unsubscribe', event: 'app:error' });
  });

  it('reconnects after a drop and subscribes again', async () => {
    const server = await startServer();
    const transport = connect(server.url);
    const seen: ConnectionState[] = [];
    transport.onState((s) => seen.push(s));
    const payloads: unknown[] = [];
    transport.subscribe('channels:live', (p) => payloads.push(p));

    const first = await server.connection();
    expect(await first.next()).toEqual({ type: 'subscribe', event: 'channels:live' });
    await reach(transport, 'open');
    first.socket.terminate();

    const second = await server.connection();
    expect(await second.next()).toEqual({ type: 'subscribe', event: 'channels:live' });
    expect(await second.next()).toEqual({ type: 'visibility', visible: true });
    await reach(transport, 'open');
    expect(seen).toEqual(['open', 'reconnecting', 'open']);

    second.send({ type: 'event', event: 'channels:live', payload: [] });
    await expect.poll(() => payloads).toEqual([[]]);
  });

  it('rejects requests in flight when the connection closes', async () => {
    const server = await startServer();
    const transport = connect(server.url);
    const peer = await server.connection();
    await reach(transport, 'open');
    const call = transport.invoke('channels:search', [
      { since: '2024-05-14T00:00:00Z', until: '2024-05-14T01:00:00Z' },
    ]);
    await peer.next(); // visibility
    expect(await peer.next()).toMatchObject({ type: 'invoke', name: 'channels:search' });

    peer.socket.close(1011);
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect((error as RemoteError).code).toBe('disconnected');

    // The transport keeps going: the next call works on the new socket.
    const again = transport.invoke('app:info', []);
    const next = await server.connection();
    await next.next(); // visibility
    const { id } = (await next.next()) as { id: number };
    next.send({ id, type: 'result', ok: true, result: { version: '1' } });
    expect(await again).toEqual({ version: '1' });
  });

  it('times out a request that gets no answer', async () => {
    const server = await startServer();
    const transport = connect(server.url, { timeoutMs: 50 });
    const call = transport.invoke('recordings:list', []);
    await server.connection();
    const error = await call.catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'timeout', message: 'Tally did not answer "recordings:list" within 0.05 s.' });
  });

  it('stops and rejects everything when the server refuses the token', async () => {
    const server = await startServer();
    const transport = connect(server.url);
    const peer = await server.connection();
    await reach(transport, 'open');
    peer.socket.close(CLOSE_UNAUTHORIZED, 'bad token');
    await reach(transport, 'unauthorized');
    const error = await transport.invoke('app:info', []).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'disconnected' });
  });

  it('reports page visibility changes', async () => {
    const server = await startServer();
    const target = new EventTarget();
    const visibility = Object.assign(target, { visibilityState: 'visible' as DocumentVisibilityState });
    const transport = connect(server.url, { visibility: visibility as unknown as VisibilitySource });
    const peer = await server.connection();
    expect(await peer.next()).toEqual({ type: 'visibility', visible: true });
    await reach(transport, 'open');

    visibility.visibilityState = 'hidden';
    target.dispatchEvent(new Event('visibilitychange'));
    expect(await peer.next()).toEqual({ type: 'visibility', visible: false });
  });

  it('waits the reconnect backoff while hidden, and reconnects at once when the page is shown again', async () => {
    const server = await startServer();
    const target = new EventTarget();
    const visibility = Object.assign(target, { visibilityState: 'hidden' as DocumentVisibilityState });
    // A wait no test would sit out: only the page coming back can end it.
    const transport = connect(server.url, {
      visibility: visibility as unknown as VisibilitySource,
      backoff: { baseMs: 600_000, maxMs: 600_000 },
    });
    const first = await server.connection();
    await reach(transport, 'open');
    first.socket.terminate();
    await reach(transport, 'reconnecting');

    visibility.visibilityState = 'visible';
    target.dispatchEvent(new Event('visibilitychange'));
    const second = await server.connection();
    expect(await second.next()).toEqual({ type: 'visibility', visible: true });
    await reach(transport, 'open');
  });
});

describe('page credential', () => {
  it('offers its credential in the handshake, and the session key it is sent on every reconnect', async () => {
    const server = await startServer();
    let credential: { code: string } | { key: string } = { code: 'c0de' };
    const sessions: string[] = [];
    const transport = connect(server.url, {
      protocols: () => [
        'tally.v1',
        'code' in credential ? `tally.code.${credential.code}` : `tally.key.${credential.key}`,
      ],
      onSession: (key) => {
        sessions.push(key);
        credential = { key };
      },
    });
    const first = await server.connection();
    expect(first.url).toBe('/ws');
    expect(first.protocols).toBe('tally.v1,tally.code.c0de');
    first.send({ type: 'session', key: 'k3y' });
    await reach(transport, 'open');
    expect(await first.next()).toEqual({ type: 'visibility', visible: true });
    first.socket.close(1011);
    const second = await server.connection();
    expect(sessions).toEqual(['k3y']);
    expect(second.protocols).toBe('tally.v1,tally.key.k3y');
  });

  it('takes the one-time code from the link and hides it; a reload uses the key kept in sessionStorage', () => {
    history.replaceState(null, '', '/?code=c0de&x=1#search');
    sessionStorage.clear();
    expect(takeCredential()).toEqual({ code: 'c0de' });
    expect(location.href).not.toContain('c0de');
    expect(location.search).toBe('?x=1');
    expect(location.hash).toBe('#search');
    // After a reload the link no longer has it, and no key was sent yet.
    expect(takeCredential()).toBeNull();
    sessionStorage.setItem('tally.token', 'k3y');
    expect(takeCredential()).toEqual({ key: 'k3y' });
    // The key never goes into the address: it travels in the handshake.
    expect(webSocketUrl({ protocol: 'http:', host: '127.0.0.1:4000' })).toBe('ws://127.0.0.1:4000/ws');
    expect(webSocketUrl({ protocol: 'https:', host: 'x.test' })).toBe('wss://x.test/ws');
  });
});
