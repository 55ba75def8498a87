/**
 * What the main process does with an error nobody caught (GitHub Desktop's show-uncaught-exception, in small):
 * it is logged with its stack (redacted), and the app recovers or restarts.
 *
 * A rejected promise nobody awaited leaves the process sound: it is logged and the app carries on, with no
 * dialog (a modal over a tray app for a lost promise only alarms). An uncaught exception may have left any state
 * half-changed, so the app quits the graceful way (receiver closed, journal flushed, part files kept) and starts
 * again, the producer told once where the log is. Unless it is looping: each crash is recorded in the data folder
 * (core/crash-history.ts), and the CRASH_LOOP_COUNT-th crash within a minute does not relaunch; a dialog says so
 * and offers Copy diagnostics instead (VS Code and Signal stop relaunching the same way).
 */
import { CRASH_LOOP_COUNT } from '../core/crash-history.js';
import { describeError, type Log } from './log.js';

/** The words of the crash-loop dialog, in the producer's language (shell-text.ts). */
export interface CrashLoopText {
  title: string;
  message: string;
  detail: string;
  copy: string;
  quit: string;
}

export interface CrashHandlerOptions {
  /** The process whose 'uncaughtException' and 'unhandledRejection' are handled (`process` in the app). */
  process: { on(event: 'uncaughtException' | 'unhandledRejection', listener: (error: unknown) => void): unknown };
  log: Log;
  /** Shows a message to the producer (a dialog); called at most once per process. */
  show: (title: string, message: string) => void;
  /** Quits gracefully and starts the app again; called at most once. */
  restart: () => void;
  /** Where the log files are, named in the message. */
  logFolder: string;
  /**
   * Records this crash where the next process finds it and answers how many crashes, this one included, fall
   * within the crash-loop window. Without it every crash restarts.
   */
  recordCrash?: () => number;
  /** Crashes within the window that stop the relaunching (default CRASH_LOOP_COUNT). */
  loopCount?: number;
  /** The crash-loop dialog: resolves with the index of the button chosen (0: Copy diagnostics, 1: Quit). */
  askInLoop?: (text: CrashLoopText) => Promise<number>;
  /** The dialog's words for `count` crashes. */
  loopText?: (count: number) => CrashLoopText;
  /** Puts the diagnostics report on the clipboard (Copy diagnostics). */
  copyDiagnostics?: () => Promise<void>;
  /** Quits gracefully without starting again. */
  quit?: () => void;
}

export function installCrashHandlers(options: CrashHandlerOptions): void {
  let shown = false;
  let handled = false;
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
  const stopLooping = async (count: number) => {
    options.log(`crash loop: ${count} crashes within a minute; Tally does not restart itself`);
    const text = options.loopText?.(count) ?? {
      title: 'Tally keeps stopping',
      message: `Tally stopped unexpectedly ${count} times within a minute, so it does not start again on its own.`,
      detail: `The log is in ${options.logFolder}.`,
      copy: 'Copy diagnostics',
      quit: 'Quit',
    };
    try {
      const choice = (await options.askInLoop?.(text)) ?? 1;
      if (choice === 0) {
        await options.copyDiagnostics?.();
        options.log('crash loop: the diagnostics were copied');
      }
    } catch (error) {
      options.log(`crash loop: ${describeError(error)}`);
    }
    (options.quit ?? options.restart)();
  };
  options.process.on('uncaughtException', (error) => {
    options.log(`uncaught exception: ${describeError(error)}`);
    if (handled) return;
    handled = true;
    let count = 1;
    try {
      count = options.recordCrash?.() ?? 1;
    } catch (recordError) {
      options.log(`the crash could not be recorded: ${describeError(recordError)}`);
    }
    if (options.quit && count >= (options.loopCount ?? CRASH_LOOP_COUNT)) {
      void stopLooping(count);
      return;
    }
    showOnce('Tally restarts to be safe: your recordings and settings are kept.');
    options.restart();
  });
  options.process.on('unhandledRejection', (reason) => {
    // Logged only: the app is sound, and a dialog for every lost promise would only alarm.
    options.log(`unhandled promise rejection: ${describeError(reason)}`);
  });
}
