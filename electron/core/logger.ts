/**
 * The one logging seam of the core. Core code never writes to the console itself: the app passes its log
 * file, the CLI its stderr, tests a collecting twin, so a failure that is handled is still seen somewhere.
 */
export interface Logger {
  /** Something went wrong but was handled; the line says what and what happens instead. */
  warn(line: string): void;
}

/** For callers that have nowhere to write (and tests that do not look). */
export const silentLogger: Logger = Object.freeze({ warn: () => {} });

/** A Logger over a plain line sink, the shape the app core and the CLI already have. */
export function lineLogger(write: (line: string) => void): Logger {
  return { warn: (line) => write(line) };
}

/** The message of anything thrown, without its stack, for one log line. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
