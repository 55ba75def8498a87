/**
 * The one logging seam of the core. Core code never writes to the console itself: the app passes its log
 * file, the CLI its stderr, tests a collecting twin, so a failure that is handled is still seen somewhere.
 *
 * Levelled and scoped, as VS Code's ILogService and pino's child loggers are: `debug` for what helps only
 * while chasing a bug (off unless asked: `--debug`, `--log-level`, the logLevel setting), `info` for the
 * event trail a producer can send (started, webhook received, download attempt, saved, health changed,
 * stopped and why), `warn` for what went wrong but was handled, `error` for what was lost or stopped.
 * `child('downloads')` names where its lines come from (`[receive/downloads]` in the file).
 */
export interface Logger {
  /** Detail for chasing a bug; written only at the debug level. */
  debug(line: string): void;
  /** One event of the trail (what happened, to what, with what outcome). */
  info(line: string): void;
  /** Something went wrong but was handled; the line says what and what happens instead. */
  warn(line: string): void;
  /** Something was lost or stopped; the line says what and why. */
  error(line: string): void;
  /** The same log, its lines scoped under `scope` (nested scopes join with `/`). */
  child(scope: string): Logger;
}

/** The levels a log can be set to, quietest last. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Whether `value` names a log level. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

const nothing = () => {};

/** For callers that have nowhere to write (and tests that do not look). */
export const silentLogger: Logger = Object.freeze({
  debug: nothing,
  info: nothing,
  warn: nothing,
  error: nothing,
  child: () => silentLogger,
});

/**
 * A Logger over a plain line sink, the shape the app core and the CLI's short commands have: warnings and
 * errors reach it, the trail (info, debug) does not (a terminal already shows what the command prints).
 */
export function lineLogger(write: (line: string) => void): Logger {
  const logger: Logger = {
    debug: nothing,
    info: nothing,
    warn: (line) => write(line),
    error: (line) => write(line),
    child: () => logger,
  };
  return logger;
}

/** A Logger that writes every level to `write(level, scope, line)`: collecting twins in tests, adapters. */
export function sinkLogger(write: (level: LogLevel, scope: string | null, line: string) => void): Logger {
  const make = (scope: string | null): Logger => ({
    debug: (line) => write('debug', scope, line),
    info: (line) => write('info', scope, line),
    warn: (line) => write('warn', scope, line),
    error: (line) => write('error', scope, line),
    child: (name) => make(scope ? `${scope}/${name}` : name),
  });
  return make(null);
}

/** The message of anything thrown, without its stack, for one log line. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
