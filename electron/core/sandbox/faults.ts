/**
 * Fault injection: one FaultSpec per server, consumed request by request. The canned bodies imitate what a
 * client really meets in front of a service: nginx/CDN HTML error pages, empty bodies, S3 XML errors.
 */
import { z } from 'zod';
import { parseUnknown } from '../validate.js';
import type { FaultSpec, SandboxTarget } from './types.js';

const nonNegativeInt = z.number().int().nonnegative();

/** Validates a FaultSpec coming from a caller or the control API (unknown keys are refused). */
export const faultSpecSchema = z
  .object({
    delayMs: nonNegativeInt.max(600_000).optional(),
    status: z.number().int().min(100).max(599).optional(),
    html: z.boolean().optional(),
    emptyBody: z.boolean().optional(),
    resetAfterBytes: nonNegativeInt.optional(),
    wrongContentLength: z.boolean().optional(),
    rateBytesPerSec: z.number().int().positive().optional(),
    noRange: z.boolean().optional(),
    times: z.number().int().positive().optional(),
    path: z.string().startsWith('/').optional(),
    redirectTo: z.url().max(2048).optional(),
  })
  .strict();

/** Parses an unknown value into a FaultSpec, or null for "no faults". Throws ValidationError. */
export function parseFaultSpec(value: unknown): FaultSpec | null {
  if (value === null || value === undefined) return null;
  return parseUnknown(faultSpecSchema, value);
}

/** True when the fault replaces the real answer instead of only disturbing its delivery. */
export function replacesAnswer(spec: FaultSpec): boolean {
  return spec.status !== undefined || spec.html === true || spec.emptyBody === true || spec.redirectTo !== undefined;
}

/** The active fault of one server. */
export class FaultSlot {
  private spec: FaultSpec | null = null;
  private remaining = Infinity;

  constructor(readonly target: SandboxTarget) {}

  set(spec: FaultSpec | null): void {
    this.spec = spec && Object.keys(spec).length > 0 ? { ...spec } : null;
    this.remaining = spec?.times ?? Infinity;
  }

  get(): FaultSpec | null {
    if (!this.spec) return null;
    return this.remaining === Infinity ? { ...this.spec } : { ...this.spec, times: this.remaining };
  }

  /** The fault for a request to `path`, counting it against `times` (and clearing when used up). */
  take(path: string): FaultSpec | null {
    const spec = this.spec;
    if (!spec) return null;
    if (spec.path !== undefined && !path.startsWith(spec.path)) return null;
    this.remaining -= 1;
    if (this.remaining <= 0) this.set(null);
    return spec;
  }
}

const REASONS: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Temporarily Unavailable',
  504: 'Gateway Time-out',
};

/** Reason phrase for a status, falling back to a generic one. */
export function reasonPhrase(status: number): string {
  return REASONS[status] ?? (status >= 500 ? 'Server Error' : status >= 400 ? 'Client Error' : 'OK');
}

/** An error page the way a reverse proxy in front of the service would render it. */
export function htmlErrorPage(status: number): string {
  const title = status === 200 ? 'Sign in to continue' : `${status} ${reasonPhrase(status)}`;
  return (
    `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n` +
    `<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`
  );
}
