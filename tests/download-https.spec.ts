/**
 * Recordings over HTTPS with the socket engine (issue 34), against a real TLS origin on 127.0.0.1 with a
 * certificate made for the test (openssl): verified as https.request verifies, never trusted by default. An
 * unknown certificate and a name the certificate does not cover fail as a certificate error; the real
 * `tally listen` (built CLI, its engine on the worker thread) trusts the certificate through NODE_EXTRA_CA_CERTS,
 * as a studio behind a corporate CA does, and saves the recording byte for byte.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkError } from '../electron/core/download/errors.js';
import { downloadInThread } from '../electron/core/download/download-thread.js';
import type { DownloadPolicy } from '../electron/core/download/fetch-file.js';
import { nodeHttps } from '../electron/core/node-http.js';
import { ensureBuiltCli } from './support/built-cli.js';
import { startListen, type ListenProcess } from './support/listen-process.js';

const openPolicy: DownloadPolicy = { checkRedirect: (from, location) => ({ ok: true, url: new URL(location, from) }) };
const body = randomBytes(3 * 1024 * 1024 + 17);

let dir: string;
let cert: string;
let port: number;
let server: ReturnType<ReturnType<typeof nodeHttps>['createServer']>;

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-https-'));
  cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  server = nodeHttps().createServer({ key: await fsp.readFile(key), cert: await fsp.readFile(cert) }, (req, res) => {
    res.writeHead(200, { 'content-length': String(body.length), 'content-type': 'video/mp4' });
    res.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server?.close();
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('recordings over HTTPS', () => {
  it('refuses a certificate nobody vouches for, and one for another name', async () => {
    for (const url of [`https://localhost:${port}/rec.mp4`, `https://127.0.0.1:${port}/rec.mp4`]) {
      const error = await downloadInThread({
        url,
        dest: path.join(dir, 'never.mp4'),
        partPath: path.join(dir, 'never.mp4.part'),
        policy: openPolicy,
      }).catch((e: unknown) => e);
      expect(error, url).toBeInstanceOf(NetworkError);
      expect((error as Error).message).toContain('the secure connection failed (certificate or TLS error)');
    }
  });

  it('tally listen saves a recording from an origin trusted through NODE_EXTRA_CA_CERTS', async () => {
    await ensureBuiltCli();
    const home = path.join(dir, 'home');
    const url = `https://localhost:${port}/rec.mp4`;
    const proc: ListenProcess = startListen(['--folder', path.join(dir, 'rec'), '--port', '0', '--tunnel', 'none'], {
      TALLY_HOME: home,
      TALLY_DOWNLOAD_ORIGINS: `https://localhost:${port}`,
      NODE_EXTRA_CA_CERTS: cert,
    });
    try {
      const ready = await proc.waitFor((e) => e.type === 'ready', 'ready');
      const answer = await fetch(String(ready.localUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'https-recording', url, filesize: String(body.length) }),
      });
      expect(answer.status).toBe(200);
      const saved = await proc.waitFor((e) => e.type === 'saved' || e.type === 'failed', 'saved');
      expect(saved.type, proc.stderr()).toBe('saved');
      expect((await fsp.readFile(String(saved.path))).equals(body)).toBe(true);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  }, 120_000);
});
