/**
 * Web client uploads end to end in Debian's Chromium: the sandbox's web client page, served from an allowed
 * origin, sends a generated WebM with XMLHttpRequest exactly as the web SDK does (CORS preflight included), and
 * the receiver saves the same bytes under client/. The same page from another origin is refused by CORS.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';
import { startSandbox } from '../../electron/core/sandbox/index.js';
import { generateWebm, sendWebClientPage } from '../../electron/core/sandbox/web-client.js';
import { mountUploads, type UploadRejection, type UploadRoute } from '../../electron/core/uploads/upload-route.js';
import { WebhookReceiver } from '../../electron/core/webhook/receiver.js';
import { TokenStore } from '../../electron/core/webhook/token.js';
import { launchChromium } from './browser.js';

interface PageUpload {
  track: 'LL' | 'RR';
  state: string;
  status: number;
  sha256: string | null;
  bytes: number;
  fileName: string;
  response: { fileName?: string; bytes?: number; sha256?: string; error?: string } | null;
  error?: string;
}

interface PageResult {
  state: string;
  channelId: string;
  uploads: PageUpload[];
  error?: string;
  events: { event: string; id: string; size: number }[];
}

/** The page's globals (this file is type-checked without the DOM library). */
interface PageGlobals {
  __upload: PageResult;
  __uploadDone: boolean;
}

let dir: string;
let browser: Browser;
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let receiver: WebhookReceiver;
let route: UploadRoute;
let recordUrl: string;
let otherOrigin: Server;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-uploads-e2e-'));
  sandbox = await startSandbox();
  receiver = new WebhookReceiver({
    inbox: { add: () => Promise.reject(new Error('no webhooks here')) },
    policy: new DownloadOriginPolicy([sandbox.downloadOrigin]),
    tokens: await TokenStore.open(join(dir, 'state')),
  });
  // Exactly the sandbox API origin, where the web client page lives.
  route = await mountUploads(receiver, { folder: join(dir, 'recordings'), allowedOrigins: () => [sandbox.apiUrl] });
  await receiver.start();
  recordUrl = `${receiver.origin}${receiver.routePath('uploads')}`;
  // The same page on a second origin that nobody allowed.
  otherOrigin = createServer((req, res) => sendWebClientPage(req, res, { serviceId: 'sandbox-service' }));
  otherOrigin.listen(0, '127.0.0.1');
  await once(otherOrigin, 'listening');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  otherOrigin?.close();
  await receiver?.stop(1000);
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

async function runPage(url: string): Promise<PageResult> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).__uploadDone === true);
    return await page.evaluate(() => (globalThis as unknown as PageGlobals).__upload);
  } finally {
    await page.close();
  }
}

const clientDir = (): string => join(dir, 'recordings', 'client');

describe('web client uploads in Chromium', () => {
  it('saves the SDK pair (LL and RR) a page on an allowed origin sends with XMLHttpRequest, byte for byte', async () => {
    const result = await runPage(`${sandbox.webClientUrl(recordUrl)}&bytes=300000&seed=5&channelId=ch-e2e&autostart=1`);
    expect(result.state).toBe('uploaded');
    expect(result.events.map((e) => e.event)).toEqual(expect.arrayContaining(['stop', 'upload', 'uploaded']));
    expect(result.uploads.map((u) => u.fileName).sort()).toEqual([
      'sandbox-service.ch-e2eLL.ogg',
      'sandbox-service.ch-e2eRR.ogg',
    ]);
    for (const upload of result.uploads) {
      expect(upload.status).toBe(201);
      const saved = upload.response?.fileName ?? '';
      expect(saved).toBe(upload.fileName.replace(/\.ogg$/, '.webm'));
      const bytes = await readFile(join(clientDir(), saved));
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      expect(bytes.length).toBe(300_000);
      expect(sha256).toBe(upload.sha256);
      // The page built exactly what the Node generator builds: nothing was altered on the way.
      const seed = upload.track === 'LL' ? 5 : 6;
      expect(sha256).toBe(createHash('sha256').update(generateWebm(300_000, seed)).digest('hex'));
    }
  });

  it('like the SDK, reports a refused upload as uploaded: only Tally can tell, with the channel', async () => {
    const small = new WebhookReceiver({
      inbox: { add: () => Promise.reject(new Error('no webhooks here')) },
      policy: new DownloadOriginPolicy([sandbox.downloadOrigin]),
      tokens: await TokenStore.open(join(dir, 'state-small')),
    });
    const capped = await mountUploads(small, {
      folder: join(dir, 'capped'),
      maxBytes: 1000,
      allowedOrigins: () => [sandbox.apiUrl],
    });
    await small.start();
    try {
      const rejections: UploadRejection[] = [];
      const both = new Promise<void>((resolve) =>
        capped.on('rejected', (r) => {
          if (rejections.push(r) === 2) resolve();
        }),
      );
      const url = `${small.origin}${small.routePath('uploads')}`;
      const result = await runPage(`${sandbox.webClientUrl(url)}&bytes=5000&channelId=too-big&autostart=1`);
      expect(result.state).toBe('uploaded');
      expect(result.uploads.map((u) => u.status)).toEqual([413, 413]);
      await both;
      expect(rejections.map((r) => [r.status, r.channelId, r.track]).sort()).toEqual([
        [413, 'too-big', 'local'],
        [413, 'too-big', 'remote'],
      ]);
    } finally {
      await small.stop(1000);
    }
  });

  it('reports progress of the response, as the SDK does, not of the upload', async () => {
    // A record URL whose answer is much larger than the upload: the page's progress sizes must follow it.
    const answer = Buffer.alloc(400_000, 0x61);
    const cors = {
      'Access-Control-Allow-Origin': sandbox.apiUrl,
      'Access-Control-Allow-Headers': 'x-filename, content-type',
    };
    const bigAnswer = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'OPTIONS') res.writeHead(204, { ...cors, 'Access-Control-Allow-Methods': 'POST' }).end();
        else res.writeHead(200, { ...cors, 'Content-Length': String(answer.length) }).end(answer);
      });
    });
    bigAnswer.listen(0, '127.0.0.1');
    await once(bigAnswer, 'listening');
    try {
      const port = (bigAnswer.address() as { port: number }).port;
      const url = `http://127.0.0.1:${port}/upload`;
      const result = await runPage(`${sandbox.webClientUrl(url)}&bytes=5000&channelId=progress&autostart=1`);
      expect(result.state).toBe('uploaded');
      for (const track of ['LL', 'RR']) {
        const sizes = result.events
          .filter((e) => e.event === 'progress' && e.id === `progress${track}`)
          .map((e) => e.size);
        expect(sizes.length, track).toBeGreaterThan(0);
        expect(sizes.at(-1), track).toBe(answer.length);
      }
    } finally {
      bigAnswer.closeAllConnections();
      bigAnswer.close();
    }
  });

  it('refuses the same page from an origin that is not allowed: CORS error in the page, no file', async () => {
    const before = await readdir(clientDir());
    const rejected = new Promise<UploadRejection>((resolve) => route.once('rejected', resolve));
    const port = (otherOrigin.address() as { port: number }).port;
    const result = await runPage(
      `http://127.0.0.1:${port}/?recordUrl=${encodeURIComponent(recordUrl)}&bytes=5000&autostart=1`,
    );
    expect(result.state).toBe('error');
    expect(result.uploads.map((u) => u.status)).toEqual([0, 0]);
    expect(result.error).toMatch(/CORS/);
    expect(await rejected).toMatchObject({ status: 403, origin: `http://127.0.0.1:${port}` });
    expect(await readdir(clientDir())).toEqual(before);
  });
});
