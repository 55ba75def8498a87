/**
 * The wire protocol between the preload and `electron/main/ipc.ts`: channel names and the reply
 * envelope. Plain data only, so both the sandboxed preload bundle and the main process can import it.
 *
 * Handlers reply with an envelope instead of throwing because Electron rewrites errors thrown from
 * `ipcMain.handle` into "Error invoking remote method ..." strings and drops every property but the
 * message; the envelope keeps the stable `code` (and has the same shape as the WebSocket transport's,
 * `core/app/dispatch.ts`).
 */
import type { ErrorView, EventName, RequestName } from '../contract.js';

/** Prefix of every request channel: `tally:channels:live`. */
export const REQUEST_PREFIX = 'tally:';
/** Prefix of every push-event channel: `tally:event:recordings:changed`. */
export const EVENT_PREFIX = 'tally:event:';
/** Sent once by the preload when the page has subscribed, so main can flush the events it queued. */
export const READY_CHANNEL = 'tally:ready';

/** The IPC channel that carries one request. */
export function requestChannel(name: RequestName): string {
  return REQUEST_PREFIX + name;
}

/** The IPC channel that carries one push event. */
export function eventChannel(name: EventName): string {
  return EVENT_PREFIX + name;
}

/** What every request handler replies with. */
export type IpcReply<T = unknown> = { ok: true; result: T } | { ok: false; error: ErrorView };

/** Structural check for a reply coming back over IPC (the preload trusts main, but not blindly). */
export function isIpcReply(value: unknown): value is IpcReply {
  if (typeof value !== 'object' || value === null) return false;
  const reply = value as { ok?: unknown; error?: unknown };
  if (reply.ok === true) return 'result' in reply;
  if (reply.ok !== false || typeof reply.error !== 'object' || reply.error === null) return false;
  const error = reply.error as { code?: unknown; message?: unknown };
  return typeof error.code === 'string' && typeof error.message === 'string';
}
