/**
 * How a core error crosses either transport to the page (split from contract.ts): a RemoteError with the
 * error's stable code and params, and for Electron IPC the same carried inside the message after invisible
 * marks. Re-exported by contract.ts; import it from there.
 */

/** Errors cross the transport as `{ code, message }`; this rebuilds an Error the UI can show. */
export class RemoteError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly params?: Record<string, string | number>,
  ) {
    super(message);
    this.name = 'RemoteError';
  }
}

/**
 * contextBridge hands the page an Error with its message only, dropping `code`
 * (https://github.com/electron/electron/issues/25596). The IPC transport therefore appends the code to the
 * message after an invisible separator, and the page reads both back with `errorCodeOf` / `errorMessageOf`,
 * so it can react to a code (and translate it) whichever transport it runs over.
 */
const CODE_MARK = '\u2063code:';
/** After the code: the error's params as JSON (see ErrorView.params). */
const PARAMS_MARK = '\u2063params:';

/** `message` with `code` (and `params`) appended after the invisible marks (see CODE_MARK). */
export function codedMessage(code: string, message: string, params?: Record<string, string | number>): string {
  return `${message}${CODE_MARK}${code}${params ? `${PARAMS_MARK}${JSON.stringify(params)}` : ''}`;
}

/** The params of anything a bridge call rejected with (a RemoteError's, or those after the mark), or null. */
export function errorParamsOf(error: unknown): Record<string, string | number> | null {
  if (typeof error !== 'object' || error === null) return null;
  const { params, message } = error as { params?: unknown; message?: unknown };
  const value = params ?? (typeof message === 'string' ? parsedParams(message) : null);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) out[k] = v;
  }
  return out;
}

function parsedParams(message: string): unknown {
  const at = message.lastIndexOf(PARAMS_MARK);
  if (at < 0) return null;
  try {
    return JSON.parse(message.slice(at + PARAMS_MARK.length));
  } catch {
    return null;
  }
}

/** The stable error code of anything a bridge call rejected with, or null. */
export function errorCodeOf(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && code) return code;
  if (typeof message !== 'string') return null;
  const at = message.lastIndexOf(CODE_MARK);
  if (at < 0) return null;
  const rest = message.slice(at + CODE_MARK.length);
  const end = rest.indexOf(PARAMS_MARK);
  return (end < 0 ? rest : rest.slice(0, end)) || null;
}

/** A rejection's message without the code mark. */
export function errorMessageOf(message: string): string {
  const at = message.lastIndexOf(CODE_MARK);
  return at < 0 ? message : message.slice(0, at);
}
