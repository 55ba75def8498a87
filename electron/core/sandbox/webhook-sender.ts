/**
 * Sends the recording-complete webhook in one of the three documented shapes. One attempt, no retries
 * (nothing about retries is documented), no keep-alive (every call is independent, as from the service).
 */
import type { WebhookShape } from './types.js';
import { nodeHttp, nodeHttps } from '../node-http.js';

/** Name of the wrapping object in the spec's shape. */
export const SPEC_WRAPPER = 'remotemonster';

export interface WebhookMessage {
  channelId: string;
  /** Download URL with the random segment. */
  url: string;
  /** Older download URL without the random segment (used by the `get` shape, as in the older docs). */
  legacyUrl: string;
  durationSeconds: number;
  filesize: number;
  thumbnailUrl: string;
}

export interface WebhookRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

/** Builds the HTTP request a webhook of `shape` makes to `hookUrl`. Pure, so tests can inspect it. */
export function buildWebhookRequest(
  hookUrl: string,
  shape: WebhookShape,
  message: WebhookMessage,
  specEncoding: 'json' | 'form' = 'json',
): WebhookRequest {
  const headers: Record<string, string> = { 'User-Agent': 'tally-sandbox-webhook/1' };
  if (shape === 'get') {
    const target = new URL(hookUrl);
    target.searchParams.append('chid', message.channelId);
    target.searchParams.append('url', message.legacyUrl);
    return { method: 'GET', url: target.toString(), headers, body: null };
  }
  if (shape === 'json') {
    const body = {
      id: message.channelId,
      url: message.url,
      duration: String(message.durationSeconds),
      filesize: String(message.filesize),
      thumbnail: message.thumbnailUrl,
    };
    return json(hookUrl, headers, body);
  }
  if (specEncoding === 'form') {
    const form = new URLSearchParams();
    form.append(`${SPEC_WRAPPER}[channelId]`, message.channelId);
    form.append(`${SPEC_WRAPPER}[payload][url]`, message.url);
    const body = Buffer.from(form.toString());
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    return { method: 'POST', url: hookUrl, headers, body };
  }
  return json(hookUrl, headers, { [SPEC_WRAPPER]: { channelId: message.channelId, payload: { url: message.url } } });
}

function json(url: string, headers: Record<string, string>, value: unknown): WebhookRequest {
  return {
    method: 'POST',
    url,
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: Buffer.from(JSON.stringify(value)),
  };
}

/** Makes the request; resolves with the receiver's status or the reason there was none. Never rejects. */
export function sendWebhookRequest(
  req: WebhookRequest,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<{ status: number | null; error: string | null }> {
  if (signal.aborted) return Promise.resolve({ status: null, error: 'sandbox closed' });
  return new Promise((resolve) => {
    let settled = false;
    const done = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve({ status, error });
    };
    const target = new URL(req.url);
    const make = target.protocol === 'https:' ? nodeHttps().request : nodeHttp().request;
    const headers: Record<string, string> = { ...req.headers, Connection: 'close' };
    if (req.body) headers['Content-Length'] = String(req.body.length);
    const outgoing = make(target, { method: req.method, headers, agent: false }, (res) => {
      // Drain so the socket closes; the status is all the service would look at.
      res.resume();
      res.once('end', () => done(res.statusCode ?? null, null));
      res.once('error', () => done(res.statusCode ?? null, null));
    });
    const timer = setTimeout(() => {
      outgoing.destroy();
      done(null, `no answer within ${timeoutMs} ms`);
    }, timeoutMs);
    const onAbort = () => {
      outgoing.destroy();
      done(null, 'sandbox closed');
    };
    signal.addEventListener('abort', onAbort, { once: true });
    outgoing.once('error', (error: NodeJS.ErrnoException) => done(null, error.code ?? error.message));
    outgoing.end(req.body ?? undefined);
  });
}
