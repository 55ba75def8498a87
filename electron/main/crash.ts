/**
 * What the main process does with an error nobody caught (GitHub Desktop's show-uncaught-exception, in small):
 * it is logged with its stack (redacted), the producer is told once where the log is, and the app recovers or
 * restarts. A rejected promise nobody awaited leaves the process sound, so the app carries on; an uncaught
 * exception may have left any state half-changed, so the app quits the graceful way (receiver closed, journal
 * flushed, part files kept) and starts again.
 */
import { describeError, type Log } from './log.js';

export interface CrashHandlerOptions {
  /** The process whose 'uncaughtException' and 'unhandledRejection' are handled (`process` in the app). */
  process: { on(event: 'uncaughtException' | 'unhandledRejection', listener: (error: unknown) => void): unknown };
  log: Log;
  /** Shows a message to the producer (a dialog); called once per process, whatever the number of errors. */
  show: (title: string, message: string) => void;
  /** Quits gracefully and starts the app again; called at most once. */
  restart: () => void;
  /** Where the log files are, named in the message. */
  logFolder: string;
}

export function installCrashHandlers(options: CrashHandlerOptions): void {
  let shown = false;
  let restarting = false;
  const showOnce = (message: string) => {
    if (shown) return;
    shown = true;
    try {
      options.show(
        'Tally ran into an unexpected error',
        `${message} The details are in the log (${options.logFolder}); Settings → Advanced → Copy diagnostics gathers them for a bug report.`,
      );
    } catch (error) {
      options.log(`could not show the error: ${describeError(error)}`);
    }
  };
  options.process.on('uncaughtException', (error) => {
    options.log(`uncaught exception: ${describeError(error)}`);
    showOnce('Tally restarts to be safe: your recordings and settings are kept.');
    if (restarting) return;
    restarting = true;
    options.restart();
  });
  options.process.on('unhandledRejection', (reason) => {
    options.log(`unhandled promise rejection: ${describeError(reason)}`);
    showOnce('Tally carries on.');
  });
}
