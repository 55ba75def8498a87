import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { aliasKey, aliasKeys, recordingKey } from './recording-key.js';

/**
 * The key as every earlier version computed it: journals on producers' disks hold these keys, and a different one
 * for the same URL would let a resent or restarted webhook download a recording a second time.
 */
function keyAsStored(url: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  parsed.searchParams.sort();
  return hash('sha256', `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search}`, 'hex').slice(0, 32);
}

const URLS = [
  'https://s3.amazonaws.com/svc-1/Rand0m/1581324488053_Dc5aQ.mp4',
  'https://s3.amazonaws.com/svc-1/ch.mp4?X-Amz-Signature=abc&X-Amz-Date=20261126T000000Z&a=1',
  'https://bucket.s3.amazonaws.com/a%20b/c.mp4?b=2&a=1&a=0#part',
  'https://s3.amazonaws.com/x/y.mp4?',
  'https://s3.amazonaws.com/x/y.mp4?&&',
  'https://s3.amazonaws.com/x/y.mp4?q=a+b&p=%20c&r=%E2%9C%93&s',
  'https://s3.amazonaws.com/x/y.mp4?z=&y==1&=x',
  'http://127.0.0.1:8080/svc/r1/ch.mp4?r=run-1',
  'https://[::1]:9000/ch.mp4?b&a',
  'https://S3.AmazonAWS.com:443/UPPER/Case.mp4?B=1&b=2',
];

describe('recordingKey', () => {
  it('gives every URL the key earlier versions stored, from text or from a parsed URL', () => {
    for (const url of URLS) {
      expect(recordingKey(url), url).toBe(keyAsStored(url));
      expect(recordingKey(new URL(url)), url).toBe(keyAsStored(url));
    }
  });

  it('reads a parsed URL without changing it', () => {
    const url = new URL('https://s3.amazonaws.com/x/y.mp4?b=2&a=1#frag');
    recordingKey(url);
    expect(url.href).toBe('https://s3.amazonaws.com/x/y.mp4?b=2&a=1#frag');
  });

  it('orders query pairs, so the same recording signed in another order is the same key', () => {
    expect(recordingKey('https://s3.amazonaws.com/x/y.mp4?b=2&a=1')).toBe(
      recordingKey('https://s3.amazonaws.com/x/y.mp4?a=1&b=2'),
    );
  });
});

describe('aliasKey and aliasKeys', () => {
  it('give the same keys for a URL as text and as a parsed URL', () => {
    for (const url of URLS) {
      expect(aliasKeys('ch', new URL(url))).toEqual(aliasKeys('ch', url));
      expect(aliasKey('ch', new URL(url))).toBe(aliasKey('ch', url));
    }
  });
});
