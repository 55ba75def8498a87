/**
 * The API server: the three service endpoints (live list, search, force termination), the admin API, and the
 * sandbox's own control API under /_sandbox/. Service answers follow the documented shapes exactly; the error
 * answers the service never documented are the sandbox's choice, listed in docs/sandbox.md.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { z } from 'zod';
import { describeIssues } from '../validate.js';
import { handleControl } from './control-api.js';
import { htmlErrorPage, replacesAnswer } from './faults.js';
import { HttpError, bufferSource, rawPath, readBody, responseSignal, sendBody, sleep } from './server-http.js';
import type { SandboxService } from './service.js';
import type { FaultSpec } from './types.js';
import { sendJson } from '../http-answer.js';
import { nodeHttp } from '../node-http.js';

/** Largest request body accepted by the service endpoints. */
export const MAX_API_BODY_BYTES = 1024 * 1024;

const credentialsSchema = z.object({ serviceId: z.string(), secret: z.string() });
const searchSchema = credentialsSchema.extend({
  keyword: z.string().optional(),
  starttime: z.number().int().optional(),
  endtime: z.number().int().optional(),
});
const terminateSchema = credentialsSchema.extend({ channelId: z.string() });
const hookSchema = z.object({ url: z.string() });

interface Reply {
  status: number;
  /** `undefined`: an empty body (the admin API's documented answer). */
  body: unknown;
  headers?: Record<string, string>;
}

type Route = (req: IncomingMessage, service: SandboxService, params: string[]) => Promise<Reply>;

const ROUTES: Array<{ method: string; pattern: RegExp; run: Route }> = [
  { method: 'POST', pattern: /^\/lambda\/broadcast-channel-list$/, run: liveList },
  { method: 'POST', pattern: /^\/lambda\/channel-force-termination$/, run: terminate },
  // The console API host carries /v1/search; accepting it at the root too lets one URL serve both hosts.
  { method: 'POST', pattern: /^(?:\/console)?\/v1\/search$/, run: search },
  { method: 'PUT', pattern: /^\/admin\/api\/recordhook\/([^/]+)$/, run: adminRecordhook },
  { method: 'PUT', pattern: /^\/admin\/api\/record\/([^/]+)\/([^/]+)$/, run: adminRecord },
  { method: 'PUT', pattern: /^\/admin\/api\/webhook\/([^/]+)$/, run: adminWebhook },
];

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

/** Creates (does not start) the API server over `service`. */
export function createApiServer(service: SandboxService): Server {
  return nodeHttp().createServer((req, res) => {
    // Every answer is dated by the service's clock (sandbox/clock.ts), not this machine's.
    res.setHeader('Date', service.now().toUTCString());
    void handle(service, req, res).catch(() => {
      // Last resort: a bug in a handler must not take the sandbox down with it.
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendJson(res, 500, { error: 'internal', message: 'sandbox error' });
    });
  });
}

async function handle(service: SandboxService, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = rawPath(req);
  if (path === '/_sandbox' || path.startsWith('/_sandbox/')) {
    // The control API is never faulted: tests must always be able to clear a fault.
    await handleControl(service, req, res, path);
    return;
  }
  const method = req.method ?? 'GET';
  service.events.emit('request', { method, path, target: 'api', range: null });
  const fault = service.faults.api.take(path);
  if (fault?.delayMs) {
    try {
      await sleep(fault.delayMs, responseSignal(res));
    } catch {
      return; // the client gave up while we were "slow"
    }
  }
  if (fault && replacesAnswer(fault)) {
    req.resume();
    await sendInjected(res, fault, method === 'HEAD');
    return;
  }
  let reply: Reply;
  try {
    reply = await route(service, req, path, method);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    req.resume();
    reply = {
      status: error.status,
      body: { error: error.code, message: error.message },
      headers: stringHeaders(error),
    };
  }
  const empty = reply.body === undefined;
  const body = empty ? Buffer.alloc(0) : Buffer.from(JSON.stringify(reply.body));
  await sendBody(res, {
    status: reply.status,
    headers: { ...(empty ? { 'Cache-Control': 'no-store' } : JSON_HEADERS), ...reply.headers },
    source: bufferSource(body),
    head: method === 'HEAD',
    fault,
  });
}

function stringHeaders(error: HttpError): Record<string, string> {
  return Object.fromEntries(Object.entries(error.headers).map(([k, v]) => [k, String(v)]));
}

async function route(service: SandboxService, req: IncomingMessage, path: string, method: string): Promise<Reply> {
  const matching = ROUTES.map((r) => ({ r, m: r.pattern.exec(path) })).filter((x) => x.m !== null);
  if (matching.length === 0) throw new HttpError(404, 'not_found', 'no such endpoint');
  const hit = matching.find((x) => x.r.method === method);
  if (!hit) {
    const allow = [...new Set(matching.map((x) => x.r.method))].join(', ');
    throw new HttpError(405, 'method_not_allowed', `use ${allow} for this endpoint`, { Allow: allow });
  }
  let params: string[];
  try {
    params = (hit.m as RegExpExecArray).slice(1).map((p) => decodeURIComponent(p));
  } catch {
    throw new HttpError(400, 'bad_request', 'malformed percent-encoding in the path');
  }
  return hit.r.run(req, service, params);
}

/** Reads a JSON body after checking the media type (any charset parameter is fine). */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    req.resume();
    throw new HttpError(415, 'unsupported_media_type', 'send the body as Content-Type: application/json');
  }
  const raw = await readBody(req, MAX_API_BODY_BYTES);
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpError(400, 'bad_request', 'the body is not valid JSON');
  }
}

function parseBody<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new HttpError(400, 'bad_request', describeIssues(result.error.issues).detail);
  return result.data;
}

function authorize(service: SandboxService, serviceId: string, secret: string): void {
  if (!service.checkCredentials(serviceId, secret)) {
    throw new HttpError(401, 'unauthorized', 'invalid serviceId or secret');
  }
}

async function liveList(req: IncomingMessage, service: SandboxService): Promise<Reply> {
  const body = parseBody(credentialsSchema, await readJson(req));
  authorize(service, body.serviceId, body.secret);
  return { status: 200, body: service.liveList() };
}

async function search(req: IncomingMessage, service: SandboxService): Promise<Reply> {
  const body = parseBody(searchSchema, await readJson(req));
  authorize(service, body.serviceId, body.secret);
  // Omitted bounds: from the beginning of time until now (the docs show all three, but callers leave them out).
  const now = Math.floor(service.now().getTime() / 1000);
  const starttime = body.starttime ?? 0;
  const endtime = body.endtime ?? now;
  const answer = service.search(body.keyword ?? '', starttime, endtime);
  return {
    status: 200,
    body: {
      startTime: starttime,
      currentTime: now,
      totalCount: answer.totalCount,
      items: answer.items.map((c) => ({
        chid: c.id,
        createTime: Math.floor(c.createdAtMs / 1000),
        endTime: Math.floor(c.endedAtMs / 1000),
        peerCount: c.peerCount,
      })),
    },
  };
}

async function terminate(req: IncomingMessage, service: SandboxService): Promise<Reply> {
  const body = parseBody(terminateSchema, await readJson(req));
  authorize(service, body.serviceId, body.secret);
  if (!service.isLive(body.channelId)) throw new HttpError(404, 'not_found', 'channel not found');
  // Answer at once, like the service: the recording and its webhook follow in the background.
  service.endBroadcast(body.channelId).catch(() => {});
  return { status: 200, body: { send: true } };
}

/** Admin calls carry the secret in a `secret` header and the service ID in the path. */
function authorizeAdmin(req: IncomingMessage, service: SandboxService, serviceId: string): void {
  const header = req.headers.secret;
  const secret = Array.isArray(header) ? header[0] : header;
  if (secret === undefined || !service.checkCredentials(serviceId, secret)) {
    req.resume();
    throw new HttpError(401, 'unauthorized', 'invalid serviceId or secret');
  }
}

function hookUrl(value: string): string | null {
  if (value === '') return null;
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // fall through to the 400 below
  }
  throw new HttpError(400, 'bad_request', 'url must be an absolute http(s) URL, or "" to clear it');
}

async function adminRecordhook(req: IncomingMessage, service: SandboxService, [id]: string[]): Promise<Reply> {
  authorizeAdmin(req, service, id as string);
  const body = parseBody(hookSchema, await readJson(req));
  const url = hookUrl(body.url);
  service.setWebhookUrl(url);
  return { status: 200, body: undefined };
}

async function adminRecord(req: IncomingMessage, service: SandboxService, [id, flag]: string[]): Promise<Reply> {
  authorizeAdmin(req, service, id as string);
  req.resume();
  if (flag !== '0' && flag !== '1') throw new HttpError(400, 'bad_request', 'the last path segment must be 0 or 1');
  service.setRecordingEnabled(flag === '1');
  return { status: 200, body: undefined };
}

async function adminWebhook(req: IncomingMessage, service: SandboxService, [id]: string[]): Promise<Reply> {
  authorizeAdmin(req, service, id as string);
  const body = parseBody(hookSchema, await readJson(req));
  const url = hookUrl(body.url);
  service.setChannelWebhookUrl(url);
  return { status: 200, body: undefined };
}

/** The answer a status/html/emptyBody fault puts in place of the real one. */
async function sendInjected(res: ServerResponse, fault: FaultSpec, head: boolean): Promise<void> {
  const status = fault.status ?? 200;
  const body = fault.emptyBody
    ? ''
    : fault.html
      ? htmlErrorPage(status)
      : JSON.stringify({ error: 'injected_fault', message: `sandbox fault injection: status ${status}` });
  await sendBody(res, {
    status,
    headers: { ...JSON_HEADERS, 'Content-Type': fault.html ? 'text/html' : JSON_HEADERS['Content-Type'] },
    source: bufferSource(Buffer.from(body)),
    head,
    fault,
  });
}
