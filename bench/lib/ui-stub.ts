/**
 * A stand-in for `tally serve` for the renderer bench: serves the built popover (dist/renderer) and speaks
 * the WebSocket protocol of renderer/src/lib/transport-ws.ts, answering every request the popover makes on
 * start with plausible values, and `channels:live` / `channels:search` with generated lists of a given size.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ChannelView, RequestName, SearchResultView } from '../../electron/contract.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/** Watcher count of the first channel in a pushed update (shown as "987,654"), for the page to spot. */
export const LIVE_MARKER = 987_654;

/** Deterministic pseudo-random channel IDs in the service's `<epoch ms>_<5 chars>` style. */
function channelId(i: number, base: number): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let x = (i * 2654435761) >>> 0;
  let suffix = '';
  for (let k = 0; k < 5; k += 1) {
    suffix += chars[x % chars.length];
    x = Math.floor(x / chars.length) + 7919 * (k + 1);
  }
  return `${base + i * 1373}_${suffix}`;
}

/** `count` live channels started over the last few hours. */
export function liveChannels(count: number, now: number): ChannelView[] {
  return Array.from({ length: count }, (_, i) => ({
    id: channelId(i, now - 4 * 3600_000),
    serviceId: 'bench-service',
    state: 'live',
    createdAt: new Date(now - ((i * 7919) % (4 * 3600)) * 1000).toISOString(),
    endedAt: null,
    durationSeconds: null,
    watchers: (i * 31) % 1200,
    cumulativeSessions: null,
  }));
}

/** `count` ended channels from the last hour (the Search tab's default period). */
export function searchResult(count: number, now: number): SearchResultView {
  const channels: ChannelView[] = Array.from({ length: count }, (_, i) => {
    const created = now - 3600_000 + ((i * 104729) % 3_000_000);
    const duration = 30 + ((i * 7907) % 1800);
    return {
      id: channelId(i, now - 3600_000),
      serviceId: 'bench-service',
      state: 'ended',
      createdAt: new Date(created).toISOString(),
      endedAt: new Date(created + duration * 1000).toISOString(),
      durationSeconds: duration,
      watchers: null,
      cumulativeSessions: (i * 13) % 400,
    };
  });
  return { totalCount: count, channels, truncated: false };
}

/**
 * Every answer as ready JSON text, built when the sizes are set: generating and serialising 50,000 channels
 * takes the stub longer than a real core's cached answer would, and that time is not the renderer's.
 */
function answers(sizes: { live: number; search: number }, epoch: number): Map<string, string> {
  const now = new Date(epoch).toISOString();
  const values: Partial<Record<RequestName, () => unknown>> = {
    'app:info': () => ({
      version: '0.1.0',
      platform: 'linux',
      transport: 'ws',
      demo: false,
      native: false,
      fileActions: false,
    }),
    'settings:get': () => ({
      recordingsFolder: '/home/bench/Recordings',
      pollIntervalSec: 10,
      fileNameTemplate: '{date}_{channel}',
      concurrency: 2,
      notifications: { saved: true, failed: true, unreachable: true },
      launchAtLogin: false,
      language: 'en',
      tunnel: { provider: 'none', publicUrl: null, ngrokDomain: null, localtunnelHost: null },
      autoRegisterWebhook: false,
      endpoints: { baseUrl: null, consoleApiUrl: null, adminUrl: null },
      uploadOrigins: [],
      demoMode: false,
      receivingPaused: false,
      // A producer past the first-run guide: the bench measures the Live and Search lists, not the guide.
      firstRunDone: true,
    }),
    'credentials:status': () => ({
      configured: true,
      serviceId: 'bench-service',
      source: 'env',
      keychainAvailable: true,
      keychainMessage: null,
    }),
    'tunnel:status': () => ({
      provider: 'none',
      state: 'off',
      publicUrl: null,
      localUrl: 'http://127.0.0.1:8787/hooks/xxxxxxxxxxxxxxxxxxxxxx',
      uploadUrl: null,
      lastCheckedAt: now,
      message: null,
      registered: false,
    }),
    'recordings:list': () => [],
    'recordings:gaps': () => ({ since: null, checkedAt: now, missing: [], error: null }),
    'channels:live': () => liveChannels(sizes.live, epoch),
    'channels:search': () => searchResult(sizes.search, epoch),
  };
  return new Map(Object.entries(values).map(([name, make]) => [name, JSON.stringify(make())]));
}

export interface UiStub {
  /** Page URL with a one-time code (the stub lets any page in); append `#live` or `#search`. */
  pageUrl: string;
  /** Changes the list sizes for the next page load. */
  setSizes(sizes: { live: number; search: number }): void;
  /**
   * Pushes a `channels:live` poll result: the same `count` channels as the page loaded, every watcher count
   * changed, the first one to LIVE_MARKER. Returns the number of sockets reached.
   */
  pushLiveUpdate(count: number): number;
  stop(): Promise<void>;
}

/** Serves `root` (the built renderer) and the WebSocket stub on a free loopback port. */
export async function startUiStub(root: string): Promise<UiStub> {
  // One clock for every answer and push, so a pushed list has the same channel IDs as the loaded one.
  const epoch = Date.now();
  let handlers = answers({ live: 0, search: 0 }, epoch);
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://stub.invalid').pathname;
    const rel = normalize(path === '/' ? '/index.html' : path).replace(/^(\.\.[/\\])+/, '');
    readFile(join(root, rel)).then(
      (data) => {
        res.writeHead(200, { 'content-type': TYPES[extname(rel)] ?? 'application/octet-stream' });
        res.end(data);
      },
      () => res.writeHead(404).end(),
    );
  });
  const wss = new WebSocketServer({ server, path: '/ws' });
  const subscribed = new Map<WebSocket, Set<string>>();
  wss.on('connection', (socket) => {
    const events = new Set<string>();
    subscribed.set(socket, events);
    socket.once('close', () => subscribed.delete(socket));
    socket.on('message', (data) => {
      let msg: { id?: unknown; type?: unknown; name?: unknown; event?: unknown };
      try {
        msg = JSON.parse(String(data)) as typeof msg;
      } catch {
        return;
      }
      if (msg.type === 'subscribe') events.add(String(msg.event));
      if (msg.type === 'unsubscribe') events.delete(String(msg.event));
      if (msg.type !== 'invoke' || typeof msg.id !== 'number') return;
      const result = handlers.get(String(msg.name));
      const error = { code: 'unsupported', message: 'not in the bench stub' };
      socket.send(
        result !== undefined
          ? `{"id":${msg.id},"type":"result","ok":true,"result":${result}}`
          : JSON.stringify({ id: msg.id, type: 'result', ok: false, error }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    pageUrl: `http://127.0.0.1:${port}/?code=bench`,
    setSizes: (sizes) => (handlers = answers(sizes, epoch)),
    pushLiveUpdate: (count) => {
      const event = 'channels:live';
      const payload = liveChannels(count, epoch).map((c, i) => ({
        ...c,
        watchers: i === 0 ? LIVE_MARKER : (c.watchers ?? 0) + 1,
      }));
      const text = JSON.stringify({ type: 'event', event, payload });
      let reached = 0;
      for (const [socket, events] of subscribed) {
        if (!events.has(event)) continue;
        socket.send(text);
        reached += 1;
      }
      return reached;
    },
    stop: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
