/**
 * What the service answers, made safe to use: the response schemas that turn its JSON into `Channel`s
 * (liberal where harmless, strict where a wrong guess would show wrong data), and the inspection of error
 * bodies, which are summarised for messages with the secret masked and HTML reduced to its text.
 */
import { z } from 'zod';
import { ResponseShapeError } from './errors.js';
import type { Channel, SearchResult } from './model.js';
import { parseUnknown } from './validate.js';

/** The service's channel endpoints (paths below the signalling and console hosts). */
export const PATHS = {
  live: '/lambda/broadcast-channel-list',
  search: '/v1/search',
  end: '/lambda/channel-force-termination',
} as const;

/** Latest epoch second a Date can represent. */
const MAX_EPOCH_SECONDS = 8.64e12;

// ---------------------------------------------------------------------------------------------------------
// Response schemas. Liberal where it is harmless (numeric strings, extra fields, `chid` or `id`), strict
// where a wrong guess would show wrong data (dates must parse, counts must be whole numbers).

const numericString = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?$/, 'expected a number')
  .transform(Number);

const epochSeconds = z
  .union([z.number(), numericString])
  .pipe(z.number().finite().min(0).max(MAX_EPOCH_SECONDS, 'is not a plausible Unix time in seconds'));

const count = z
  .union([z.number(), numericString])
  .pipe(z.number().int('expected a whole number').min(0))
  .nullable()
  .optional()
  .transform((value) => value ?? null);

const ISO_TIME_RE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

const isoTime = z
  .string()
  .trim()
  .regex(ISO_TIME_RE, 'expected an ISO 8601 time')
  .transform((value, ctx) => {
    // The service documents UTC; a missing zone is read as UTC, not as this machine's local time.
    const withZone = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value) ? value : `${value}Z`;
    const date = new Date(withZone.replace(' ', 'T'));
    if (Number.isNaN(date.getTime()) || !isRealCalendarDay(value)) {
      ctx.addIssue({ code: 'custom', message: 'is not a real date' });
      return z.NEVER;
    }
    return date;
  });

/** Date parsing rolls 31 February over into March; a producer should see an error instead. */
function isRealCalendarDay(iso: string): boolean {
  const [year, month, day] = iso.slice(0, 10).split('-').map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const channelId = z.string().min(1, 'channel ID is empty');

const LiveItemSchema = z
  .object({
    id: channelId.optional(),
    chid: channelId.optional(),
    serviceId: z.string().nullable().optional(),
    createTime: isoTime,
    numOfWatchers: count,
  })
  .superRefine((item, ctx) => {
    if (item.id === undefined && item.chid === undefined) {
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'channel ID is missing' });
    }
  });

/** JSON `null` is read as "nothing live": the empty case is undocumented and null says nothing else. */
const LiveListSchema = z.array(LiveItemSchema).nullable();

const SearchItemSchema = z
  .object({
    chid: channelId.optional(),
    id: channelId.optional(),
    createTime: epochSeconds,
    endTime: epochSeconds.nullable().optional(),
    peerCount: count,
  })
  .superRefine((item, ctx) => {
    if (item.chid === undefined && item.id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['chid'], message: 'channel ID is missing' });
    }
  });

const SearchSchema = z.object({
  startTime: epochSeconds.optional(),
  currentTime: epochSeconds.optional(),
  totalCount: z.union([z.number(), numericString]).pipe(z.number().int().min(0)).optional(),
  items: z.array(SearchItemSchema),
});

export const EndSchema = z.object({
  send: z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]),
});

/** Live list item → Channel. Exported for tests and for the sandbox's own checks. */
export function parseLiveList(data: unknown, endpoint: string = PATHS.live): Channel[] {
  const items = parseUnknown(LiveListSchema, data, shapeError(endpoint)) ?? [];
  return items.map((item) => ({
    id: (item.id ?? item.chid) as string,
    serviceId: item.serviceId ?? null,
    state: 'live' as const,
    createdAt: item.createTime,
    endedAt: null,
    watchers: item.numOfWatchers,
    cumulativeSessions: null,
  }));
}

/** Search answer → SearchResult (one request's worth; `ChannelApi.search` merges several). */
export function parseSearch(
  data: unknown,
  fallback: { startTime: Date; now: Date },
  endpoint: string = PATHS.search,
): SearchResult {
  const body = parseUnknown(SearchSchema, data, shapeError(endpoint));
  const channels = body.items.map((item): Channel => {
    // An end time of 0 or none means the channel has not ended yet (search can see live channels too).
    const ended = item.endTime !== undefined && item.endTime !== null && item.endTime > 0;
    return {
      id: (item.chid ?? item.id) as string,
      serviceId: null,
      state: ended ? 'ended' : 'live',
      createdAt: fromEpochSeconds(item.createTime),
      endedAt: ended ? fromEpochSeconds(item.endTime as number) : null,
      watchers: null,
      cumulativeSessions: item.peerCount,
    };
  });
  return {
    startTime: body.startTime === undefined ? fallback.startTime : fromEpochSeconds(body.startTime),
    currentTime: body.currentTime === undefined ? fallback.now : fromEpochSeconds(body.currentTime),
    totalCount: body.totalCount ?? channels.length,
    channels,
  };
}

function fromEpochSeconds(seconds: number): Date {
  return new Date(Math.round(seconds * 1000));
}

export function shapeError(endpoint: string) {
  return (paths: string[], detail: string) => new ResponseShapeError(endpoint, paths, detail);
}

// ---------------------------------------------------------------------------------------------------------
// Body inspection

const UNAUTHORIZED_RE =
  /unauthori[sz]ed|forbidden|invalid[ _-]?(secret|service[ _-]?id|credential|key|token|auth)|(wrong|bad|incorrect)[ _-]?(secret|credential|service[ _-]?id)|authenticat(ion|e)[ _-]?(failed|error|required)|not[ _-]?authori[sz]ed|access[ _-]?denied/i;
const NOT_FOUND_RE = /not[ _-]?found|no[ _-]such[ _-]channel|unknown[ _-]channel|does[ _-]not[ _-]exist|not[ _-]exist/i;

/** The short strings of a JSON error body (`error`, `message`, `reason`...), top level and one level down. */
function messageStrings(body: unknown): string[] {
  if (typeof body === 'string') return [body];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value === 'string' && /error|message|msg|reason|result|status|detail|code/i.test(key)) {
      out.push(value.slice(0, 500));
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value) && /error/i.test(key)) {
      out.push(...messageStrings(value));
    }
  }
  return out;
}

export function saysUnauthorized(body: unknown): boolean {
  return messageStrings(body).some((s) => UNAUTHORIZED_RE.test(s));
}

export function saysNotFound(body: unknown): boolean {
  return messageStrings(body).some((s) => NOT_FOUND_RE.test(s));
}

export function looksLikeHtml(text: string, contentType: string): boolean {
  return /\bhtml\b/i.test(contentType) || /^\s*<(!doctype|html|head|body|title|h\d)\b/i.test(text);
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function htmlText(fragment: string): string {
  return fragment
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (whole, name: string) => {
      if (name.startsWith('#x') || name.startsWith('#X')) return safeChar(parseInt(name.slice(2), 16));
      if (name.startsWith('#')) return safeChar(Number(name.slice(1)));
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

function safeChar(code: number): string {
  return Number.isInteger(code) && code > 31 && code < 0x110000 ? String.fromCodePoint(code) : ' ';
}

/**
 * A short, single-line, markup-free summary of a response body for error messages: an HTML page
 * becomes its title or first heading; anything else its first ~200 characters. Occurrences of the
 * secret are masked in case a server echoes the request.
 */
export function summarizeBody(text: string, contentType = '', secret?: string): string {
  const masked = maskSecret(text, secret);
  if (!masked.trim()) return '';
  if (looksLikeHtml(masked, contentType)) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(masked)?.[1];
    const heading = /<h[1-6][^>]*>([\s\S]*?)<\/h[1-6]>/i.exec(masked)?.[1];
    const summary = htmlText(title ?? '') || htmlText(heading ?? '');
    return summary ? `HTML page "${clip(summary, 120)}"` : 'an HTML page';
  }
  return clip(masked.replace(CONTROL_CHARS, ' ').replace(/\s+/g, ' ').trim(), 200);
}

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]+/g;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function maskSecret(text: string, secret?: string): string {
  if (!secret) return text;
  let out = text;
  const variants = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]);
  for (const v of variants) if (v) out = out.split(v).join('***');
  return out;
}
