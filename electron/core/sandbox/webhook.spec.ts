import { once } from 'node:events';
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type RecordingInfo, type Sandbox, type SandboxOptions, type WebhookDelivery } from './index.js';
import { buildWebhookRequest } from './webhook-sender.js';
import { postJson, rawRequest, startReceiver, type Receiver } from '../../../tests/support/sandbox/http-helpers.js';

let sandbox: Sandbox | null = null;
let receiver: Receiver | null = null;

afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
  sandbox = null;
  receiver = null;
});

async function setup(options: SandboxOptions = {}): Promise<{ s: Sandbox; r: Receiver }> {
  receiver = await startReceiver();
  sandbox = await startSandbox({ seed: 3, webhookUrl: receiver.url, ...options });
  return { s: sandbox, r: receiver };
}

async function endRecorded(s: Sandbox, id: string, bytes = 40_000): Promise<RecordingInfo> {
  s.control.startBroadcast({ id, recordingBytes: bytes, createdAt: new Date(Date.now() - 62_000) });
  return (await s.control.endBroadcast(id)) as RecordingInfo;
}

describe('recording webhook', () => {
  it('posts the current JSON shape (all strings) and resolves endBroadcast after the attempt', async () => {
    const { s, r } = await setup();
    const event = once(s.control.events, 'webhook');
    const rec = await endRecorded(s, 'json-1');
    expect(r.requests).toHaveLength(1);
    const req = await r.next();
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body.toString())).toEqual({
      id: 'json-1',
      url: rec.url,
      duration: '62',
      filesize: '40000',
      thumbnail: rec.thumbnailUrl,
    });
    const [delivery] = (await event) as [WebhookDelivery];
    expect(delivery).toMatchObject({ channelId: 'json-1', url: r.url, shape: 'json', status: 200, error: null });
    expect(s.control.webhookDeliveries()).toEqual([delivery]);
    // The announced URL really serves the announced size.
    const file = await rawRequest(rec.url);
    expect(file.body.length).toBe(40_000);
  });

  it('sends the older GET shape with chid and the URL-encoded older download URL, which downloads', async () => {
    const { s, r } = await setup({ webhookShape: 'get' });
    const rec = await endRecorded(s, 'get me/1');
    const req = await r.next();
    expect(req.method).toBe('GET');
    expect(req.body.length).toBe(0);
    const query = new URL(req.url, 'http://x').searchParams;
    expect(query.get('chid')).toBe('get me/1');
    expect(query.get('url')).toBe(rec.legacyUrl);
    expect(req.url).toContain(`url=${encodeURIComponent(rec.legacyUrl).replace(/%20/g, '+')}`);
    const file = await rawRequest(query.get('url') as string);
    expect(file.status).toBe(200);
    expect(file.headers.etag).toBe(rec.etag);
  });

  it('sends the spec shape as one wrapping object with the channel and payload.url, as JSON or form', async () => {
    const { s, r } = await setup({ webhookShape: 'spec' });
    const rec = await endRecorded(s, 'spec-1');
    const req = await r.next();
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body.toString())).toEqual({
      remotemonster: { channelId: 'spec-1', payload: { url: rec.url } },
    });
    await s.close();

    sandbox = await startSandbox({ webhookUrl: r.url, webhookShape: 'spec', webhookSpecEncoding: 'form' });
    const rec2 = await endRecorded(sandbox, 'spec-2');
    const form = await r.next();
    expect(form.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const fields = new URLSearchParams(form.body.toString());
    expect(fields.get('remotemonster[channelId]')).toBe('spec-2');
    expect(fields.get('remotemonster[payload][url]')).toBe(rec2.url);
  });

  it('re-sends on demand in any shape (duplicates), appending to the delivery log', async () => {
    const { s, r } = await setup();
    const rec = await endRecorded(s, 'dup');
    await r.next();
    const again = await s.control.resendWebhook('dup');
    expect(again).toMatchObject({ channelId: 'dup', shape: 'json', status: 200 });
    expect(JSON.parse((await r.next()).body.toString()).id).toBe('dup');
    const asGet = await s.control.resendWebhook('dup', 'get');
    expect(asGet.shape).toBe('get');
    expect((await r.next()).method).toBe('GET');
    expect(s.control.webhookDeliveries().map((d) => d.shape)).toEqual(['json', 'json', 'get']);
    await expect(s.control.resendWebhook('nope')).rejects.toThrow(/no recording/);
    // Retention counts from the first webhook, so a duplicate does not extend it.
    expect(s.control.getRecording('dup')?.expiresAt).toEqual(rec.expiresAt);
  });

  it('logs a failing receiver once, without retrying', async () => {
    const { s, r } = await setup();
    r.setStatus(500);
    await endRecorded(s, 'fail-1');
    expect(r.requests).toHaveLength(1);
    expect(s.control.webhookDeliveries()[0]).toMatchObject({ status: 500, error: null });
  });

  it('logs an unreachable receiver as an error with no status', async () => {
    const { s, r } = await setup();
    const dead = r.url;
    await r.close();
    receiver = null;
    s.control.setWebhookUrl(dead);
    await endRecorded(s, 'dead');
    expect(s.control.webhookDeliveries()[0]).toMatchObject({ channelId: 'dead', status: null, error: 'ECONNREFUSED' });
  });

  it('sends nothing without a URL, with sendWebhook false, or when the broadcast was not recorded', async () => {
    const { s, r } = await setup();
    await s.control.endBroadcast(s.control.startBroadcast({ id: 'quiet', recordingBytes: 20_000 }).id, {
      sendWebhook: false,
    });
    expect(s.control.getRecording('quiet')).toMatchObject({ channelId: 'quiet', expired: false });
    s.control.startBroadcast({ id: 'unrecorded', record: false });
    expect(await s.control.endBroadcast('unrecorded')).toBeNull();
    s.control.setWebhookUrl(null);
    expect(await endRecorded(s, 'no-url')).toMatchObject({ channelId: 'no-url' });
    expect(r.requests).toHaveLength(0);
    expect(s.control.webhookDeliveries()).toEqual([]);
    await expect(s.control.resendWebhook('no-url')).rejects.toThrow(/no recordhook URL/);
  });

  it('delivers to the URL registered through the admin API after a force termination', async () => {
    receiver = await startReceiver();
    sandbox = await startSandbox({ seed: 9 });
    const s = sandbox;
    const set = await postJson(
      `${s.endpoints.adminUrl}/api/recordhook/sandbox-service`,
      { url: receiver.url },
      {
        method: 'PUT',
        headers: { secret: 'sandbox-secret' },
      },
    );
    expect(set.status).toBe(200);
    s.control.startBroadcast({ id: 'forced', recordingBytes: 25_000 });
    const end = await postJson(`${s.apiUrl}/lambda/channel-force-termination`, {
      ...s.credentials,
      channelId: 'forced',
    });
    expect(end.json).toEqual({ send: true });
    const req = await receiver.next();
    const body = JSON.parse(req.body.toString()) as { id: string; url: string };
    expect(body.id).toBe('forced');
    expect((await rawRequest(body.url)).body.length).toBe(25_000);
  });

  it('waits the (scaled) webhook delay before sending', async () => {
    const { s, r } = await setup({ webhookDelayMs: 60_000, timeFactor: 600 });
    const published = once(s.control.events, 'recording');
    const ending = endRecorded(s, 'delayed');
    await published;
    expect(r.requests).toHaveLength(0);
    await ending;
    expect(r.requests).toHaveLength(1);
  });

  it('aborts a webhook call that is still waiting when the sandbox closes', async () => {
    const hang = createServer(() => {});
    hang.listen(0, '127.0.0.1');
    await once(hang, 'listening');
    const address = hang.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      sandbox = await startSandbox({ webhookUrl: `http://127.0.0.1:${port}/` });
      const s = sandbox;
      const request = once(hang, 'request');
      s.control.startBroadcast({ id: 'hang', recordingBytes: 20_000 });
      const ending = s.control.endBroadcast('hang');
      await request;
      await s.close();
      await ending;
      expect(s.control.webhookDeliveries()[0]).toMatchObject({ status: null, error: 'sandbox closed' });
    } finally {
      hang.closeAllConnections();
      hang.close();
    }
  });
});

describe('buildWebhookRequest', () => {
  const message = {
    channelId: 'c/1',
    url: 'http://d/s/r/c%2F1.mp4',
    legacyUrl: 'http://d/s/c%2F1.mp4',
    durationSeconds: 5,
    filesize: 9,
    thumbnailUrl: 'http://d/s/r/c%2F1.jpg',
  };

  it('keeps an existing query string of the hook URL in the GET shape', () => {
    const req = buildWebhookRequest('http://h/hook?token=abc', 'get', message);
    const url = new URL(req.url);
    expect(url.searchParams.get('token')).toBe('abc');
    expect(url.searchParams.get('chid')).toBe('c/1');
    expect(url.searchParams.get('url')).toBe(message.legacyUrl);
    expect(req.body).toBeNull();
  });
});
