/**
 * The preload: exposes `window.tally`, the contract's named methods over IPC, and nothing else.
 * No generic `invoke`, no `ipcRenderer`, no Node objects cross into the page (electron/fiddle's
 * `src/preload/preload.ts` pattern). It runs sandboxed, so it is bundled to one CommonJS file by
 * `scripts/build-preload.mjs` with only `electron` left external.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { IpcRendererEvent } from 'electron';
import { codedMessage, createBridge, RemoteError } from '../contract.js';
import type { EventName, RequestName, TallyBridge, Transport } from '../contract.js';
import { eventChannel, isIpcReply, READY_CHANNEL, requestChannel } from './ipc-protocol.js';

/** The part of `ipcRenderer` the transport uses (a fake in tests). */
export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  send(channel: string, ...args: unknown[]): void;
  on(channel: string, listener: (event: IpcRendererEvent, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: IpcRendererEvent, ...args: unknown[]) => void): unknown;
}

/**
 * The IPC transport under the bridge. Replies arrive as `{ ok, value | error }` envelopes and failures
 * are rebuilt as `RemoteError(code, message)`; listeners get the payload only, never the
 * `IpcRendererEvent` (it would hand the page `sender`, i.e. a way back into ipcRenderer).
 */
export function createIpcTransport(ipc: IpcRendererLike): Transport {
  let readySent = false;
  const signalReady = () => {
    if (readySent) return;
    readySent = true;
    // After a microtask, so every subscription the page makes in the same tick exists before main
    // flushes the events it held back.
    queueMicrotask(() => ipc.send(READY_CHANNEL));
  };

  return {
    async invoke(name: RequestName, args: readonly unknown[]): Promise<unknown> {
      let reply: unknown;
      try {
        reply = await ipc.invoke(requestChannel(name), ...args);
      } catch {
        // Only happens when main has no handler or the frame went away; Electron's message is noise.
        throw new RemoteError('ipc_failed', 'Tally could not reach its background process. Restart Tally.');
      }
      if (!isIpcReply(reply))
        throw new RemoteError('internal', 'Tally got an unexpected reply from its background process.');
      // The message carries the code too: contextBridge keeps nothing else (see codedMessage).
      if (!reply.ok) {
        const { code, message, params } = reply.error;
        throw new RemoteError(code, codedMessage(code, message, params), params);
      }
      return reply.result;
    },
    subscribe(event: EventName, listener: (payload: unknown) => void): () => void {
      const channel = eventChannel(event);
      const wrapper = (_event: IpcRendererEvent, payload: unknown) => listener(payload);
      ipc.on(channel, wrapper);
      signalReady();
      let subscribed = true;
      return () => {
        if (!subscribed) return;
        subscribed = false;
        ipc.removeListener(channel, wrapper);
      };
    },
  };
}

/**
 * Builds the bridge over IPC and exposes it as `window.tally`.
 *
 * Rejections reach the page as Errors carrying the message only: contextBridge rebuilds an Error in
 * the page from its message and drops every other property, `code` included
 * (https://github.com/electron/electron/issues/25596). The transport appends the code to the message
 * (codedMessage), and the popover splits it off again to react to it and to translate it.
 */
export function exposeTallyBridge(deps: {
  contextBridge: { exposeInMainWorld(key: string, api: unknown): void };
  ipcRenderer: IpcRendererLike;
}): TallyBridge {
  const bridge = createBridge(createIpcTransport(deps.ipcRenderer));
  deps.contextBridge.exposeInMainWorld('tally', bridge);
  return bridge;
}

exposeTallyBridge({ contextBridge, ipcRenderer });
