/**
 * The engine on its worker thread (issue 34), against the real test origin on 127.0.0.1: the download goes on
 * while the main thread is blocked, progress comes in batches, the policy and the final name are asked on the
 * main thread, errors keep their types and messages across the thread boundary, and a stop or the stall rule
 * ends it as before.
 */
import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import type { LookupFunction } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { downloadInThread } from './download-thread.js';
import {
  DownloadRefusedError,
  HttpStatusError,
  NetworkError,
  StallError,
  TimeoutError,
  VerificationError,
} from './errors.js';
import type { DownloadOptions, DownloadPolicy, DownloadProgress } from './fetch-file.js';
import { TestServer } from '../../../tests/support/download/file-server.js';
import { startNginxOrigin } from '../../../tests/support/nginx-origin.js';

const KiB = 1024;
const MiB = 1024 * KiB;

const openPolicy: DownloadPolicy = {
  checkRedirect: (from, location) => ({ ok: true, url: new URL(location, from) }),
};

let server: TestServer;
let dir: string;
let counter = 0;

beforeAll(async () => {
  server = await TestServer.start();
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-thread-'));
});
afterEach(async () => {
  server.setFaults(null);
  server.releasePaused();
  await fsp.rm(dir, { recursive: true, force: true });
});

function publish(size: number, spec: { etag?: string | null } = {}) {
  counter += 1;
  const urlPath = `/svc/thread${counter}/ch${counter}.mp4`;
  return { file: server.addFile(urlPath, { size, ...spec }), urlPath };
}

const partPath = (): string => path.join(dir, 'rec.mp4.part');

function options(urlPath: string, extra: Partial<DownloadOptions> = {}): DownloadOptions {
  return {
    url: server.url(urlPath),
    dest: path.join(dir, 'rec.mp4'),
    partPath: partPath(),
    policy: openPolicy,
    ...extra,
  };
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Holds this thread for `ms` without letting any callback run (as a long synchronous task would). */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('the download thread', () => {
  it('goes on downloading while the main thread is blocked, and reports progress in batches', async () => {
    // The origin is a real nginx in its own process: a server on this thread would stop with it.
    const size = 4 * MiB;
    const root = path.join(dir, 'www');
    await fsp.mkdir(root);
    const body = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4) body.writeUInt32LE((i * 2654435761) >>> 0, i);
    await fsp.writeFile(path.join(root, 'rec.mp4'), body);
    const nginx = await startNginxOrigin({ root, workDir: path.join(dir, 'nginx'), limitRate: '4m' });
    try {
      const reports: DownloadProgress[] = [];
      let written = 0;
      let grewWhileBlocked = -1;
      const result = await downloadInThread({
        ...options('/rec.mp4'),
        url: `${nginx.origin}/rec.mp4`,
        segments: 1,
        progressIntervalMs: 0,
        onBytesWritten: (bytes) => {
          written += bytes;
        },
        onProgress: (p) => {
          reports.push(p);
          if (grewWhileBlocked === -1 && p.bytes > 0 && p.bytes < size / 2) {
            // Nothing on this thread runs for 400 ms: an engine here would not write a byte meanwhile.
            const before = statSync(partPath()).size;
            blockFor(400);
            grewWhileBlocked = statSync(partPath()).size - before;
          }
        },
      });
      expect((await fsp.readFile(result.path)).equals(body)).toBe(true);
      expect(result.checks).toEqual(['size']);
      // 4 MiB a second arrives: well over 256 KiB in 400 ms.
      expect(grewWhileBlocked).toBeGreaterThan(256 * KiB);
      expect(written).toBe(size);
      expect(reports.at(-1)?.bytes).toBe(size);
      // One report per batch (100 ms), not per write: about a second of transfer gives a dozen, not hundreds.
      expect(reports.length).toBeLessThan(40);
    } finally {
      await nginx.stop();
    }
  });

  it('asks the policy and the final name on the main thread (DNS answers included)', async () => {
    const { file, urlPath } = publish(300 * KiB);
    const port = new URL(server.origin).port;
    const asked: string[] = [];
    const policy: DownloadPolicy = {
      check: (url) => {
        asked.push(`check ${new URL(url).hostname}`);
        return { ok: true, url: new URL(url) };
      },
      checkRedirect: (from, location) => {
        asked.push('redirect');
        return { ok: true, url: new URL(location, from) };
      },
      lookupFor: (url) =>
        ((
          hostname: string,
          _options: unknown,
          callback: (e: null, a: { address: string; family: number }[]) => void,
        ) => {
          asked.push(`lookup ${hostname} for ${url.hostname}`);
          callback(null, [{ address: '127.0.0.1', family: 4 }]);
        }) as unknown as LookupFunction,
    };
    const chosen = path.join(dir, 'chosen.mp4');
    const result = await downloadInThread({
      ...options(urlPath),
      url: `http://recordings.example:${port}${urlPath}`,
      policy,
      dest: async () => {
        asked.push('dest');
        return chosen;
      },
    });
    expect(result.path).toBe(chosen);
    expect(await sha256File(chosen)).toBe(file.sha256());
    expect(asked).toEqual(['check recordings.example', 'lookup recordings.example for recordings.example', 'dest']);
  });

  it('keeps the engine’s error types and messages across the thread boundary', async () => {
    const missing = await downloadInThread(options('/svc/none/nothing.mp4')).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(HttpStatusError);
    expect((missing as HttpStatusError).status).toBe(404);
    expect((missing as HttpStatusError).gone).toBe(true);

    const { urlPath } = publish(200 * KiB, { etag: '"0123456789abcdef0123456789abcdef"' });
    const corrupt = await downloadInThread(options(urlPath)).catch((e: unknown) => e);
    expect(corrupt).toBeInstanceOf(VerificationError);
    expect((corrupt as VerificationError).kind).toBe('md5');
    expect((corrupt as VerificationError).sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((corrupt as Error).message).toMatch(/^The downloaded recording is corrupt: its MD5 is [0-9a-f]{32}/);

    const port = new URL(server.origin).port;
    const internal = new DownloadOriginPolicy([`http://recordings.example:${port}`], {
      resolver: (_host, _opts, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]),
    });
    const refusedDns = await downloadInThread({
      ...options(urlPath),
      url: `http://recordings.example:${port}${urlPath}`,
      policy: internal,
    }).catch((e: unknown) => e);
    expect(refusedDns).toBeInstanceOf(NetworkError);
    expect((refusedDns as Error).message).toMatch(/recordings\.example resolved to 127\.0\.0\.1, a loopback address/);

    server.addRedirect('/svc/moved.mp4', server.url(urlPath));
    const redirected = await downloadInThread(
      options('/svc/moved.mp4', { policy: { checkRedirect: () => ({ ok: false, reason: 'not that origin' }) } }),
    ).catch((e: unknown) => e);
    expect(redirected).toBeInstanceOf(DownloadRefusedError);
    expect((redirected as Error).message).toBe('The recording was not downloaded: not that origin.');
  });

  it('stops when the caller stops it (the caller’s reason, the part kept) and on a stalled connection', async () => {
    const { urlPath } = publish(1 * MiB);
    server.setFaults({ pauseAfterBytes: 300_000, times: 1 });
    const controller = new AbortController();
    const stopped = downloadInThread(
      options(urlPath, {
        segments: 1,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.bytes >= 300_000) controller.abort(new Error('stopped by the test'));
        },
      }),
    );
    await expect(stopped).rejects.toThrow('stopped by the test');
    expect(statSync(partPath()).size).toBe(300_000);
    server.releasePaused();

    server.setFaults({ pauseAfterBytes: 100_000, times: 1 });
    const timedOut = await downloadInThread(options(urlPath, { segments: 1, timeoutMs: 300 })).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(TimeoutError);
  });

  it('applies the stall rule on the main thread to the batches it gets', async () => {
    const { urlPath } = publish(4 * MiB);
    server.setFaults({ rateBytesPerSec: 64 * KiB });
    const error = await downloadInThread(
      options(urlPath, { segments: 1, stallRule: { bytesPerSec: 1 * MiB, windowMs: 300 } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StallError);
    expect((error as StallError).why).toBe('slow');
  });
});
