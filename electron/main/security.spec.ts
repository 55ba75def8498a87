import type { Session } from 'electron';
import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, hardenSession, isAllowedExternalUrl, openExternalSafe } from './security.js';

describe('isAllowedExternalUrl', () => {
  it('allows https pages of the allowed sites and their subdomains', () => {
    expect(isAllowedExternalUrl('https://remotemonster.com/console')).toBe(true);
    expect(isAllowedExternalUrl('https://docs.remotemonster.com/')).toBe(true);
    expect(isAllowedExternalUrl('https://dashboard.ngrok.com/get-started/your-authtoken')).toBe(true);
  });

  it('refuses other schemes, hosts that only look alike, credentials and ports', () => {
    for (const url of [
      'http://remotemonster.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'smb://remotemonster.com/share',
      'https://remotemonster.com.evil.example/',
      'https://evilremotemonster.com/',
      'https://user:pw@ngrok.com/',
      'https://ngrok.com:8443/',
      'not a url',
    ]) {
      expect(isAllowedExternalUrl(url), url).toBe(false);
    }
  });
});

describe('openExternalSafe', () => {
  it('opens allowed URLs and refuses the rest without logging their path', async () => {
    const opened: string[] = [];
    const logs: string[] = [];
    const deps = { openExternal: async (url: string) => void opened.push(url), log: (l: string) => logs.push(l) };
    await expect(openExternalSafe('https://ngrok.com/docs', deps)).resolves.toBe(true);
    await expect(openExternalSafe('https://evil.example/steal?token=abc', deps)).resolves.toBe(false);
    expect(opened).toEqual(['https://ngrok.com/docs']);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('https://evil.example');
    expect(logs[0]).not.toContain('token=abc');
  });
});

/** A session that records the handlers hardenSession installs, so a test can call them. */
function fakeSession() {
  const installed: Record<string, ((...args: never[]) => unknown) | undefined> = {};
  const filters: Record<string, unknown> = {};
  const session = {
    setPermissionRequestHandler: (h: never) => void (installed.request = h),
    setPermissionCheckHandler: (h: never) => void (installed.check = h),
    webRequest: {
      onBeforeRequest: (filter: unknown, h: never) => {
        filters.before = filter;
        installed.before = h;
      },
      onHeadersReceived: (filter: unknown, h: never) => {
        filters.headers = filter;
        installed.headers = h;
      },
    },
  };
  const call = <T>(name: string, ...args: unknown[]): T =>
    (installed[name] as unknown as (...a: unknown[]) => T)(...args);
  return { session: session as unknown as Session, call, filters };
}

describe('hardenSession', () => {
  it('denies every permission request and check', () => {
    const { session, call } = fakeSession();
    hardenSession(session, {});
    const answers: boolean[] = [];
    for (const permission of ['media', 'notifications', 'geolocation', 'clipboard-read', 'openExternal']) {
      call('request', {}, permission, (granted: boolean) => answers.push(granted));
    }
    expect(answers).toEqual([false, false, false, false, false]);
    expect(call('check', {}, 'media')).toBe(false);
  });

  it('blocks all network requests from pages, except the configured dev server', () => {
    const packaged = fakeSession();
    hardenSession(packaged.session, {});
    const decide = (s: ReturnType<typeof fakeSession>, url: string) => {
      let cancel: boolean | undefined;
      s.call('before', { url }, (response: { cancel: boolean }) => (cancel = response.cancel));
      return cancel;
    };
    expect(decide(packaged, 'https://signal.remotemonster.com/lambda/x')).toBe(true);
    expect(decide(packaged, 'http://127.0.0.1:5173/')).toBe(true);

    const dev = fakeSession();
    hardenSession(dev.session, { devServerUrl: 'http://127.0.0.1:5173' });
    expect(decide(dev, 'http://127.0.0.1:5173/src/main.ts')).toBe(false);
    expect(decide(dev, 'ws://127.0.0.1:5173/')).toBe(false);
    expect(decide(dev, 'http://127.0.0.1:5174/')).toBe(true);
  });

  it('adds the CSP header to http responses', () => {
    const { session, call, filters } = fakeSession();
    hardenSession(session, {});
    let headers: Record<string, string[]> | undefined;
    call(
      'headers',
      { responseHeaders: { 'Content-Type': ['text/html'] } },
      (r: { responseHeaders: Record<string, string[]> }) => {
        headers = r.responseHeaders;
      },
    );
    expect(headers).toEqual({ 'Content-Type': ['text/html'], 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] });
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
    expect(filters.headers).toEqual({ urls: ['http://*/*', 'https://*/*', 'ws://*/*', 'wss://*/*'] });
  });
});
