/**
 * Thumbnails fetched from the sandbox's real download server under a real download-origin policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import { fetchThumbnail, imageTypeOf } from './thumbnail.js';

let sandbox: Sandbox;
let thumbnailUrl: string;
let videoUrl: string;

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 1 });
  sandbox.control.startBroadcast({ id: 'thumb-1', record: true, recordingBytes: 10_000 });
  const rec = await sandbox.control.endBroadcast('thumb-1');
  if (!rec) throw new Error('no recording');
  thumbnailUrl = rec.thumbnailUrl;
  videoUrl = rec.url;
});
afterAll(async () => {
  await sandbox?.close();
});

describe('fetchThumbnail', () => {
  it('hands back the JPEG as a data: URL when its origin is allowed', async () => {
    const policy = new DownloadOriginPolicy([sandbox.downloadOrigin]);
    const url = await fetchThumbnail(thumbnailUrl, policy);
    expect(url).toMatch(/^data:image\/jpeg;base64,\/9j\//);
  });

  it('fetches nothing from an origin that is not allowed, and keeps nothing that is not an image', async () => {
    let requests = 0;
    const count = () => (requests += 1);
    sandbox.control.events.on('request', count);
    expect(await fetchThumbnail(thumbnailUrl, new DownloadOriginPolicy(['https://s3.amazonaws.com']))).toBeNull();
    expect(requests).toBe(0);
    sandbox.control.events.off('request', count);
    // The recording itself is reachable but is a video, not a picture.
    expect(await fetchThumbnail(videoUrl, new DownloadOriginPolicy([sandbox.downloadOrigin]))).toBeNull();
    expect(
      await fetchThumbnail(`${sandbox.downloadOrigin}/nothing.jpg`, new DownloadOriginPolicy([sandbox.downloadOrigin])),
    ).toBeNull();
  });

  it('knows images by their first bytes, not by a name', () => {
    expect(imageTypeOf(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(imageTypeOf(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'))).toBe('image/png');
    expect(imageTypeOf(Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'))).toBe('image/webp');
    expect(imageTypeOf(Buffer.from('<svg onload=alert(1)>'))).toBeNull();
    expect(imageTypeOf(Buffer.alloc(0))).toBeNull();
  });
});
