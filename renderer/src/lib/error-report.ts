/**
 * Forwards what the page did not catch (window 'error', 'unhandledrejection') to the core's event trail over the
 * contract (`app:rendererError`), so a producer's log says the popover broke and where. The page carries on; a
 * report that cannot be sent is dropped, never reported again (that would loop).
 */
import type { RendererErrorReport, TallyBridge } from '../../../electron/contract.js';

const clip = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text);

/** The report of one error event, bounded as the contract wants it. */
export function errorReport(
  kind: RendererErrorReport['kind'],
  error: unknown,
  source: string | null,
): RendererErrorReport {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const stack = error instanceof Error && typeof error.stack === 'string' ? clip(error.stack, 8000) : null;
  return { kind, message: clip(message, 2000), stack, source: source === null ? null : clip(source, 500) };
}

/** Starts forwarding; returns the function that stops. */
export function forwardPageErrors(win: Pick<Window, 'addEventListener' | 'removeEventListener'>, bridge: TallyBridge) {
  const send = (report: RendererErrorReport) => void bridge.app.rendererError(report).catch(() => undefined);
  const onError = (e: ErrorEvent) =>
    send(errorReport('error', e.error ?? e.message, e.filename ? `${e.filename}:${e.lineno}:${e.colno}` : null));
  const onRejection = (e: PromiseRejectionEvent) => send(errorReport('unhandledrejection', e.reason, null));
  win.addEventListener('error', onError);
  win.addEventListener('unhandledrejection', onRejection);
  return () => {
    win.removeEventListener('error', onError);
    win.removeEventListener('unhandledrejection', onRejection);
  };
}
