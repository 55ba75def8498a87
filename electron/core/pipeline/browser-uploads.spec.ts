/**
 * Tunnels checked as a browser sees them. A loopback proxy plays the public tunnel in front of a real pipeline:
 * transparent, the browser check (the SDK's CORS preflight with a browser User-Agent and no bypass header)
 * reaches Tally and says `uploads: "ok"`; as an interstitial (localtunnel's reminder page: HTML without CORS for
 * browsers unless they send the bypass header, which the SDK's XHR cannot), the webhook self-check still passes
 * (it sends the bypass header, like a server) while the status says `uploads: "blocked"` and why.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TunnelStatus } from '../tunnels/types.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { startLoopbackProxy } from '../../../tests/support/loopback-proxy.js';
import { RecordingPipeline } from './pipeline.js';

const APP = 'https://app.example';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A reverse proxy to `target()`; with `interstitial`, browsers without the bypass header get a page instead. */
async function startProxy(target: () => number, interstitial: boolean): Promise<string> {
  const proxy = await startLoopbackProxy(target, (req, res) => {
    const browser = /Mozilla\//.test(req.headers['user-agent'] ?? '');
    if (!interstitial || !browser || req.headers['bypass-tunnel-reminder'] !== undefined) return false;
    req.resume();
    const page = '<!DOCTYPE html><html><body><h1>Friendly Reminder</h1><p>Click to continue</p></body></html>';
    res.writeHead(511, { 'Content-Type': 'text/html', 'Content-Length': String(page.length) });
    res.end(page);
    return true;
  });
  cleanups.push(proxy.close);
  return proxy.url;
}

async function statusThrough(interstitial: boolean, origins: string[] = [APP]): Promise<TunnelStatus> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-browser-uploads-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  let port = 0;
  const publicUrl = await startProxy(() => port, interstitial);
  const pipeline = await RecordingPipeline.open({
    stateDir: join(dir, 'state'),
    folder: join(dir, 'recordings'),
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
    tunnel: { provider: 'url', publicUrl, ngrokDomain: null, localtunnelHost: null },
    uploads: { allowedOrigins: () => origins },
  });
  cleanups.push(() => pipeline.stop());
  const reachable = new Promise<TunnelStatus>((resolve) =>
    pipeline.on('tunnel', (s) => {
      if (s.state === 'reachable' || s.state === 'unreachable') resolve(s);
    }),
  );
  await pipeline.receiver.start();
  port = pipeline.receiver.port;
  await pipeline.start();
  return reachable;
}

describe('the browser check of the upload path', () => {
  it('says ok through a transparent proxy', async () => {
    const status = await statusThrough(false);
    expect(status).toMatchObject({ state: 'reachable', uploads: 'ok' });
    expect(status.uploadsMessage).toMatch(/Web pages can upload/);
  });

  it('says blocked, and what to do, through a proxy that shows browsers an interstitial page', async () => {
    const status = await statusThrough(true);
    // Webhooks still get through (the service is no browser), so the tunnel itself is reachable.
    expect(status).toMatchObject({ state: 'reachable', uploads: 'blocked' });
    expect(status.uploadsMessage).toMatch(/shows browsers a page of its own/);
    expect(status.uploadsMessage).toMatch(/your own https URL/);
  });

  it('says off, with how to allow one, while no page origin may upload', async () => {
    const status = await statusThrough(false, []);
    expect(status).toMatchObject({ state: 'reachable', uploads: 'off' });
    expect(status.uploadsMessage).toMatch(/Settings → Recordings from your web app\./);
  });
});
