/**
 * Logging helpers for the main process. Errors from libraries can echo request bodies or headers, so
 * everything that is logged passes through `redactSecrets` first.
 */

/** A line logger; `console.error` in the app, a collecting fake in tests. */
export type Log = (line: string) => void;

/** Hides anything that looks like a secret or token in text that is about to be logged. */
export function redactSecrets(text: string): string {
  return text
    .replace(/("(?:secret|token|password|authorization|authtoken)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi, '$1"[redacted]"')
    .replace(/\b(secret|token|password|authtoken)=([^&\s"']+)/gi, '$1=[redacted]')
    .replace(/\b(secret|authorization)(\s*:\s*)(?:bearer\s+)?[^\s,;"']+/gi, '$1$2[redacted]')
    .replace(/\bbearer\s+[A-Za-z0-9._~+/-]+=*/gi, 'Bearer [redacted]');
}

/** An error as one redacted log entry (with its stack, which is for the log only, never the page). */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  return redactSecrets(text);
}
