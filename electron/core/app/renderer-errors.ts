/**
 * Errors the popover's page did not catch, forwarded over the contract (`app:rendererError`, by IPC from the tray
 * app's window after ipc.ts's sender check, or by `tally serve`'s WebSocket after its token check) into the event
 * trail. The page is not trusted to be quiet: a render loop that throws every frame writes at most BURST lines a
 * minute, and the next line says how many were left out.
 */
import type { RendererErrorReport } from '../../contract.js';
import type { Logger } from '../logger.js';
import { systemClock } from '../time.js';
import { counted } from '../counted.js';

/** Lines written per minute at most. */
const BURST = 20;
const WINDOW_MS = 60_000;

export class RendererErrors {
  readonly #log: Logger;
  readonly #now: () => number;
  #windowStart = -Infinity;
  #written = 0;
  #dropped = 0;

  /** `now`: a monotonic clock in ms (time.ts's `systemClock.now` by default). */
  constructor(log: Logger, now: () => number = systemClock.now) {
    this.#log = log;
    this.#now = now;
  }

  /** Logs one report; false when it was left out (too many this minute). */
  report(report: RendererErrorReport): boolean {
    const now = this.#now();
    if (now - this.#windowStart >= WINDOW_MS) {
      if (this.#dropped > 0)
        this.#log.warn(`${counted(this.#dropped, 'more error', 'more errors')} of the page were left out`);
      this.#windowStart = now;
      this.#written = 0;
      this.#dropped = 0;
    }
    if (this.#written >= BURST) {
      this.#dropped += 1;
      return false;
    }
    this.#written += 1;
    const where = report.source ? ` at ${report.source}` : '';
    const what = report.kind === 'unhandledrejection' ? 'unhandled rejection' : 'uncaught error';
    this.#log.error(`${what} in the page${where}: ${report.message}`);
    if (report.stack) this.#log.debug(report.stack);
    return true;
  }
}
