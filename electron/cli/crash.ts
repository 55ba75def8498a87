/**
 * What `tally` does with an error nobody caught (bin/tally.js installs this): it is logged with its stack
 * (in the command's log file when one is open, redacted there; on stderr in one line), said once, and then
 * the command recovers or stops the graceful way. A rejected promise nobody awaited leaves the process sound:
 * `listen` keeps receiving. An uncaught exception may have left any state half-changed: the command is asked
 * to stop as on Ctrl+C (receiver closed, journal flushed, part files kept) and exits 70 (EX_SOFTWARE), so a
 * service manager starts it again; if stopping hangs, the process exits after `forceExitMs`.
 */
import { describeError } from '../core/logger.js';
import { currentCommandLog } from './command-log.js';

export interface CliCrashOptions {
  process: {
    on(event: 'uncaughtException' | 'unhandledRejection', listener: (error: unknown) => void): unknown;
    exitCode?: number | string | null | undefined;
    exit(code: number): never;
  };
  stderr: NodeJS.WritableStream;
  /** Asks the running command to stop gracefully (the same as the first Ctrl+C). */
  stop: () => void;
  forceExitMs?: number;
}

export const EXIT_SOFTWARE = 70;

export function installCliCrashHandlers(options: CliCrashOptions): void {
  let said = false;
  let stopping = false;
  const report = (kind: string, error: unknown, then: string) => {
    const stack = error instanceof Error ? (error.stack ?? String(error)) : String(error);
    const log = currentCommandLog();
    log?.fileOnly.error(`${kind}: ${stack}`);
    if (said) return;
    said = true;
    const where = log ? ` The details are in ${log.folder}.` : '';
    options.stderr.write(`tally: ${kind}: ${describeError(error)}. ${then}${where}\n`);
  };
  options.process.on('unhandledRejection', (reason) => report('unexpected error', reason, 'Carrying on.'));
  options.process.on('uncaughtException', (error) => {
    report('unexpected error', error, 'Stopping to be safe (exit code 70): recordings and part files are kept.');
    if (stopping) return;
    stopping = true;
    options.process.exitCode = EXIT_SOFTWARE;
    options.stop();
    setTimeout(() => options.process.exit(EXIT_SOFTWARE), options.forceExitMs ?? 10_000).unref();
  });
}
