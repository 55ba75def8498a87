/**
 * The sandbox's stand-in for the web SDK's recorder (spec 6.2, SERVICE-FACTS "Web client recordings"): when a
 * recording stops it sends TWO recordings to a `recordUrl` exactly the way the SDK's XMLHttpRequests do: for the
 * local and the remote stream, one POST each, the raw file as the body with its media type, and the file name in
 * `X-FILENAME` (`<serviceId>.<channelId>LL.ogg` and `…RR.ogg`, `.ogg` whatever the real format). Like the SDK,
 * the page reports `uploaded` for ANY answer (413 and 500 included) and only a network or CORS failure as an
 * error, and its progress events are the RESPONSE's. Two ways to run it:
 *
 * - in a browser: `GET /_sandbox/web-client?recordUrl=...` on the sandbox API origin serves a page that builds
 *   the recordings and posts them with XMLHttpRequest, reporting the SDK's `onRecordEvent` events on the page and
 *   in `window.__upload` (end-to-end tests wait for `window.__uploadDone`);
 * - from Node: `uploadClientRecording(recordUrl, ...)`, for the demo and for tests without a browser.
 *
 * Nothing is recorded: the "recording" is a steady tone in a real WebM audio file (webm-audio.ts) that players and
 * ffprobe decode; the same size and seed always give the same bytes.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxControl } from './types.js';
import { tallyGenerateWebm } from './webm-audio.js';

/** Path of the page on the sandbox API server. */
export const WEB_CLIENT_PATH = '/_sandbox/web-client';
export const DEFAULT_CLIENT_RECORDING_BYTES = 256 * 1024;
/** Largest generated recording (the browser page builds it in memory). */
export const MAX_CLIENT_RECORDING_BYTES = 64 * 1024 * 1024;
/** Media types the SDK sends: webm from Chromium, ogg from Firefox. */
export const CLIENT_RECORDING_TYPES = ['audio/webm', 'audio/ogg'] as const;
export type ClientRecordingType = (typeof CLIENT_RECORDING_TYPES)[number];

/** Smallest recording: the headers and an empty Void element, no audio (see webm-audio.ts). */
export const MIN_CLIENT_RECORDING_BYTES = tallyGenerateWebm(0, 1).length;

/**
 * The generator for the page: the very function Node runs (webm-audio.ts), as source text, so the browser and
 * Node make the same bytes without a second copy.
 */
export const WEBM_GENERATOR_SOURCE = tallyGenerateWebm.toString();

/**
 * A playable WebM audio file of `size` bytes (at least MIN_CLIENT_RECORDING_BYTES): same size and seed, same
 * bytes, in Node and in the page.
 */
export function generateWebm(size: number, seed: number): Buffer {
  const bytes = tallyGenerateWebm(size, seed);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** A channel ID shaped like the service's (`<epoch ms>_<5 chars>`). */
export function newClientChannelId(): string {
  return `${Date.now()}_${randomBytes(4).toString('base64url').slice(0, 5)}`;
}

/** The SDK's two recordings: `LL` its own (local) stream, `RR` the remote one. */
export type SdkTrack = 'LL' | 'RR';

/** The name the SDK's recorder puts in `X-FILENAME`: `<serviceId>.<channelId><LL|RR>.ogg`, whatever the format. */
export function sdkFileName(serviceId: string, channelId: string, track: SdkTrack): string {
  return `${serviceId}.${channelId}${track}.ogg`;
}

export interface ClientUploadOptions {
  /** The project's service ID (first part of the file name). */
  serviceId: string;
  /** Size of the generated recording (default 256 KiB, at most 64 MiB). */
  bytes?: number;
  /** Media type of the body (default `audio/webm`, as Chromium records). */
  mime?: ClientRecordingType;
  /** Filler seed (default random); the same seed and size give the same bytes. */
  seed?: number;
  /** Sent as the `Origin` header, as a browser page on that origin would (default: none, like a native client). */
  origin?: string;
  /** The channel the recording belongs to (default: a new service-style ID). */
  channelId?: string;
  /** Which of the SDK's two recordings (default `LL`). */
  track?: SdkTrack;
  /** Overrides the generated `X-FILENAME`. */
  fileName?: string;
  signal?: AbortSignal;
}

export interface ClientUploadResult {
  /** HTTP status of the answer. */
  status: number;
  ok: boolean;
  /** The `X-FILENAME` that was sent. */
  fileName: string;
  bytes: number;
  /** Hex sha256 of the bytes sent. */
  sha256: string;
  /** The answer body (parsed JSON when it is JSON, else text). */
  response: unknown;
}

/**
 * Sends a generated recording to `recordUrl` the way the web SDK does (see the file comment). Resolves with
 * the answer whatever its status; rejects only when no answer came (connection refused, aborted).
 */
export async function uploadClientRecording(recordUrl: string, opts: ClientUploadOptions): Promise<ClientUploadResult> {
  const url = new URL(recordUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('recordUrl must be an http(s) URL');
  const size = opts.bytes ?? DEFAULT_CLIENT_RECORDING_BYTES;
  if (!Number.isInteger(size) || size < 1 || size > MAX_CLIENT_RECORDING_BYTES) {
    throw new RangeError(`bytes must be a whole number from 1 to ${MAX_CLIENT_RECORDING_BYTES}`);
  }
  const mime = opts.mime ?? 'audio/webm';
  if (!CLIENT_RECORDING_TYPES.includes(mime))
    throw new TypeError(`mime must be one of ${CLIENT_RECORDING_TYPES.join(', ')}`);
  const body = generateWebm(size, opts.seed ?? randomInt(1, 2 ** 32 - 1));
  const fileName =
    opts.fileName ?? sdkFileName(opts.serviceId, opts.channelId ?? newClientChannelId(), opts.track ?? 'LL');
  const headers: Record<string, string> = { 'Content-Type': mime, 'X-FILENAME': fileName };
  if (opts.origin) headers.Origin = opts.origin;
  const answer = await fetch(url, { method: 'POST', headers, body, signal: opts.signal, redirect: 'manual' });
  const text = await answer.text();
  let response: unknown = text;
  try {
    response = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return {
    status: answer.status,
    ok: answer.ok,
    fileName,
    bytes: body.length,
    sha256: createHash('sha256').update(body).digest('hex'),
    response,
  };
}

export interface WebClientPageOptions {
  serviceId: string;
  /** Prefilled recordUrl (also read from the page's `?recordUrl=` at run time). */
  recordUrl?: string | null;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The web client page. Query parameters: `recordUrl`, `bytes`, `mime` (`audio/webm` | `audio/ogg`), `seed` (of
 * LL; RR uses seed + 1), `channelId`, `autostart=1` to send at once. Results land in `window.__upload` (`state`,
 * `channelId`, `uploads`: one `{track, fileName, bytes, sha256, status, response, state, error}` per recording,
 * `events`) and `window.__uploadDone` turns true when both are over.
 */
export function webClientPage(opts: WebClientPageOptions, nonce: string): string {
  const config = JSON.stringify({ serviceId: opts.serviceId, recordUrl: opts.recordUrl ?? null }).replace(
    /</g,
    '\\u003c',
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sandbox web client · Tally</title>
<style nonce="${nonce}">
  body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 44rem; padding: 0 1rem; color: #1c1c1e; }
  label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
  input, select { width: 100%; box-sizing: border-box; padding: .4rem; font: inherit; }
  button { margin-top: 1rem; padding: .5rem 1rem; font: inherit; }
  ol { font-family: ui-monospace, monospace; font-size: 13px; padding-left: 1.5rem; }
  .error { color: #b00020; }
  .ok { color: #1b6e2d; }
</style>
</head>
<body>
<h1>Sandbox web client</h1>
<p>Sends two generated recordings (local <code>LL</code> and remote <code>RR</code>) to a <code>recordUrl</code> the
way the web SDK's recorder does: one <code>XMLHttpRequest</code> POST each with the file as the body and its name in
<code>X-FILENAME</code>. Like the SDK, it reports any answer as uploaded.</p>
<form id="form">
  <label for="recordUrl">recordUrl</label>
  <input id="recordUrl" name="recordUrl" type="url" required placeholder="https://…/uploads/…" value="${escapeHtml(opts.recordUrl ?? '')}">
  <label for="bytes">Size (bytes)</label>
  <input id="bytes" name="bytes" type="number" min="1" max="${MAX_CLIENT_RECORDING_BYTES}" value="${DEFAULT_CLIENT_RECORDING_BYTES}">
  <label for="mime">Type</label>
  <select id="mime" name="mime"><option>audio/webm</option><option>audio/ogg</option></select>
  <button id="send" type="submit">Send a test recording</button>
</form>
<p id="status" role="status" aria-live="polite"></p>
<ol id="events"></ol>
<script nonce="${nonce}">
"use strict";
var CONFIG = ${config};
${WEBM_GENERATOR_SOURCE}
(function () {
  var params = new URLSearchParams(location.search);
  var form = document.getElementById('form');
  var statusLine = document.getElementById('status');
  var list = document.getElementById('events');
  var urlInput = document.getElementById('recordUrl');
  var bytesInput = document.getElementById('bytes');
  var mimeInput = document.getElementById('mime');
  if (params.get('recordUrl')) urlInput.value = params.get('recordUrl');
  if (params.get('bytes')) bytesInput.value = params.get('bytes');
  if (params.get('mime')) mimeInput.value = params.get('mime');
  window.__upload = { state: 'idle', uploads: [], events: [] };
  window.__uploadDone = false;

  function onRecordEvent(e) {
    window.__upload.events.push(e);
    var item = document.createElement('li');
    item.textContent = JSON.stringify(e);
    list.appendChild(item);
  }
  function hex(buffer) {
    return Array.prototype.map.call(new Uint8Array(buffer), function (b) { return b.toString(16).padStart(2, '0'); }).join('');
  }
  function channelId() {
    return params.get('channelId') || (Date.now() + '_' + Math.random().toString(36).slice(2, 7).padEnd(5, '0'));
  }
  // One recording of the pair: like the SDK, any answer is "uploaded"; only no answer at all is an error.
  function sendOne(chid, track, size, seed, mime) {
    var data = tallyGenerateWebm(size, seed);
    var blob = new Blob([data], { type: mime });
    var id = chid + track;
    var fileName = CONFIG.serviceId + '.' + chid + track + '.ogg';
    var result = { track: track, fileName: fileName, bytes: blob.size, sha256: null, status: 0, response: null, state: 'sending' };
    window.__upload.uploads.push(result);
    onRecordEvent({ event: 'stop', id: id, size: 1 });
    var digest = window.crypto && window.crypto.subtle ? window.crypto.subtle.digest('SHA-256', data).then(hex) : Promise.resolve(null);
    return digest.then(function (sha256) {
      result.sha256 = sha256;
      return new Promise(function (resolve) {
        var xhr = new XMLHttpRequest();
        xhr.open('POST', urlInput.value, true);
        xhr.setRequestHeader('X-FILENAME', fileName);
        xhr.onload = function () {
          try { result.response = JSON.parse(xhr.responseText); } catch (err) { result.response = xhr.responseText; }
          result.status = xhr.status;
          result.state = 'uploaded';
          onRecordEvent({ event: 'uploaded', id: id, size: blob.size });
          resolve();
        };
        xhr.onerror = function () {
          // A refused CORS preflight looks exactly like a network error to the page.
          result.state = 'error';
          result.error = 'network or CORS error (is this page origin allowed?)';
          onRecordEvent({ event: 'error', id: id, size: blob.size, error: result.error });
          resolve();
        };
        xhr.onprogress = function (ev) { onRecordEvent({ event: 'progress', id: id, size: ev.loaded }); };
        onRecordEvent({ event: 'upload', id: id, size: blob.size });
        xhr.send(blob);
      });
    });
  }
  function send() {
    var size = Math.max(1, Math.min(${MAX_CLIENT_RECORDING_BYTES}, Number(bytesInput.value) || ${DEFAULT_CLIENT_RECORDING_BYTES}));
    var seed = Number(params.get('seed')) || Math.floor(Math.random() * 4294967294) + 1;
    var mime = mimeInput.value;
    var chid = channelId();
    window.__uploadDone = false;
    window.__upload = { state: 'sending', channelId: chid, uploads: [], events: window.__upload.events, mime: mime };
    statusLine.textContent = 'Sending…';
    statusLine.className = '';
    Promise.all([sendOne(chid, 'LL', size, seed, mime), sendOne(chid, 'RR', size, (seed % 4294967295) + 1, mime)]).then(function () {
      var failed = window.__upload.uploads.filter(function (u) { return u.state === 'error'; });
      window.__upload.state = failed.length ? 'error' : 'uploaded';
      window.__upload.error = failed.length ? failed[0].error : undefined;
      statusLine.textContent = failed.length
        ? 'Upload failed: ' + failed[0].error
        : 'Uploaded (as the SDK says for any answer): ' + window.__upload.uploads.map(function (u) { return u.fileName + ' → ' + u.status; }).join(', ');
      statusLine.className = failed.length ? 'error' : 'ok';
      window.__uploadDone = true;
    });
  }
  form.addEventListener('submit', function (ev) { ev.preventDefault(); send(); });
  if (params.get('autostart') === '1') send();
})();
</script>
</body>
</html>
`;
}

/**
 * Answers a request for the page (GET or HEAD) with a strict CSP: only its own inline script and style run,
 * and it may connect to any http(s) recordUrl.
 */
export function sendWebClientPage(req: IncomingMessage, res: ServerResponse, opts: WebClientPageOptions): void {
  const nonce = randomBytes(16).toString('base64');
  const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
  const html = Buffer.from(
    webClientPage({ ...opts, recordUrl: opts.recordUrl ?? url.searchParams.get('recordUrl') }, nonce),
  );
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(html.length),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src http: https:; form-action 'none'; base-uri 'none'`,
  });
  res.end(req.method === 'HEAD' ? undefined : html);
}

/** What `startSandbox` adds to the control object for the web client. */
export interface WebClientControl {
  /** Sends a generated recording to `recordUrl` as the web SDK does (the project's service ID in the name). */
  uploadClientRecording(recordUrl: string, opts?: Omit<ClientUploadOptions, 'serviceId'>): Promise<ClientUploadResult>;
}

/** What `startSandbox` adds to the sandbox for the web client. */
export interface WebClientSandbox {
  readonly control: SandboxControl & WebClientControl;
  /** URL of the web client page on the API origin, with `recordUrl` prefilled when given. */
  webClientUrl(recordUrl?: string): string;
}

export interface DemoWebClientOptions {
  /** Size of each generated recording (default 256 KiB). */
  bytes?: number;
  /** Sent as the page origin (default none, like a native client, so no origin needs allowing). */
  origin?: string;
  /** Called with each upload's answer, or the error when none came. */
  onResult?: (result: ClientUploadResult | Error, broadcastId: string) => void;
}

/**
 * For the demo: every time a sandbox broadcast ends, a viewer's web client sends its two recordings to the current
 * recordUrl, so client recordings show up next to the server ones. `recordUrl` is read at each end (null:
 * uploads are off, nothing is sent). Returns a function that stops it.
 */
export function attachDemoWebClient(
  sandbox: { readonly control: SandboxControl & WebClientControl },
  recordUrl: () => string | null,
  opts: DemoWebClientOptions = {},
): () => void {
  const onEnd = (broadcast: { id: string; record?: boolean }): void => {
    const url = recordUrl();
    // As in a studio whose web app records the shows it records: every client pair sits under its broadcast.
    if (!url || broadcast.record === false) return;
    // The SDK's pair: the producer's own stream and the remote one, named after the channel.
    for (const track of ['LL', 'RR'] as const) {
      sandbox.control
        .uploadClientRecording(url, { bytes: opts.bytes, origin: opts.origin, channelId: broadcast.id, track })
        .then(
          (result) => opts.onResult?.(result, broadcast.id),
          (error: unknown) => opts.onResult?.(error instanceof Error ? error : new Error(String(error)), broadcast.id),
        );
    }
  };
  sandbox.control.events.on('broadcast:end', onEnd);
  return () => {
    sandbox.control.events.off('broadcast:end', onEnd);
  };
}
