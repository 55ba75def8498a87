import { afterEach, describe, expect, it } from 'vitest';
import { ChannelApi } from '../api-client.js';
import { parseSearch } from '../api-responses.js';
import { startSandbox, type Sandbox, type SandboxOptions } from './index.js';
import { postJson, startReceiver, waitFor } from '../../../tests/support/sandbox/http-helpers.js';

let sandbox: Sandbox | null = null;

async function start(options: SandboxOptions = {}): Promise<Sandbox> {
  sandbox = await startSandbox({ seed: 42, searchIndexDelayMs: 0, ...options });
  return sandbox;
}

afterEach(async () => {
  await sandbox?.close();
  sandbox = null;
});

const creds = (s: Sandbox) => ({ ...s.credentials });
const nowSec = () => Math.floor(Date.now() / 1000);

describe('live list', () => {
  it('answers the documented array shape for live channels only', async () => {
    const s = await start();
    const createdAt = new Date('2024-05-01T10:11:12.345Z');
    s.control.startBroadcast({ id: 'live-1', createdAt, watchers: 7 });
    s.control.startBroadcast({ id: 'live-2' });
    s.control.startBroadcast({ id: 'gone' });
    await s.control.endBroadcast('gone');

    const res = await postJson(`${s.endpoints.baseUrl}/lambda/broadcast-channel-list`, creds(s));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const items = res.json as Array<Record<string, unknown>>;
    expect(items.map((i) => i.id)).toEqual(['live-1', 'live-2']);
    expect(items[0]).toEqual({
      id: 'live-1',
      serviceId: 'sandbox-service',
      createTime: '2024-05-01T10:11:12.345Z',
      numOfWatchers: 7,
    });
    expect(Object.keys(items[1] as object)).toEqual(['id', 'serviceId', 'createTime', 'numOfWatchers']);
    expect(items[1]?.createTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Number.isInteger(items[1]?.numOfWatchers)).toBe(true);
  });

  it('answers an empty array when nothing is live', async () => {
    const s = await start();
    const res = await postJson(`${s.endpoints.baseUrl}/lambda/broadcast-channel-list`, creds(s));
    expect(res.json).toEqual([]);
  });

  it('generates IDs like the service (<epoch ms>_<5 chars>) and watcher counts from the seed', async () => {
    const a = await start({ seed: 7, timeFactor: 1000 });
    const first = a.control.startBroadcast();
    expect(first.id).toMatch(/^\d{13}_[A-Za-z0-9]{5}$/);
    await a.close();
    const b = await start({ seed: 7, timeFactor: 1000 });
    expect(b.control.startBroadcast().id.slice(-5)).toBe(first.id.slice(-5));
  });

  it('lets watcher counts fluctuate over (virtual) time while the session count only grows', async () => {
    const s = await start({ timeFactor: 100_000 });
    const { id } = s.control.startBroadcast();
    const seen = new Set<number>();
    let lastPeers = 0;
    await waitFor(() => {
      const info = s.control.listBroadcasts({ state: 'live' })[0];
      if (!info) return false;
      seen.add(info.watchers);
      expect(info.peerCount).toBeGreaterThanOrEqual(lastPeers);
      lastPeers = info.peerCount;
      return seen.size >= 4;
    });
    const ended = s.control.listBroadcasts({ state: 'ended' });
    expect(ended).toEqual([]);
    await s.control.endBroadcast(id);
    expect(s.control.listBroadcasts({ state: 'ended' })[0]?.peerCount).toBeGreaterThanOrEqual(lastPeers);
  });
});

describe('search', () => {
  const url = (s: Sandbox) => `${s.endpoints.consoleApiUrl}/v1/search`;

  function seed(s: Sandbox): void {
    const t = (iso: string) => new Date(iso);
    s.control.addEndedChannels([
      { id: 'alpha-1', createdAt: t('2024-01-01T10:00:00Z'), endedAt: t('2024-01-01T11:00:00Z'), peerCount: 3 },
      { id: 'beta-1', createdAt: t('2024-01-02T10:00:00Z'), endedAt: t('2024-01-02T10:30:00Z'), peerCount: 9 },
      { id: 'alpha-2', createdAt: t('2024-01-03T10:00:00Z'), endedAt: t('2024-01-03T12:00:00Z'), peerCount: 1 },
    ]);
  }
  const sec = (iso: string) => Date.parse(iso) / 1000;

  it('answers the documented shape, newest first, echoing the start of the period', async () => {
    const s = await start();
    seed(s);
    const before = nowSec();
    const res = await postJson(url(s), {
      ...creds(s),
      keyword: '',
      starttime: sec('2023-12-01T00:00:00Z'),
      endtime: sec('2024-02-01T00:00:00Z'),
    });
    expect(res.status).toBe(200);
    const body = res.json as { startTime: number; currentTime: number; totalCount: number; items: unknown[] };
    expect(body.startTime).toBe(sec('2023-12-01T00:00:00Z'));
    expect(body.currentTime).toBeGreaterThanOrEqual(before);
    expect(body.currentTime).toBeLessThanOrEqual(nowSec());
    expect(body.totalCount).toBe(3);
    expect(body.items).toEqual([
      { chid: 'alpha-2', createTime: sec('2024-01-03T10:00:00Z'), endTime: sec('2024-01-03T12:00:00Z'), peerCount: 1 },
      { chid: 'beta-1', createTime: sec('2024-01-02T10:00:00Z'), endTime: sec('2024-01-02T10:30:00Z'), peerCount: 9 },
      { chid: 'alpha-1', createTime: sec('2024-01-01T10:00:00Z'), endTime: sec('2024-01-01T11:00:00Z'), peerCount: 3 },
    ]);
  });

  it('filters by keyword (a substring of the ID) and by overlap with the period', async () => {
    const s = await start();
    seed(s);
    const search = async (keyword: string, from: string, to: string) =>
      (
        (await postJson(url(s), { ...creds(s), keyword, starttime: sec(from), endtime: sec(to) })).json as {
          items: Array<{ chid: string }>;
        }
      ).items.map((i) => i.chid);
    expect(await search('alpha', '2023-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).toEqual(['alpha-2', 'alpha-1']);
    expect(await search('-1', '2023-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).toEqual(['beta-1', 'alpha-1']);
    expect(await search('ALPHA', '2023-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).toEqual([]);
    // Overlap: a channel running across either edge of the period counts.
    expect(await search('', '2024-01-01T10:59:00Z', '2024-01-02T10:00:00Z')).toEqual(['beta-1', 'alpha-1']);
    expect(await search('', '2024-01-01T11:00:01Z', '2024-01-02T09:59:59Z')).toEqual([]);
    expect(await search('', '2024-01-03T11:00:00Z', '2024-01-03T11:00:00Z')).toEqual(['alpha-2']);
  });

  it('treats keyword, starttime and endtime as optional: everything ended until now, read by the client', async () => {
    const s = await start();
    seed(s);
    const onlyKeyword = await postJson(url(s), { ...creds(s), keyword: 'beta' });
    expect((onlyKeyword.json as { items: Array<{ chid: string }> }).items.map((i) => i.chid)).toEqual(['beta-1']);
    const before = nowSec();
    const bare = await postJson(url(s), creds(s));
    expect(bare.status).toBe(200);
    const body = bare.json as { startTime: number; currentTime: number; totalCount: number };
    expect(body).toMatchObject({ startTime: 0, totalCount: 3 });
    expect(body.currentTime).toBeGreaterThanOrEqual(before);
    // The client's parser takes the answer as it is: start of period 0 is the epoch, not an error.
    const parsed = parseSearch(bare.json, { startTime: new Date(1), now: new Date() });
    expect(parsed.startTime.getTime()).toBe(0);
    expect(parsed.channels.map((c) => [c.id, c.state])).toEqual([
      ['alpha-2', 'ended'],
      ['beta-1', 'ended'],
      ['alpha-1', 'ended'],
    ]);
    // And the client itself, asking with its own bounds, finds the same three channels.
    const api = new ChannelApi({ endpoints: s.endpoints, credentials: s.credentials, retries: 0 });
    const found = await api.search({ since: new Date('2023-01-01T00:00:00Z'), until: new Date() });
    expect(found.channels.map((c) => c.id).sort()).toEqual(['alpha-1', 'alpha-2', 'beta-1']);
  });

  it('also answers at /v1/search on the base host, and only ever lists ended channels', async () => {
    const s = await start();
    s.control.startBroadcast({ id: 'still-live' });
    const res = await postJson(`${s.apiUrl}/v1/search`, {
      ...creds(s),
      keyword: '',
      starttime: 0,
      endtime: nowSec() + 10,
    });
    expect(res.json).toMatchObject({ totalCount: 0, items: [] });
  });

  it('hides a newly ended channel until the index delay has passed', async () => {
    const s = await start({ searchIndexDelayMs: 60_000 });
    s.control.startBroadcast({ id: 'fresh' });
    await s.control.endBroadcast('fresh');
    const query = { ...creds(s), keyword: 'fresh', starttime: nowSec() - 60, endtime: nowSec() + 60 };
    expect((await postJson(url(s), query)).json).toMatchObject({ totalCount: 0, items: [] });
    // The live list no longer has it either: it is in between, as with the real service.
    expect((await postJson(`${s.apiUrl}/lambda/broadcast-channel-list`, creds(s))).json).toEqual([]);
    s.control.setTimeFactor(1_000_000);
    const later = await waitFor(async () => {
      const body = (await postJson(url(s), query)).json as { totalCount: number };
      return body.totalCount === 1 ? body : false;
    });
    expect(later).toMatchObject({ totalCount: 1, items: [{ chid: 'fresh' }] });
  });

  it('caps items at searchLimit while totalCount reports every match', async () => {
    const s = await start({ searchLimit: 5 });
    const base = Date.parse('2024-03-01T00:00:00Z');
    s.control.addEndedChannels(
      Array.from({ length: 12 }, (_, i) => ({
        id: `c${i}`,
        createdAt: new Date(base + i * 60_000),
        endedAt: new Date(base + i * 60_000 + 30_000),
        peerCount: i,
      })),
    );
    const body = (
      await postJson(url(s), { ...creds(s), keyword: '', starttime: base / 1000, endtime: base / 1000 + 3600 })
    ).json as { totalCount: number; items: Array<{ chid: string }> };
    expect(body.totalCount).toBe(12);
    expect(body.items.map((i) => i.chid)).toEqual(['c11', 'c10', 'c9', 'c8', 'c7']);
  });

  it('answers quickly over 50 000 seeded channels', async () => {
    const s = await start();
    const base = Date.parse('2023-01-01T00:00:00Z');
    const items = Array.from({ length: 50_000 }, (_, i) => ({
      id: `${base + i * 60_000}_ch${i}`,
      createdAt: new Date(base + i * 60_000),
      endedAt: new Date(base + i * 60_000 + 45_000),
      peerCount: i % 50,
    }));
    const seeded = performance.now();
    s.control.addEndedChannels(items);
    expect(performance.now() - seeded).toBeLessThan(1000);

    const started = performance.now();
    const all = (await postJson(url(s), { ...creds(s), keyword: '', starttime: 0, endtime: nowSec() })).json as {
      totalCount: number;
      items: Array<{ chid: string }>;
    };
    const some = (await postJson(url(s), { ...creds(s), keyword: 'ch4999', starttime: 0, endtime: nowSec() })).json as {
      totalCount: number;
    };
    expect(performance.now() - started).toBeLessThan(1000);
    expect(all.totalCount).toBe(50_000);
    expect(all.items).toHaveLength(1000);
    expect(all.items[0]?.chid).toBe(items[49_999]?.id);
    expect(some.totalCount).toBe(11); // ch4999 and ch49990..ch49999
  });
});

describe('force termination', () => {
  const url = (s: Sandbox) => `${s.endpoints.baseUrl}/lambda/channel-force-termination`;

  it('answers {send:true} and ends the channel (recording published like a normal end)', async () => {
    const s = await start();
    s.control.startBroadcast({ id: 'to-end', recordingBytes: 50_000 });
    const published = new Promise((resolve) => s.control.events.once('recording', resolve));
    const ended = new Promise((resolve) => s.control.events.once('broadcast:end', resolve));
    const res = await postJson(url(s), { ...creds(s), channelId: 'to-end' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ send: true });
    await ended;
    expect(s.control.listBroadcasts({ state: 'live' })).toEqual([]);
    expect(await published).toMatchObject({ channelId: 'to-end', size: 50_000 });
  });

  it('answers 404 for an unknown or already ended channel', async () => {
    const s = await start();
    s.control.startBroadcast({ id: 'once' });
    expect((await postJson(url(s), { ...creds(s), channelId: 'once' })).status).toBe(200);
    for (const channelId of ['once', 'never-existed']) {
      const res = await postJson(url(s), { ...creds(s), channelId });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: 'not_found', message: 'channel not found' });
    }
  });
});

describe('request checks', () => {
  const endpoints = (s: Sandbox) => [
    { url: `${s.apiUrl}/lambda/broadcast-channel-list`, extra: {} },
    { url: `${s.apiUrl}/console/v1/search`, extra: { keyword: '', starttime: 0, endtime: 1 } },
    { url: `${s.apiUrl}/lambda/channel-force-termination`, extra: { channelId: 'x' } },
  ];

  it('answers 401 with a JSON body for a wrong secret or service ID on every endpoint', async () => {
    const s = await start();
    for (const { url, extra } of endpoints(s)) {
      for (const bad of [
        { serviceId: 'sandbox-service', secret: 'nope' },
        { serviceId: 'other', secret: 'sandbox-secret' },
      ]) {
        const res = await postJson(url, { ...bad, ...extra });
        expect(res.status).toBe(401);
        expect(res.json).toEqual({ error: 'unauthorized', message: 'invalid serviceId or secret' });
        expect(res.text).not.toContain('sandbox-secret');
      }
    }
  });

  it('answers 400 for bad JSON and for missing or mistyped fields', async () => {
    const s = await start();
    for (const { url, extra } of endpoints(s)) {
      const broken = await postJson(url, '{"serviceId":');
      expect(broken.status).toBe(400);
      expect(broken.json).toEqual({ error: 'bad_request', message: 'the body is not valid JSON' });
      const missing = await postJson(url, { serviceId: 'sandbox-service', ...extra });
      expect(missing.status).toBe(400);
      expect(missing.json).toMatchObject({ error: 'bad_request', message: expect.stringContaining('secret') });
    }
    const mistyped = await postJson(`${s.apiUrl}/console/v1/search`, { ...creds(s), starttime: '0', endtime: 5 });
    expect(mistyped.status).toBe(400);
    expect((mistyped.json as { message: string }).message).toContain('starttime');
  });

  it('requires Content-Type application/json (any charset), and caps the body size', async () => {
    const s = await start();
    const url = `${s.apiUrl}/lambda/broadcast-channel-list`;
    const body = JSON.stringify(creds(s));
    const withCharset = await postJson(url, body, { headers: { 'Content-Type': 'application/json; charset=UTF-8' } });
    expect(withCharset.status).toBe(200);
    const asText = await postJson(url, body, { headers: { 'Content-Type': 'text/plain' } });
    expect(asText.status).toBe(415);
    expect(asText.json).toMatchObject({ error: 'unsupported_media_type' });
    const huge = await postJson(url, { ...creds(s), pad: 'x'.repeat(1024 * 1024 + 10) });
    expect(huge.status).toBe(413);
    expect(huge.json).toMatchObject({ error: 'payload_too_large' });
  });

  it('answers 404 for unknown paths and 405 with Allow for a wrong method', async () => {
    const s = await start();
    const unknown = await postJson(`${s.apiUrl}/lambda/nope`, creds(s));
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ error: 'not_found', message: 'no such endpoint' });
    const wrong = await fetch(`${s.apiUrl}/lambda/broadcast-channel-list`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });
});

describe('admin API', () => {
  const admin = (s: Sandbox, path: string, body: unknown, secret?: string) =>
    postJson(`${s.endpoints.adminUrl}${path}`, body, {
      method: 'PUT',
      headers: secret === undefined ? {} : { secret },
    });

  it('sets the recordhook URL with the secret header, and refuses without it', async () => {
    const s = await start();
    const hook = 'https://example.test/hook';
    const missing = await admin(s, '/api/recordhook/sandbox-service', { url: hook });
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({ error: 'unauthorized', message: 'invalid serviceId or secret' });
    expect((await admin(s, '/api/recordhook/sandbox-service', { url: hook }, 'wrong')).status).toBe(401);
    expect((await admin(s, '/api/recordhook/other-service', { url: hook }, 'sandbox-secret')).status).toBe(401);
    expect(s.control.webhookUrl).toBeNull();

    const ok = await admin(s, '/api/recordhook/sandbox-service', { url: hook }, 'sandbox-secret');
    expect(ok.status).toBe(200);
    // The documented answer to every admin call: 200 with an empty body.
    expect(ok.json).toBeUndefined();
    expect(s.control.webhookUrl).toBe(hook);

    const bad = await admin(s, '/api/recordhook/sandbox-service', { url: 'ftp://x' }, 'sandbox-secret');
    expect(bad.status).toBe(400);
    expect((await admin(s, '/api/recordhook/sandbox-service', {}, 'sandbox-secret')).status).toBe(400);
    expect((await admin(s, '/api/recordhook/sandbox-service', { url: '' }, 'sandbox-secret')).status).toBe(200);
    expect(s.control.webhookUrl).toBeNull();
  });

  it('turns server recording off and on', async () => {
    const s = await start();
    const off = await fetch(`${s.endpoints.adminUrl}/api/record/sandbox-service/0`, {
      method: 'PUT',
      headers: { secret: 'sandbox-secret' },
    });
    expect(off.status).toBe(200);
    expect(await off.text()).toBe('');
    expect(s.control.recordingEnabled).toBe(false);
    s.control.startBroadcast({ id: 'unrecorded' });
    expect(await s.control.endBroadcast('unrecorded')).toBeNull();
    expect(s.control.getRecording('unrecorded')).toBeUndefined();

    const bad = await fetch(`${s.endpoints.adminUrl}/api/record/sandbox-service/2`, {
      method: 'PUT',
      headers: { secret: 'sandbox-secret' },
    });
    expect(bad.status).toBe(400);
    const noSecret = await fetch(`${s.endpoints.adminUrl}/api/record/sandbox-service/1`, { method: 'PUT' });
    expect(noSecret.status).toBe(401);
    expect(s.control.recordingEnabled).toBe(false);
    const on = await fetch(`${s.endpoints.adminUrl}/api/record/sandbox-service/1`, {
      method: 'PUT',
      headers: { secret: 'sandbox-secret' },
    });
    expect(on.status).toBe(200);
    expect(s.control.recordingEnabled).toBe(true);
  });

  it('sets the channel lifecycle hook (secret required, empty 200) and calls it as broadcasts start and end', async () => {
    const s = await start();
    const hook = await startReceiver();
    try {
      expect((await admin(s, '/api/webhook/sandbox-service', { url: hook.url })).status).toBe(401);
      expect(s.control.channelWebhookUrl).toBeNull();
      const res = await admin(s, '/api/webhook/sandbox-service', { url: hook.url }, 'sandbox-secret');
      expect([res.status, res.text]).toEqual([200, '']);
      expect(s.control.channelWebhookUrl).toBe(hook.url);
      // The recording webhook is a separate setting.
      expect(s.control.webhookUrl).toBeNull();

      s.control.startBroadcast({ id: 'hooked', record: false });
      const created = await hook.next();
      await s.control.endBroadcast('hooked');
      const closed = await hook.next();
      expect([created, closed].map((r) => [r.method, r.url, r.headers['content-type']])).toEqual([
        ['GET', '/hook?action=create&chid=hooked', 'application/json'],
        ['GET', '/hook?action=close&chid=hooked', 'application/json'],
      ]);
    } finally {
      await hook.close();
    }
  });
});
