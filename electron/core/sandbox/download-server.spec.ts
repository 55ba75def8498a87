import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRange } from './download-server.js';
import { startSandbox, type RecordingInfo, type Sandbox, type SandboxOptions } from './index.js';
import { rawRequest, walkBoxes } from '../../../tests/support/sandbox/http-helpers.js';

let sandbox: Sandbox | null = null;

afterEach(async () => {
  await sandbox?.close();
  sandbox = null;
});

async function withRecording(
  options: SandboxOptions = {},
  id = 'rec-1',
  bytes = 100_000,
): Promise<{ s: Sandbox; rec: RecordingInfo; full: Buffer }> {
  sandbox = await startSandbox({ seed: 5, ...options });
  sandbox.control.startBroadcast({ id, recordingBytes: bytes });
  const rec = (await sandbox.control.endBroadcast(id)) as RecordingInfo;
  const res = await rawRequest(rec.url);
  expect(res.error).toBeNull();
  return { s: sandbox, rec, full: res.body };
}

describe('parseRange', () => {
  it('resolves the forms a downloader sends', () => {
    expect(parseRange('bytes=0-99', 1000)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=900-', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=-100', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=-5000', 1000)).toEqual({ start: 0, end: 999 });
    expect(parseRange('bytes=990-5000', 1000)).toEqual({ start: 990, end: 999 });
    expect(parseRange('bytes=1000-', 1000)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 1000)).toBe('unsatisfiable');
    // Ignored like S3 does: malformed, reversed, several ranges.
    expect(parseRange('bytes=5-1', 1000)).toBeNull();
    expect(parseRange('items=0-1', 1000)).toBeNull();
    expect(parseRange('bytes=0-1,5-6', 1000)).toBeNull();
    expect(parseRange(undefined, 1000)).toBeNull();
  });
});

describe('download server', () => {
  it('serves the whole recording with S3 headers; ETag is the md5 of the body', async () => {
    const { s, rec, full } = await withRecording();
    expect(rec.url).toMatch(new RegExp(`^${s.downloadOrigin}/sandbox-service/[a-z0-9]{20}/rec-1\\.mp4$`));
    const res = await fetch(rec.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(res.headers.get('content-length')).toBe('100000');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('last-modified')).toBe(
      new Date(Math.floor(rec.createdAt.getTime() / 1000) * 1000).toUTCString(),
    );
    expect(res.headers.get('x-amz-request-id')).toMatch(/^[0-9A-F]{16}$/);
    const md5 = createHash('md5').update(full).digest('hex');
    expect(res.headers.get('etag')).toBe(`"${md5}"`);
    expect(rec.md5).toBe(md5);
    expect(rec.etag).toBe(`"${md5}"`);
    expect(await rec.sha256()).toBe(createHash('sha256').update(full).digest('hex'));
    expect(full.toString('latin1', 4, 8)).toBe('ftyp');
    expect(walkBoxes(full).reduce((sum, b) => sum + b.size, 0)).toBe(100_000);
    await res.body?.cancel();
  });

  it('answers HEAD with the headers only', async () => {
    const { rec } = await withRecording();
    const res = await rawRequest(rec.url, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe('100000');
    expect(res.headers.etag).toBe(rec.etag);
    expect(res.body.length).toBe(0);
  });

  it('answers Range requests: first, middle, last, suffix, open-ended and unsatisfiable', async () => {
    const { rec, full } = await withRecording();
    for (const [range, start, end] of [
      ['bytes=0-0', 0, 0],
      ['bytes=0-1023', 0, 1023],
      ['bytes=40000-59999', 40_000, 59_999],
      ['bytes=99999-99999', 99_999, 99_999],
      ['bytes=-500', 99_500, 99_999],
      ['bytes=99000-', 99_000, 99_999],
      ['bytes=99990-200000', 99_990, 99_999],
    ] as const) {
      const res = await rawRequest(rec.url, { headers: { Range: range } });
      expect(res.status, range).toBe(206);
      expect(res.headers['content-range'], range).toBe(`bytes ${start}-${end}/100000`);
      expect(res.headers['content-length'], range).toBe(String(end - start + 1));
      expect(res.headers.etag).toBe(rec.etag);
      expect(res.body.equals(full.subarray(start, end + 1)), range).toBe(true);
    }
    const bad = await rawRequest(rec.url, { headers: { Range: 'bytes=100000-' } });
    expect(bad.status).toBe(416);
    expect(bad.headers['content-range']).toBe('bytes */100000');
    expect(bad.body.toString()).toContain('<Code>InvalidRange</Code>');
    const several = await rawRequest(rec.url, { headers: { Range: 'bytes=0-1,5-6' } });
    expect(several.status).toBe(200);
    expect(several.body.length).toBe(100_000);
  });

  it('honours If-Range, If-Match and If-None-Match like S3', async () => {
    const { rec, full } = await withRecording();
    const resumed = await rawRequest(rec.url, { headers: { Range: 'bytes=10-19', 'If-Range': rec.etag } });
    expect(resumed.status).toBe(206);
    expect(resumed.body.equals(full.subarray(10, 20))).toBe(true);
    const changed = await rawRequest(rec.url, { headers: { Range: 'bytes=10-19', 'If-Range': '"0000"' } });
    expect(changed.status).toBe(200);
    expect(changed.body.length).toBe(100_000);
    const mismatch = await rawRequest(rec.url, { headers: { 'If-Match': '"0000"' } });
    expect(mismatch.status).toBe(412);
    expect(mismatch.body.toString()).toContain('<Code>PreconditionFailed</Code>');
    const cached = await rawRequest(rec.url, { headers: { 'If-None-Match': rec.etag } });
    expect(cached.status).toBe(304);
    expect(cached.body.length).toBe(0);
  });

  it('serves hostile channel IDs percent-encoded, and the older URL without the random segment', async () => {
    const id = 'a b/c?d#e%f:ü';
    const { rec, full } = await withRecording({}, id, 20_000);
    expect(rec.url.endsWith(`/${encodeURIComponent(id)}.mp4`)).toBe(true);
    expect(rec.legacyUrl).toBe(`${sandbox?.downloadOrigin}/sandbox-service/${encodeURIComponent(id)}.mp4`);
    expect(full.length).toBe(20_000);
    const legacy = await rawRequest(rec.legacyUrl);
    expect(legacy.status).toBe(200);
    expect(legacy.body.equals(full)).toBe(true);
    const thumb = await fetch(rec.thumbnailUrl);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await thumb.arrayBuffer()).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  });

  it('redirects elsewhere when told to, as S3 does for a moved bucket', async () => {
    const { s, rec } = await withRecording();
    s.control.setFaults('download', { redirectTo: 'https://elsewhere.example/rec-1.mp4', times: 1 });
    const moved = await rawRequest(rec.url);
    expect(moved.status).toBe(307);
    expect(moved.headers.location).toBe('https://elsewhere.example/rec-1.mp4');
    expect((await rawRequest(rec.url)).status).toBe(200);
    expect(() => s.control.setFaults('download', { redirectTo: 'not a url' })).toThrow();
  });

  it('answers 403 AccessDenied XML for keys it never had', async () => {
    const { s, rec } = await withRecording();
    for (const path of [
      '/sandbox-service/zzzzzzzzzzzzzzzzzzzz/rec-1.mp4',
      '/other-service/x/rec-1.mp4',
      '/sandbox-service/x/y/rec-1.mp4',
      '/',
    ]) {
      const res = await rawRequest(`${s.downloadOrigin}${path}`);
      expect(res.status, path).toBe(403);
      expect(res.headers['content-type']).toBe('application/xml');
      expect(res.body.toString()).toMatch(/<Error><Code>AccessDenied<\/Code><Message>Access Denied<\/Message>/);
    }
    const post = await rawRequest(rec.url, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('answers 404 NoSuchKey XML once a recording is expired by hand', async () => {
    const { s, rec } = await withRecording();
    const expired = once(s.control.events, 'recording:expired');
    s.control.expireRecording('rec-1');
    const [info] = (await expired) as [RecordingInfo];
    expect(info).toMatchObject({ channelId: 'rec-1', expired: true });
    const res = await rawRequest(rec.url);
    expect(res.status).toBe(404);
    expect(res.body.toString()).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<Error><Code>NoSuchKey<\/Code><Message>The specified key does not exist.<\/Message><Key>sandbox-service\/[a-z0-9]{20}\/rec-1.mp4<\/Key>/,
    );
    expect(s.control.getRecording('rec-1')?.expired).toBe(true);
  });

  it('deletes a recording when the (scaled) retention after the webhook has passed', async () => {
    sandbox = await startSandbox({ seed: 1, retentionMs: 6 * 3600_000, timeFactor: 360_000 });
    sandbox.control.startBroadcast({ id: 'short-lived', recordingBytes: 30_000 });
    const expired = once(sandbox.control.events, 'recording:expired');
    const rec = (await sandbox.control.endBroadcast('short-lived')) as RecordingInfo;
    // 6 h at 360 000x is 60 ms of real time.
    expect(rec.expiresAt.getTime() - rec.createdAt.getTime()).toBeLessThan(1000);
    await expired;
    expect((await rawRequest(rec.url)).status).toBe(404);
  });

  it("dates its answers by the service's clock: six hours passing there move the Date and delete the file together", async () => {
    const HOUR = 3_600_000;
    const { s, rec } = await withRecording({ retentionMs: 6 * HOUR }, 'dated');
    const dateOf = async () => Date.parse(String((await rawRequest(rec.url, { method: 'HEAD' })).headers.date));
    const before = await dateOf();
    // Not this machine's clock's doing: only the service's time moves.
    expect(Math.abs(before - Date.now())).toBeLessThan(2_000);
    s.control.advanceTime(5 * HOUR);
    const five = await rawRequest(rec.url, { method: 'HEAD' });
    expect(five.status).toBe(200);
    expect(Date.parse(String(five.headers.date)) - before).toBeGreaterThanOrEqual(5 * HOUR - 1_000);
    expect(Date.parse(String(five.headers.date)) - before).toBeLessThan(5 * HOUR + 2_000);
    const expired = once(s.control.events, 'recording:expired');
    s.control.advanceTime(HOUR + 1_000);
    const [info] = (await expired) as [RecordingInfo];
    // Deleted at the moment its 6 hours ended on the service's clock, and said so with a Date past it.
    expect(info.expiresAt.getTime() - rec.createdAt.getTime()).toBeGreaterThanOrEqual(6 * HOUR - 1_000);
    expect(info.expiresAt.getTime() - rec.createdAt.getTime()).toBeLessThan(6 * HOUR + 2_000);
    const gone = await rawRequest(rec.url);
    expect(gone.status).toBe(404);
    expect(gone.body.toString()).toMatch(/<Code>NoSuchKey<\/Code>/);
    expect(Date.parse(String(gone.headers.date))).toBeGreaterThanOrEqual(info.expiresAt.getTime() - 1_000);
    expect(s.control.now().getTime() - Date.now()).toBeGreaterThanOrEqual(6 * HOUR + 1_000 - 50);
  });

  it('streams a large recording with correct length and hash', async () => {
    const { rec, full } = await withRecording({}, 'big', 32 * 1024 * 1024 + 3);
    expect(full.length).toBe(32 * 1024 * 1024 + 3);
    expect(createHash('md5').update(full).digest('hex')).toBe(rec.md5);
  });
});
