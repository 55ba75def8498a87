import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { startSandbox, type RecordingInfo, type Sandbox } from './index.js';
import { postJson, rawRequest } from '../../../tests/support/sandbox/http-helpers.js';

let sandbox: Sandbox | null = null;

afterEach(async () => {
  await sandbox?.close();
  sandbox = null;
});

async function withRecording(): Promise<{ s: Sandbox; rec: RecordingInfo; full: Buffer }> {
  sandbox = await startSandbox({ seed: 8 });
  sandbox.control.startBroadcast({ id: 'f', recordingBytes: 100_000 });
  const rec = (await sandbox.control.endBroadcast('f')) as RecordingInfo;
  const full = (await rawRequest(rec.url)).body;
  return { s: sandbox, rec, full };
}

const liveList = (s: Sandbox) => postJson(`${s.apiUrl}/lambda/broadcast-channel-list`, s.credentials);

describe('fault injection', () => {
  it('delays answers (delayMs), for the next N requests only (times)', async () => {
    sandbox = await startSandbox();
    const s = sandbox;
    s.control.setFaults('api', { delayMs: 300, times: 1 });
    let started = performance.now();
    expect((await liveList(s)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(s.control.getFaults('api')).toBeNull();
    started = performance.now();
    await liveList(s);
    expect(performance.now() - started).toBeLessThan(290);
  });

  it('answers an injected status with a proxy-style HTML page, or a JSON body by default', async () => {
    sandbox = await startSandbox();
    const s = sandbox;
    s.control.setFaults('api', { status: 502, html: true });
    const html = await liveList(s);
    expect(html.status).toBe(502);
    expect(html.headers.get('content-type')).toBe('text/html');
    expect(html.text).toContain('<title>502 Bad Gateway</title>');
    s.control.setFaults('api', { status: 503 });
    const json = await liveList(s);
    expect(json.status).toBe(503);
    expect(json.json).toEqual({ error: 'injected_fault', message: 'sandbox fault injection: status 503' });
    s.control.setFaults('api', null);
    expect((await liveList(s)).status).toBe(200);
  });

  it('answers empty bodies (emptyBody), with 200 when no status is given', async () => {
    sandbox = await startSandbox();
    const s = sandbox;
    s.control.setFaults('api', { emptyBody: true });
    const res = await liveList(s);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('0');
    expect(res.text).toBe('');
    s.control.setFaults('api', { emptyBody: true, status: 401 });
    expect((await liveList(s)).status).toBe(401);
  });

  it('limits faults to a path prefix', async () => {
    sandbox = await startSandbox();
    const s = sandbox;
    s.control.setFaults('api', { status: 500, path: '/console/v1/search' });
    expect((await liveList(s)).status).toBe(200);
    const search = await postJson(`${s.endpoints.consoleApiUrl}/v1/search`, {
      ...s.credentials,
      keyword: '',
      starttime: 0,
      endtime: 1,
    });
    expect(search.status).toBe(500);
  });

  it('never faults the control API, so a test can always clear a fault', async () => {
    sandbox = await startSandbox();
    const s = sandbox;
    s.control.setFaults('api', { status: 500 });
    const res = await fetch(`${s.apiUrl}/_sandbox/faults/api`, { method: 'PUT', body: 'null' });
    expect(res.status).toBe(200);
    expect((await liveList(s)).status).toBe(200);
  });

  it('refuses malformed fault specs', async () => {
    sandbox = await startSandbox();
    expect(() => sandbox?.control.setFaults('api', { status: 42 })).toThrow(ValidationError);
    expect(() => sandbox?.control.setFaults('api', { bogus: 1 } as never)).toThrow(ValidationError);
  });

  it('injects S3-style errors and HTML pages on the download server', async () => {
    const { s, rec } = await withRecording();
    s.control.setFaults('download', { status: 503, times: 1 });
    const slow = await rawRequest(rec.url);
    expect(slow.status).toBe(503);
    expect(slow.body.toString()).toContain('<Code>SlowDown</Code>');
    s.control.setFaults('download', { status: 403, html: true, times: 1 });
    const page = await rawRequest(rec.url);
    expect(page.status).toBe(403);
    expect(page.headers['content-type']).toBe('text/html');
    expect(page.body.toString()).toContain('403 Forbidden');
    expect((await rawRequest(rec.url)).status).toBe(200);
  });

  it('drops the connection after N body bytes (resetAfterBytes)', async () => {
    const { s, rec, full } = await withRecording();
    s.control.setFaults('download', { resetAfterBytes: 30_000, times: 1 });
    const cut = await rawRequest(rec.url);
    expect(cut.status).toBe(200);
    expect(cut.headers['content-length']).toBe('100000');
    expect(cut.error).not.toBeNull();
    expect(cut.body.equals(full.subarray(0, 30_000))).toBe(true);
    // A resume from where it broke gets the rest.
    const rest = await rawRequest(rec.url, { headers: { Range: `bytes=${cut.body.length}-` } });
    expect(Buffer.concat([cut.body, rest.body]).equals(full)).toBe(true);
  });

  it('drops API answers mid-body too, even before the first body byte', async () => {
    sandbox = await startSandbox();
    const s = sandbox;
    s.control.setFaults('api', { resetAfterBytes: 0 });
    await expect(liveList(s)).rejects.toThrow();
  });

  it('announces a longer Content-Length than it sends, then closes (wrongContentLength)', async () => {
    const { s, rec, full } = await withRecording();
    s.control.setFaults('download', { wrongContentLength: true });
    const res = await rawRequest(rec.url, { headers: { Range: 'bytes=0-9999' } });
    expect(res.status).toBe(206);
    expect(Number(res.headers['content-length'])).toBeGreaterThan(10_000);
    expect(res.body.equals(full.subarray(0, 10_000))).toBe(true);
    expect(res.error).not.toBeNull();
  });

  it('throttles bodies to rateBytesPerSec', async () => {
    const { s, rec, full } = await withRecording();
    s.control.setFaults('download', { rateBytesPerSec: 10_000 });
    const started = performance.now();
    const res = await rawRequest(rec.url, { headers: { Range: 'bytes=0-4999' } });
    // 5 000 bytes at 10 000 B/s in 1 000-byte steps: the last step leaves at 400 ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(res.body.equals(full.subarray(0, 5000))).toBe(true);
  });

  it('ignores Range headers when told to (noRange)', async () => {
    const { s, rec, full } = await withRecording();
    s.control.setFaults('download', { noRange: true, times: 2 });
    for (let i = 0; i < 2; i++) {
      const res = await rawRequest(rec.url, { headers: { Range: 'bytes=100-199' } });
      expect(res.status).toBe(200);
      expect(res.headers['content-range']).toBeUndefined();
      expect(res.body.equals(full)).toBe(true);
    }
    expect((await rawRequest(rec.url, { headers: { Range: 'bytes=100-199' } })).status).toBe(206);
  });

  it('counts remaining uses of a fault', async () => {
    const { s, rec } = await withRecording();
    s.control.setFaults('download', { status: 500, times: 3 });
    await rawRequest(rec.url);
    expect(s.control.getFaults('download')).toEqual({ status: 500, times: 2 });
  });
});
