/**
 * Locks down what the popover's web contents may do: it never opens windows, never navigates away from
 * our own page, never embeds <webview>, gets no permission (camera, notifications, ...), talks to no
 * server, and may open only a short allow-list of https pages in the user's browser.
 * Electron objects are typed but passed in, so this runs in plain Node tests.
 */
import type { Session, WebContents } from 'electron';

/**
 * Sites the app may open in the browser: the service's web console and documentation, and ngrok's
 * dashboard and docs (where the tunnel authtoken and static domain come from). Subdomains included.
 */
export const EXTERNAL_SITES: readonly string[] = Object.freeze(['remotemonster.com', 'ngrok.com']);

/**
 * The page's Content Security Policy. The packaged page also carries it as a meta tag (file:// has no
 * response headers); this header covers the dev server.
 */
// electronegativity CSP_GLOBAL_CHECK: it flags `script-src 'self'` (risky only when the origin also serves
// JSONP, Angular templates or user uploads). Our origin is file:// of the packaged renderer, the dev server, or
// `tally serve`, which serves only the built renderer: none of those. The same holds for the meta tag in
// renderer/index.html.
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** True for an https URL, without credentials or an odd port, to an allowed site or its subdomain. */
export function isAllowedExternalUrl(url: string, sites: readonly string[] = EXTERNAL_SITES): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'https:' || parsed.username || parsed.password || parsed.port) return false;
  const host = parsed.hostname.toLowerCase();
  return sites.some((site) => host === site || host.endsWith(`.${site}`));
}

/**
 * The only way the app opens a URL outside itself: allowed https pages go to the default browser,
 * everything else (file:, custom schemes, other hosts) is refused and logged. Resolves whether it opened.
 */
export async function openExternalSafe(
  url: string,
  deps: { openExternal(url: string): Promise<void>; log?: (line: string) => void; sites?: readonly string[] },
): Promise<boolean> {
  if (!isAllowedExternalUrl(url, deps.sites)) {
    deps.log?.(`refused to open an external URL that is not on the allow-list (${describeUrl(url)})`);
    return false;
  }
  // electronegativity OPEN_EXTERNAL_JS_CHECK: reached only after the allow-list check just above.
  await deps.openExternal(url);
  return true;
}

/** Scheme and host only: a refused URL may carry tokens in its path or query. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'not a URL';
  }
}

/**
 * Per-webContents hardening (Electron security checklist items 11-14): deny new windows (opening
 * allowed links externally instead), block navigation away from our page in any frame, and refuse
 * <webview> attachment.
 */
export function hardenWebContents(
  contents: WebContents,
  options: { isAppPage: (url: string) => boolean; openExternal: (url: string) => void },
): void {
  contents.setWindowOpenHandler(({ url }) => {
    // electronegativity OPEN_EXTERNAL_JS_CHECK: options.openExternal is openExternalSafe (index.ts), allow-list first.
    options.openExternal(url);
    return { action: 'deny' };
  });
  contents.on('will-navigate', (event) => {
    if (options.isAppPage(event.url)) return;
    event.preventDefault();
    // electronegativity OPEN_EXTERNAL_JS_CHECK: options.openExternal is openExternalSafe (index.ts), allow-list first.
    options.openExternal(event.url);
  });
  // Covers subframes too; only the main-frame handler above hands links to the browser.
  contents.on('will-frame-navigate', (event) => {
    if (!options.isAppPage(event.url)) event.preventDefault();
  });
  contents.on('will-redirect', (event) => {
    if (!options.isAppPage(event.url)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/**
 * Session hardening: every permission request and check is denied, the page may reach no server but
 * the dev server (when one is configured), and http responses carry the CSP header.
 */
export function hardenSession(session: Session, options: { devServerUrl?: string | null; csp?: string }): void {
  const csp = options.csp ?? CONTENT_SECURITY_POLICY;
  const devOrigin = options.devServerUrl ? new URL(options.devServerUrl).origin : null;
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  const network = { urls: ['http://*/*', 'https://*/*', 'ws://*/*', 'wss://*/*'] };
  session.webRequest.onBeforeRequest(network, (details, callback) => {
    callback({ cancel: !devOrigin || !sameOrigin(details.url, devOrigin) });
  });
  session.webRequest.onHeadersReceived(network, (details, callback) => {
    // electronegativity CSP_GLOBAL_CHECK: "failed to parse" only because `csp` is a variable; it is
    // CONTENT_SECURITY_POLICY above (or a test's), checked in security.spec.ts.
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } });
  });
}

/** Origin match that treats the dev server's ws:// (hot reload) as the same origin as its http://. */
function sameOrigin(url: string, origin: string): boolean {
  try {
    const parsed = new URL(url.replace(/^ws(s?):/, 'http$1:'));
    return parsed.origin === origin;
  } catch {
    return false;
  }
}
