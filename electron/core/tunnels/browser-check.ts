/**
 * The upload path checked as a browser sees it. The web SDK's recorder posts from the producer's page with an
 * `XMLHttpRequest` that cannot add headers such as a tunnel's "skip the browser warning" header, and its custom
 * `X-FILENAME` header makes the browser send a CORS preflight first. A tunnel that shows browsers an interstitial
 * page (localtunnel's reminder page, ngrok's free-plan warning) answers that preflight with HTML and no CORS
 * headers, so every client recording fails while server-to-server webhooks through the same URL work.
 *
 * So this sends exactly that preflight through the public upload URL: OPTIONS, an allowed page Origin,
 * `Access-Control-Request-Method: POST`, `Access-Control-Request-Headers: content-type,x-filename`, a browser
 * User-Agent, and no bypass header. Only Tally's own answer (the origin echoed back, X-FILENAME allowed) is "ok".
 */
import { note, notesText, type Note } from '../notes.js';
import { tunnelRequest, withCause, type ConnectToOverride } from './http.js';
import type { TunnelStatus } from './types.js';

/** A current desktop Chrome's User-Agent: the tunnel services decide on it whether to show their page. */
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

export type UploadsState = TunnelStatus['uploads'];

export interface BrowserCheckResult {
  uploads: UploadsState;
  message: string;
  /** `message` as notes the popover translates. */
  notes: Note[];
}

export interface BrowserCheckOptions {
  /** The public upload URL (web SDK `recordUrl`). */
  url: string;
  /** An allowed page origin to send as `Origin`. */
  origin: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  connectTo?: ConnectToOverride;
}

/** Sends the SDK's preflight through the public URL; never throws. */
export async function checkBrowserUpload(options: BrowserCheckOptions): Promise<BrowserCheckResult> {
  const where = safeOrigin(options.url);
  let response;
  try {
    response = await tunnelRequest(options.url, {
      method: 'OPTIONS',
      headers: {
        origin: options.origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-filename',
        'user-agent': BROWSER_USER_AGENT,
        accept: '*/*',
        'sec-fetch-mode': 'cors',
      },
      timeoutMs: options.timeoutMs ?? 10_000,
      signal: options.signal,
      maxBodyBytes: 64 * 1024,
      connectTo: options.connectTo,
    });
  } catch (error) {
    return result('blocked', note('browserUnreachable', { where, ...withCause(error) }));
  }
  const allowOrigin = header(response.headers['access-control-allow-origin']);
  const allowHeaders = header(response.headers['access-control-allow-headers']).toLowerCase();
  const type = header(response.headers['content-type']).toLowerCase();
  if (response.status >= 200 && response.status < 300 && allowOrigin === options.origin) {
    if (!/(^|[\s,])x-filename($|[\s,])/.test(allowHeaders)) {
      return result('blocked', note('browserDropsHeader', { where }));
    }
    return result('ok', note('browserOk', { where }));
  }
  const looksLikePage =
    type.startsWith('text/html') || /^\s*<(!doctype|html)/i.test(response.body.toString('utf8', 0, 200));
  if (looksLikePage) {
    return result('blocked', note('browserPage', { where, status: response.status }), note('browserWhatToDo'));
  }
  if (response.status === 403 && allowOrigin === '') {
    return result('blocked', note('browserRefused', { origin: options.origin, where }));
  }
  const noCors = note('browserNoCors', { where, status: response.status, origin: options.origin });
  return result('blocked', noCors, note('browserWhatToDo'));
}

function result(uploads: UploadsState, ...notes: Note[]): BrowserCheckResult {
  return { uploads, message: notesText(notes), notes };
}

function header(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).trim();
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the public URL';
  }
}
