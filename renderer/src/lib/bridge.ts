/**
 * Picks the transport: the Electron preload's `window.tally`, or a WebSocket to `tally serve`.
 */
import { createBridge, type TallyBridge } from '../../../electron/contract.js';
import { WsTransport, staticConnection, type ConnectionSource } from './transport-ws.js';

declare global {
  interface Window {
    /** Exposed by the Electron preload through contextBridge. */
    tally?: TallyBridge;
  }
}

export interface BridgeHandle {
  bridge: TallyBridge;
  connection: ConnectionSource;
}

const TOKEN_KEY = 'tally.token';

/**
 * Reads the access token from the page link (`?token=`), removes it from the address bar so it is not
 * left visible or in history, and keeps it in sessionStorage so a reload of this tab still works.
 */
export function takeToken(win: Pick<Window, 'location' | 'history' | 'sessionStorage'> = window): string | null {
  const url = new URL(win.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    try {
      win.sessionStorage.setItem(TOKEN_KEY, fromUrl);
    } catch {
      // Storage can be disabled; the token still works for this page load.
    }
    url.searchParams.delete('token');
    win.history.replaceState(win.history.state, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  try {
    return win.sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** The WebSocket endpoint on the page's own origin. */
export function webSocketUrl(location: Pick<Location, 'protocol' | 'host'>, token: string | null): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const query = token ? `?token=${encodeURIComponent(token)}` : '';
  return `${scheme}://${location.host}/ws${query}`;
}

/** The bridge for this page: Electron IPC when the preload is present, otherwise the WebSocket. */
export function getBridge(win: Window = window): BridgeHandle {
  if (win.tally) return { bridge: win.tally, connection: staticConnection('open') };
  const transport = new WsTransport({ url: webSocketUrl(win.location, takeToken(win)) });
  return { bridge: createBridge(transport), connection: transport };
}
