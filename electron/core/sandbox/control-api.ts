/**
 * The sandbox's own HTTP control API under /_sandbox/ on the API server: the SandboxControl methods over
 * JSON, so a test in another process (or a person with curl) can start and end broadcasts, inject faults
 * and read the webhook log. Loopback callers only, no auth, never subject to fault injection.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { describeIssues } from '../validate.js';
import { parseFaultSpec } from './faults.js';
import { HttpError, queryOf, readBody } from './server-http.js';
import { SandboxConflictError, SandboxNotFoundError, type SandboxService } from './service.js';
import type { RecordingInfo, SandboxTarget } from './types.js';
import {
  CLIENT_RECORDING_TYPES,
  MAX_CLIENT_RECORDING_BYTES,
  WEB_CLIENT_PATH,
  sendWebClientPage,
  uploadClientRecording,
} from './web-client.js';
import { sendJson } from '../http-answer.js';

const MAX_CONTROL_BODY_BYTES = 64 * 1024 * 1024;

const isoDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const shapeSchema = z.enum(['json', 'get', 'spec']);

const startSchema = z
  .object({
    id: z.string().optional(),
    record: z.boolean().optional(),
    recordingBytes: z.number().int().nonnegative().optional(),
    watchers: z.number().int().nonnegative().optional(),
    createdAt: isoDate.optional(),
    reuse: z.boolean().optional(),
  })
  .strict();
const endSchema = z.object({ sendWebhook: z.boolean().optional() }).strict();
const watchersSchema = z.object({ watchers: z.number().int().nonnegative().nullable() }).strict();
const channelsSchema = z
  .object({
    items: z.array(
      z.object({ id: z.string(), createdAt: isoDate, endedAt: isoDate, peerCount: z.number().int().nonnegative() }),
    ),
  })
  .strict();
const resendSchema = z.object({ shape: shapeSchema.optional() }).strict();
const speedSchema = z.object({ timeFactor: z.number().positive() }).strict();
const timeSchema = z.object({ advanceMs: z.number().nonnegative() }).strict();
const webhookSchema = z.object({ shape: shapeSchema.optional(), url: z.string().nullable().optional() }).strict();
const recordingSchema = z.object({ enabled: z.boolean() }).strict();
const clientUploadSchema = z
  .object({
    recordUrl: z.url({ protocol: /^https?$/ }),
    bytes: z.number().int().min(1).max(MAX_CLIENT_RECORDING_BYTES).optional(),
    mime: z.enum(CLIENT_RECORDING_TYPES).optional(),
    origin: z.string().optional(),
  })
  .strict();

type Handler = (ctx: { service: SandboxService; req: IncomingMessage; params: string[] }) => Promise<unknown>;

const ROUTES: Array<{ method: string; pattern: RegExp; run: Handler; status?: number }> = [
  { method: 'GET', pattern: /^\/_sandbox\/?$/, run: async ({ service }) => summary(service) },
  {
    method: 'GET',
    pattern: /^\/_sandbox\/broadcasts$/,
    run: async ({ service, req }) => {
      const state = queryOf(req).get('state');
      if (state !== null && state !== 'live' && state !== 'ended') {
        throw new HttpError(400, 'bad_request', 'state must be live or ended');
      }
      return service.listBroadcasts(state ? { state } : {});
    },
  },
  {
    method: 'POST',
    pattern: /^\/_sandbox\/broadcasts$/,
    status: 201,
    run: async ({ service, req }) => service.startBroadcast(parse(startSchema, await readJson(req))),
  },
  {
    method: 'POST',
    pattern: /^\/_sandbox\/broadcasts\/([^/]+)\/end$/,
    run: async ({ service, req, params: [id] }) => {
      const body = parse(endSchema, await readJson(req));
      return { recording: await recordingJson(await service.endBroadcast(id as string, body), false) };
    },
  },
  {
    method: 'PUT',
    pattern: /^\/_sandbox\/broadcasts\/([^/]+)\/watchers$/,
    run: async ({ service, req, params: [id] }) =>
      service.setWatchers(id as string, parse(watchersSchema, await readJson(req)).watchers),
  },
  {
    method: 'POST',
    pattern: /^\/_sandbox\/channels$/,
    status: 201,
    run: async ({ service, req }) => {
      const { items } = parse(channelsSchema, await readJson(req));
      service.addEndedChannels(items);
      return { added: items.length };
    },
  },
  {
    method: 'GET',
    pattern: /^\/_sandbox\/recordings\/([^/]+)$/,
    run: async ({ service, req, params: [id] }) => {
      const info = service.getRecording(id as string);
      if (!info) throw new SandboxNotFoundError(`no recording for channel "${id}" in the sandbox`);
      return recordingJson(info, queryOf(req).get('sha256') === '1');
    },
  },
  {
    method: 'POST',
    pattern: /^\/_sandbox\/recordings\/([^/]+)\/expire$/,
    run: async ({ service, params: [id] }) => {
      service.expireRecording(id as string);
      return recordingJson(service.getRecording(id as string) ?? null, false);
    },
  },
  {
    method: 'POST',
    pattern: /^\/_sandbox\/recordings\/([^/]+)\/resend$/,
    run: async ({ service, req, params: [id] }) =>
      service.resendWebhook(id as string, parse(resendSchema, await readJson(req)).shape),
  },
  {
    method: 'GET',
    pattern: /^\/_sandbox\/faults\/([^/]+)$/,
    run: async ({ service, params: [target] }) => ({ target, faults: service.getFaults(faultTarget(target)) }),
  },
  {
    method: 'PUT',
    pattern: /^\/_sandbox\/faults\/([^/]+)$/,
    run: async ({ service, req, params: [target] }) => {
      const which = faultTarget(target);
      service.setFaults(which, parseFaultSpec(await readJson(req)));
      return { target: which, faults: service.getFaults(which) };
    },
  },
  {
    method: 'PUT',
    pattern: /^\/_sandbox\/speed$/,
    run: async ({ service, req }) => {
      service.setTimeFactor(parse(speedSchema, await readJson(req)).timeFactor);
      return { timeFactor: service.timeFactor };
    },
  },
  {
    method: 'GET',
    pattern: /^\/_sandbox\/time$/,
    run: async ({ service }) => ({ now: service.now().toISOString() }),
  },
  {
    method: 'POST',
    pattern: /^\/_sandbox\/time$/,
    run: async ({ service, req }) => ({
      now: service.advanceTime(parse(timeSchema, await readJson(req)).advanceMs).toISOString(),
    }),
  },
  {
    method: 'PUT',
    pattern: /^\/_sandbox\/webhook$/,
    run: async ({ service, req }) => {
      const body = parse(webhookSchema, await readJson(req));
      if (body.shape) service.setWebhookShape(body.shape);
      if (body.url !== undefined) service.setWebhookUrl(body.url === '' ? null : body.url);
      return { shape: service.webhookShape, url: service.webhookUrl };
    },
  },
  {
    method: 'PUT',
    pattern: /^\/_sandbox\/recording$/,
    run: async ({ service, req }) => {
      service.setRecordingEnabled(parse(recordingSchema, await readJson(req)).enabled);
      return { enabled: service.recordingEnabled };
    },
  },
  { method: 'GET', pattern: /^\/_sandbox\/webhooks$/, run: async ({ service }) => service.webhookDeliveries() },
  {
    // The web SDK's recorder upload, sent from the sandbox (see web-client.ts); answers with what came back.
    method: 'POST',
    pattern: /^\/_sandbox\/web-client\/upload$/,
    run: async ({ service, req }) => {
      const { recordUrl, ...opts } = parse(clientUploadSchema, await readJson(req));
      try {
        return await uploadClientRecording(recordUrl, { serviceId: service.serviceId, ...opts });
      } catch (error) {
        throw new HttpError(502, 'upload_failed', `no answer from the recordUrl: ${(error as Error).message}`);
      }
    },
  },
];

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(plain) === 4) return plain.startsWith('127.');
  return plain === '::1';
}

/** Answers one /_sandbox/ request. Never throws. */
export async function handleControl(
  service: SandboxService,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  let status: number;
  let body: unknown;
  const headers: Record<string, string> = {};
  try {
    if (!isLoopback(req.socket.remoteAddress)) {
      throw new HttpError(403, 'forbidden', 'the control API only answers loopback callers');
    }
    const method = req.method ?? 'GET';
    if (path === WEB_CLIENT_PATH && (method === 'GET' || method === 'HEAD')) {
      sendWebClientPage(req, res, { serviceId: service.serviceId });
      return;
    }
    const matching = ROUTES.map((r) => ({ r, m: r.pattern.exec(path) })).filter((x) => x.m !== null);
    if (matching.length === 0) throw new HttpError(404, 'not_found', 'no such control endpoint');
    const hit = matching.find((x) => x.r.method === method);
    if (!hit) {
      const allow = [...new Set(matching.map((x) => x.r.method))].join(', ');
      throw new HttpError(405, 'method_not_allowed', `use ${allow} for this endpoint`, { Allow: allow });
    }
    const params = (hit.m as RegExpExecArray).slice(1).map(decodeParam);
    body = await hit.r.run({ service, req, params });
    status = hit.r.status ?? 200;
  } catch (error) {
    req.resume();
    ({ status, body } = errorReply(error));
    if (error instanceof HttpError) Object.assign(headers, error.headers);
  }
  sendJson(res, status, body, { headers });
}

function errorReply(error: unknown): { status: number; body: { error: string; message: string } } {
  const reply = (status: number, code: string, message: string) => ({ status, body: { error: code, message } });
  if (error instanceof HttpError) return reply(error.status, error.code, error.message);
  if (error instanceof SandboxNotFoundError) return reply(404, 'not_found', error.message);
  if (error instanceof SandboxConflictError) return reply(409, 'conflict', error.message);
  if (error instanceof ValidationError || error instanceof TypeError || error instanceof RangeError) {
    return reply(400, 'bad_request', error.message);
  }
  return reply(500, 'internal', error instanceof Error ? error.message : 'sandbox error');
}

function decodeParam(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'bad_request', 'malformed percent-encoding in the path');
  }
}

function faultTarget(value: string | undefined): SandboxTarget {
  if (value === 'api' || value === 'download') return value;
  throw new HttpError(404, 'not_found', 'fault target must be api or download');
}

/** Control bodies are JSON; an empty body counts as `{}` so curl calls stay short. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const raw = await readBody(req, MAX_CONTROL_BODY_BYTES);
  if (raw.length === 0) return {};
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpError(400, 'bad_request', 'the body is not valid JSON');
  }
}

function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new HttpError(400, 'bad_request', describeIssues(result.error.issues).detail);
  return result.data;
}

async function recordingJson(info: RecordingInfo | null, withSha256: boolean): Promise<unknown> {
  if (!info) return null;
  const { sha256, ...rest } = info;
  return withSha256 ? { ...rest, sha256: await sha256() } : rest;
}

function summary(service: SandboxService): unknown {
  return {
    serviceId: service.serviceId,
    timeFactor: service.timeFactor,
    now: service.now().toISOString(),
    recordingEnabled: service.recordingEnabled,
    webhookUrl: service.webhookUrl,
    webhookShape: service.webhookShape,
    channelWebhookUrl: service.channelWebhookUrl,
    live: service.listBroadcasts({ state: 'live' }).length,
    faults: { api: service.getFaults('api'), download: service.getFaults('download') },
  };
}
