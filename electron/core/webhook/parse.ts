/**
 * Turns one recording-complete webhook, in any of the shapes the service has documented, into a NewRecording.
 * The request is hostile text: nothing here trusts a type, a length or a key name, and nothing recurses into
 * the body (only the top level, one wrapping object and its `payload` are looked at).
 *
 * Shapes (`shape` in the result):
 * - 'json': flat JSON body `{"id","url","filesize","duration","thumbnail"}` (current docs);
 * - 'get':  fields in the query string (older docs: `GET ?chid=&url=`), also a POST whose body has no URL;
 * - 'form': flat URL-encoded body;
 * - 'spec': the spec's structure, JSON or URL-encoded: a wrapping object and/or `payload.url`.
 * URL-encoded bodies may nest with `a[b][c]` or `a.b.c` keys, or carry a JSON object as a field value.
 */
import { z } from 'zod';
import type { NewRecording } from '../recordings/types.js';

export type WebhookShape = 'json' | 'get' | 'form' | 'spec';

/** The parts of an HTTP request the parser needs (the receiver has already capped the body). */
export interface WebhookRequestParts {
  method: string;
  query: URLSearchParams;
  contentType: string | undefined;
  body: Buffer;
}

/** A webhook understood well enough to queue a download. `warnings` lists fields that were ignored. */
export interface ParsedWebhook extends NewRecording {
  shape: WebhookShape;
  warnings: string[];
}

/** The webhook cannot be used; `status` is the HTTP answer, `reason` a short text safe to send back. */
export class WebhookRejection extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'WebhookRejection';
  }
}

/** The docs ask for 4 to 1024 characters; longer IDs fall back to the file name rather than losing the recording. */
// Real channel IDs are a few dozen characters and presigned S3 URLs under 2,000; the caps leave room and keep
// one journal line, one log line and one job in memory small whatever a flood of forged webhooks sends.
export const MAX_CHANNEL_ID_LENGTH = 256;
export const MAX_WEBHOOK_URL_LENGTH = 4096;
const MAX_DURATION_LENGTH = 64;
const MAX_THUMBNAIL_LENGTH = 4096;
/** URL-encoded keys nest at most this deep: `wrapper[payload][url]`. */
const MAX_FORM_DEPTH = 3;

const CHANNEL_KEYS = ['id', 'chid', 'channelId', 'channel'] as const;
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const byteCount = z.union([
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  z
    .string()
    .trim()
    .regex(/^\d{1,16}$/)
    .transform(Number)
    .pipe(z.number().max(Number.MAX_SAFE_INTEGER)),
]);
const durationText = z.union([
  z.string().trim().min(1).max(MAX_DURATION_LENGTH),
  z.number().nonnegative().finite().transform(String),
]);
const thumbnailText = z.string().trim().min(1).max(MAX_THUMBNAIL_LENGTH);

type Bag = Record<string, unknown>;

interface Found {
  url: string;
  channel: string | undefined;
  viaPayload: boolean;
  extras: Bag;
}

/**
 * Parses a webhook request.
 * @throws WebhookRejection (400 bad JSON / no URL / not an object, 405 method, 415 content type).
 */
export function parseWebhook(req: WebhookRequestParts): ParsedWebhook {
  const method = req.method.toUpperCase();
  if (method !== 'GET' && method !== 'POST') throw new WebhookRejection(405, 'method not allowed');

  const sources: { bag: Bag; kind: 'json' | 'form' | 'get' }[] = [];
  if (method === 'POST' && req.body.length > 0) sources.push(readBody(req.contentType, req.body));
  if ([...req.query.keys()].length > 0) sources.push({ bag: formToBag(req.query), kind: 'get' });

  for (const { bag, kind } of sources) {
    const located = locate(bag);
    if (!located) continue;
    const { found, wrapped } = located;
    const shape: WebhookShape = kind === 'get' ? 'get' : wrapped || found.viaPayload ? 'spec' : kind;
    return build(found, shape);
  }
  throw new WebhookRejection(400, 'the webhook has no recording URL (expected url or payload.url)');
}

function readBody(contentType: string | undefined, body: Buffer): { bag: Bag; kind: 'json' | 'form' } {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let kind: 'json' | 'form';
  if (type === 'application/json' || type.endsWith('+json')) kind = 'json';
  else if (type === 'application/x-www-form-urlencoded') kind = 'form';
  else if (type === '' || type === 'text/plain' || type === 'application/octet-stream') {
    // Senders that forget the header still get parsed: JSON always starts with a bracket.
    kind = /^\s*[[{]/.test(text) ? 'json' : 'form';
  } else {
    throw new WebhookRejection(415, `content type ${type.slice(0, 64)} is not supported (send JSON or URL-encoded)`);
  }
  if (kind === 'form') return { bag: formToBag(new URLSearchParams(text)), kind };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new WebhookRejection(400, 'the body is not valid JSON');
  }
  if (!isBag(value)) throw new WebhookRejection(400, 'the JSON body is not an object');
  return { bag: value, kind };
}

/** Looks at the top level, then at each object-valued field (the spec's one wrapping object). */
function locate(bag: Bag): { found: Found; wrapped: boolean } | null {
  const direct = fieldsOf(bag);
  if (direct) return { found: direct, wrapped: false };
  const inner: Found[] = [];
  for (const key of Object.keys(bag)) {
    const value = bag[key];
    if (!isBag(value)) continue;
    const found = fieldsOf(value);
    if (found) inner.push(found);
  }
  const first = inner[0];
  if (!first) return null;
  if (inner.some((f) => f.url !== first.url)) {
    throw new WebhookRejection(400, 'the webhook holds more than one recording URL');
  }
  return { found: first, wrapped: true };
}

function fieldsOf(bag: Bag): Found | null {
  const payload = own(bag, 'payload');
  const inPayload = isBag(payload) ? payload : null;
  const topUrl = nonEmptyString(own(bag, 'url'));
  const payloadUrl = inPayload ? nonEmptyString(own(inPayload, 'url')) : undefined;
  const url = topUrl ?? payloadUrl;
  if (url === undefined) return null;
  const channel = channelOf(bag) ?? (inPayload ? channelOf(inPayload) : undefined);
  const extras: Bag = Object.create(null) as Bag;
  for (const name of ['filesize', 'duration', 'thumbnail']) {
    const value = own(bag, name) ?? (inPayload ? own(inPayload, name) : undefined);
    if (value !== undefined) extras[name] = value;
  }
  return { url, channel, viaPayload: topUrl === undefined, extras };
}

function channelOf(bag: Bag): string | undefined {
  for (const key of CHANNEL_KEYS) {
    const value = own(bag, key);
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    const text = nonEmptyString(value);
    if (text !== undefined) return text;
  }
  return undefined;
}

function build(found: Found, shape: WebhookShape): ParsedWebhook {
  const warnings: string[] = [];
  if (found.url.length > MAX_WEBHOOK_URL_LENGTH) {
    throw new WebhookRejection(400, `the recording URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  }
  let parsed: URL;
  try {
    parsed = new URL(found.url);
  } catch {
    throw new WebhookRejection(400, 'the recording URL is not a valid absolute URL');
  }
  let channelId = found.channel;
  if (channelId !== undefined && channelId.length > MAX_CHANNEL_ID_LENGTH) {
    warnings.push(`channel ID longer than ${MAX_CHANNEL_ID_LENGTH} characters ignored; using the file name`);
    channelId = undefined;
  }
  channelId ??= channelFromUrl(parsed);
  if (channelId === undefined) {
    throw new WebhookRejection(400, 'the webhook has no channel ID and the URL has no file name to take it from');
  }

  const announcedBytes = optional(byteCount, found.extras.filesize, 'filesize', 'not a byte count', warnings);
  const duration = optional(durationText, found.extras.duration, 'duration', 'not a short text', warnings);
  const thumbnail = optional(thumbnailText, found.extras.thumbnail, 'thumbnail', 'not a short text', warnings);
  return { channelId, url: found.url, parsedUrl: parsed, announcedBytes, duration, thumbnail, shape, warnings };
}

/** Optional fields never reject a webhook: a recording with an odd `filesize` must still be downloaded. */
function optional<T>(schema: z.ZodType<T>, value: unknown, name: string, why: string, warnings: string[]): T | null {
  if (value === undefined || value === null || value === '') return null;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;
  warnings.push(`${name} ${shown} ignored: ${why}`);
  return null;
}

/** `https://host/svc/rand/<channel>.mp4` → `<channel>` (percent-decoded, truncated to the maximum ID length). */
export function channelFromUrl(url: URL): string | undefined {
  const segment = url.pathname.split('/').pop() ?? '';
  let name = segment;
  try {
    name = decodeURIComponent(segment);
  } catch {
    // Malformed escapes: keep the raw segment, it is still the best name we have.
  }
  name = name.replace(/\.mp4$/i, '');
  if (name.trim() === '') return undefined;
  return name.slice(0, MAX_CHANNEL_ID_LENGTH);
}

/** URL-encoded pairs → nested null-prototype objects (first value of a repeated key wins). */
function formToBag(params: URLSearchParams): Bag {
  const root = Object.create(null) as Bag;
  for (const [key, raw] of params) {
    const path = splitFormKey(key);
    if (!path || path.some((segment) => UNSAFE_KEYS.has(segment) || segment === '')) continue;
    let node: Bag = root;
    let ok = true;
    for (const segment of path.slice(0, -1)) {
      const next = node[segment];
      if (next === undefined) {
        const created = Object.create(null) as Bag;
        node[segment] = created;
        node = created;
      } else if (isBag(next)) node = next;
      else {
        ok = false;
        break;
      }
    }
    const leaf = path[path.length - 1] as string;
    if (ok && node[leaf] === undefined) node[leaf] = jsonObjectOrText(raw);
  }
  return root;
}

function splitFormKey(key: string): string[] | null {
  const bracket = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  let path: string[];
  if (bracket && bracket[2]) {
    path = [bracket[1] as string, ...[...bracket[2].matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string)];
  } else path = key.split('.');
  return path.length <= MAX_FORM_DEPTH ? path : null;
}

/** A form field may carry the spec's object as JSON text (`payload={"url":...}`). */
function jsonObjectOrText(value: string): unknown {
  if (!/^\s*\{/.test(value)) return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return isBag(parsed) ? parsed : value;
  } catch {
    return value;
  }
}

function isBag(value: unknown): value is Bag {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function own(bag: Bag, key: string): unknown {
  return Object.hasOwn(bag, key) ? bag[key] : undefined;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
