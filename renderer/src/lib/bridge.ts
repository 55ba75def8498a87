/**
 * Picks the transport: the Electron preload's `window.tally`, or a WebSocket to `tally serve`.
 */
import { createBridge, UI_PROTOCOL, uiProtocols, type TallyBridge } from '../../../electron/contract.js';
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

/** Where this tab keeps the session key: sessionStorage is per scheme, host and port, and per tab. */
const KEY_ITEM = 'tally.token';

/** What the page proves itself with: its link's one-time code, or the session key it was sent. */
export type PageCredential = { code: string } | { key: string } | null;

/**
 * Reads the one-time code from the page link (`?code=`) and removes it from the address bar (it is spent at
 * the first handshake anyway); without one, the session key this tab was sent before (a reload).
 */
export function takeCredential(win: Pick<Window, 'location' | 'history' | 'sessionStorage'> = window): PageCredential {
  const url = new URL(win.location.href);
  const code = url.searchParams.get('code');
  if (code) {
    url.searchParams.delete('code');
    win.history.replaceState(win.history.state, '', url.pathname + url.search + url.hash);
    return { code };
  }
  try {
    const key = win.sessionStorage.getItem(KEY_ITEM);
    return key ? { key } : null;
  } catch {
    return null;
  }
}

/** The WebSocket endpoint on the page's own origin (the credential travels in the handshake, not here). */
export function webSocketUrl(location: Pick<Location, 'protocol' | 'host'>): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}/ws`;
}

/** The bridge for this page: Electron IPC when the preload is present, otherwise the WebSocket. */
export function getBridge(win: Window = window): BridgeHandle {
  if (win.tally) return { bridge: win.tally, connection: staticConnection('open') };
  let credential = takeCredential(win);
  const transport = new WsTransport({
    url: webSocketUrl(win.location),
    protocols: () => (credential ? uiProtocols(credential) : [UI_PROTOCOL]),
    onSession: (key) => {
      credential = { key };
      try {
        win.sessionStorage.setItem(KEY_ITEM, key);
      } catch {
        // Storage can be disabled; the key still serves this page load's reconnects.
      }
    },
  });
  return { bridge: createBridge(transport), connection: transport };
}
