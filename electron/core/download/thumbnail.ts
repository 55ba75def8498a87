/**
 * The webhook's thumbnail, for the Recordings list. The webhook is unsigned, so the page never loads its URL
 * itself: the core fetches it under the same download-origin policy as the recording (origin, redirects, DNS
 * answers), reads at most `MAX_THUMBNAIL_BYTES`, keeps it only when its first bytes are a JPEG, PNG or WebP
 * image, and hands the page a `data:` URL, which the page's Content-Security-Policy already allows.
 */
import type { DownloadPolicy } from './http-request.js';
import { openResponse } from './http-request.js';

export const MAX_THUMBNAIL_BYTES = 512 * 1024;
const TIMEOUT_MS = 10_000;

/** The image type of `bytes` by its signature, or null when it is not one the list shows. */
export function imageTypeOf(bytes: Uint8Array): 'image/jpeg' | 'image/png' | 'image/webp' | null {
  const at = (i: number) => bytes[i];
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'image/jpeg';
  if ([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((b, i) => at(i) === b)) return 'image/png';
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/**
 * A `data:` URL of the thumbnail at `url`, or null when it is refused, missing, too big or not an image.
 * Never throws: a thumbnail is decoration, and the recording is listed without one.
 */
export async function fetchThumbnail(
  url: string,
  policy: DownloadPolicy & { check(url: string): { ok: true; url: URL } | { ok: false; reason: string } },
  signal?: AbortSignal,
): Promise<string | null> {
  const verdict = await policy.check(url);
  if (!verdict.ok) return null;
  try {
    const { res } = await openResponse({
      url: verdict.url,
      policy,
      timeoutMs: TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    if (res.statusCode !== 200 || Number(res.headers['content-length'] ?? 0) > MAX_THUMBNAIL_BYTES) {
      res.destroy();
      return null;
    }
    // One byte past the bound tells a picture that is too big from one that just fits.
    const bytes = await res.readSome(MAX_THUMBNAIL_BYTES + 1);
    if (bytes.length > MAX_THUMBNAIL_BYTES) return null;
    const type = imageTypeOf(bytes);
    return type ? `data:${type};base64,${bytes.toString('base64')}` : null;
  } catch {
    return null;
  }
}
