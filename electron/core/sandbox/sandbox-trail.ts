/**
 * The sandbox's own event trail, for the log of whoever runs it (`tally sandbox`, `tally listen --sandbox`):
 * broadcasts starting and ending, recordings published and expired, and every webhook it sent with the
 * receiver's answer. The same events `tally sandbox` prints, written where a producer's report can quote them.
 */
import type { Logger } from '../logger.js';
import type { Sandbox } from './types.js';

/** Writes the sandbox's events to `log`; returns the function that stops. */
export function traceSandbox(sandbox: Pick<Sandbox, 'control'>, log: Logger): () => void {
  const { events } = sandbox.control;
  const listeners: [string, (...args: never[]) => void][] = [
    [
      'broadcast:start',
      (b: { id: string; record: boolean }) =>
        log.info(`broadcast ${JSON.stringify(b.id)} live${b.record ? ' (recorded)' : ''}`),
    ],
    ['broadcast:end', (b: { id: string }) => log.info(`broadcast ${JSON.stringify(b.id)} ended`)],
    [
      'recording',
      (r: { channelId: string; size: number }) =>
        log.info(`recording of ${JSON.stringify(r.channelId)} published (${r.size} bytes)`),
    ],
    [
      'recording:expired',
      (r: { channelId: string }) => log.info(`recording of ${JSON.stringify(r.channelId)} expired (deleted)`),
    ],
    [
      'webhook',
      (d: { channelId: string; shape: string; status: number | null; error: string | null }) =>
        (d.status !== null && d.status < 300 ? log.info : log.warn)(
          `sent the ${d.shape} webhook of ${JSON.stringify(d.channelId)}: ${d.status ?? d.error}`,
        ),
    ],
  ];
  for (const [event, listener] of listeners) events.on(event, listener as never);
  return () => {
    for (const [event, listener] of listeners) events.off(event, listener as never);
  };
}
