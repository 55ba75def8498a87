/**
 * Logging helpers for the main process. Errors from libraries can echo request bodies or headers, so
 * everything that is logged passes through `redactSecrets` first (core/redact.ts; the log file redacts again).
 */
import { redactSecrets } from '../core/redact.js';

export { redactSecrets };

/** A line logger; `console.error` in the app, a collecting fake in tests. */
export type Log = (line: string) => void;

/** An error as one redacted log entry (with its stack, which is for the log only, never the page). */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  return redactSecrets(text);
}
