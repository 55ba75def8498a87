/**
 * The one place a request from a renderer becomes a call into the core, for both transports (Electron
 * IPC and the WebSocket of `tally serve`): unknown names and bad arguments are refused with a precise
 * validation error, and every failure leaves as a `{ code, message }` envelope with no stack, no cause
 * chain and no request options (which is where a secret could hide).
 */
import {
  REQUEST_NAMES,
  requestSchemas,
  type ErrorView,
  type RequestHandlers,
  type RequestName,
} from '../../contract.js';
import { TallyError } from '../errors.js';
import { describeIssues } from '../validate.js';

export type Envelope = { ok: true; result: unknown } | { ok: false; error: ErrorView };

const KNOWN = new Set<string>(REQUEST_NAMES);

export function isRequestName(name: unknown): name is RequestName {
  return typeof name === 'string' && KNOWN.has(name);
}

/** How a transport wants unexpected failures reported. */
export interface DispatchOptions {
  /** Where an unexpected error goes; the envelope itself carries only a generic message. */
  log?: (line: string) => void;
  /**
   * One log line for an unexpected error. Default: its message. The Electron shell passes its redacting
   * describer, which keeps the stack for the log file (secrets removed) and never for the page.
   */
  describe?: (error: unknown) => string;
}

/** Maps any thrown value to the envelope the renderer sees. Unknown errors get a generic message. */
export function errorEnvelope(error: unknown, options: DispatchOptions = {}, context = 'a request'): Envelope {
  if (error instanceof TallyError) {
    const { params } = error;
    return { ok: false, error: { code: error.code, message: error.message, ...(params ? { params } : {}) } };
  }
  const detail = options.describe ? options.describe(error) : error instanceof Error ? error.message : String(error);
  options.log?.(`${context} failed: ${detail}`);
  return {
    ok: false,
    error: { code: 'internal', message: 'Something went wrong in Tally. The details are in the log.' },
  };
}

/**
 * Validates `args` for `name` and runs the handler. Never throws. The one dispatcher of both transports: the
 * Electron shell calls it after its trusted-sender check, `tally serve` after its token check.
 */
export async function dispatchRequest(
  handlers: RequestHandlers,
  name: unknown,
  args: unknown,
  options: DispatchOptions | ((line: string) => void) = {},
): Promise<Envelope> {
  const opts = typeof options === 'function' ? { log: options } : options;
  if (!isRequestName(name)) {
    return { ok: false, error: { code: 'invalid_input', message: `Unknown request "${String(name).slice(0, 64)}".` } };
  }
  const parsed = requestSchemas[name].safeParse(Array.isArray(args) ? args : []);
  if (!Array.isArray(args) || !parsed.success) {
    const detail = parsed.success ? 'arguments must be an array' : describeIssues(parsed.error.issues).detail;
    return { ok: false, error: { code: 'invalid_input', message: `Invalid arguments for ${name}: ${detail}` } };
  }
  try {
    const handler = handlers[name] as (...a: unknown[]) => Promise<unknown>;
    return { ok: true, result: await handler(...(parsed.data as unknown[])) };
  } catch (error) {
    return errorEnvelope(error, opts, name);
  }
}
