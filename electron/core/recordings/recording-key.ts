/**
 * Recording identity for dedupe (see inbox.ts): the key of a URL, and the alias that matches the older webhook
 * shape's URL without the random path segment to the newer one with it.
 */
import { hash } from 'node:crypto';

/**
 * The dedupe key of a recording URL (32 hex characters): scheme, host, path and the query with its pairs sorted,
 * without the fragment. A parsed URL is read, never changed (the receiver passes the one it parsed the webhook
 * with, so a webhook's URL is parsed once).
 */
export function recordingKey(url: string | URL): string {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  let search = '';
  if (parsed.search !== '') {
    // What `searchParams.sort()` would leave in `search`: the sorted pairs, form-encoded; nothing when none.
    const params = new URLSearchParams(parsed.search);
    params.sort();
    const sorted = params.toString();
    search = sorted === '' ? '' : `?${sorted}`;
  }
  const normal = `${parsed.protocol}//${parsed.host}${parsed.pathname}${search}`;
  return hash('sha256', normal, 'hex').slice(0, 32);
}

/** channel + host + file name, or null for a URL without a file name. */
export function aliasKey(channelId: string, url: string | URL): string | null {
  try {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    const file = parsed.pathname.split('/').pop() ?? '';
    return file ? `${channelId}\n${parsed.host}\n${file}` : null;
  } catch {
    return null;
  }
}

/**
 * The alias keys of a recording URL: channel, host and path, and the same with the path's second-to-last segment
 * removed (what the legacy form of the URL would be); null without a file name. A current-form URL's `trimmed`
 * equals its legacy form's `own`, so each side finds the other with one exact lookup.
 */
export function aliasKeys(channelId: string, url: string | URL): { own: string; trimmed: string | null } | null {
  try {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    const parts = parsed.pathname.split('/');
    if (!parts[parts.length - 1]) return null;
    const base = `${channelId}\n${parsed.host}\n`;
    const trimmed = parts.length >= 3 ? [...parts.slice(0, -2), parts[parts.length - 1]].join('/') : null;
    return { own: base + parts.join('/'), trimmed: trimmed === null ? null : base + trimmed };
  } catch {
    return null;
  }
}

/** `/svc/ch.mp4` vs `/svc/<random>/ch.mp4`: the longer path minus its second-to-last segment is the shorter. */
export function differByRandomSegment(a: string, b: string): boolean {
  const pa = new URL(a).pathname.split('/');
  const pb = new URL(b).pathname.split('/');
  const [long, short] = pa.length > pb.length ? [pa, pb] : [pb, pa];
  if (long.length !== short.length + 1 || short.length < 2) return false;
  const trimmed = [...long.slice(0, -2), long[long.length - 1]];
  return trimmed.join('/') === short.join('/');
}

/** Whether `a`'s path has more segments than `b`'s (the current webhook form against the legacy one). */
export function longerPath(a: string, b: string): boolean {
  return new URL(a).pathname.split('/').length > new URL(b).pathname.split('/').length;
}
