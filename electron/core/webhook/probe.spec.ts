/**
 * The public-path check's signed probe against the real receiver: a fresh nonce per check, signed by a key that
 * never leaves the receiving process, so only this receiver answering now passes; an answer kept by a cache or
 * replayed by another server (the same instance ID, an old signature) does not.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { Inbox } from '../recordings/inbox.js';
import { checkSelf } from '../tunnels/supervisor.js';
import { WebhookReceiver } from './receiver.js';
import { TokenStore } from './token.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<WebhookReceiver> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-probe-'));
  const inbox = await Inbox.open(join(dir, 'state'));
  const tokens = await TokenStore.open(dir);
  const r = new WebhookReceiver({ inbox, tokens, policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']) });
  await r.start();
  cleanups.push(async () => {
    await r.stop();
    await inbox.close();
    await rm(dir, { recursive: true, force: true });
  });
  return r;
}

function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
}

describe('the signed self-check probe', () => {
  it('passes for this receiver, and only with a signature for this very nonce', async () => {
    const r = await receiver();
    const url = `${r.origin}${r.healthPath}`;
    const sign = (nonce: string) => r.signProbe(nonce);
    expect(await checkSelf({ url, expectedId: r.instanceId, signProbe: sign })).toEqual({ ok: true });
    // Another receiver's key signs differently, even for an answer that carries this one's ID.
    const other = await receiver();
    const result = await checkSelf({ url, expectedId: r.instanceId, signProbe: (n) => other.signProbe(n) });
    expect(result).toMatchObject({ ok: false, reason: 'foreign' });
  });

  it('fails when a server in between replays an answer it kept (same ID, an old signature)', async () => {
    const r = await receiver();
    const kept = await get(`${r.origin}${r.healthPath}?probe=${'a'.repeat(32)}`);
    expect(JSON.parse(kept)).toMatchObject({ ok: true, id: r.instanceId, sig: r.signProbe('a'.repeat(32)) });
    const cache = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(kept));
    await new Promise<void>((resolve) => cache.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => cache.close(resolve)));
    const url = `http://127.0.0.1:${(cache.address() as AddressInfo).port}${r.healthPath}`;
    const result = await checkSelf({ url, expectedId: r.instanceId, signProbe: (n) => r.signProbe(n) });
    expect(result).toMatchObject({ ok: false, reason: 'foreign' });
  });
});
