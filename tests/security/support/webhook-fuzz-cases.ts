/**
 * A seeded generator of hostile webhook requests: every documented shape with traversal and reserved-name
 * channel IDs, malformed and deeply nested JSON, huge bodies, odd encodings and content types, URLs to
 * disallowed origins (loopback canaries, link-local, private ranges, other schemes, credentials, parser
 * tricks), URLs on the allowed origin that redirect somewhere forbidden, and method, path and token junk.
 * The same seed always yields the same requests, so a failure reproduces from the printed seed.
 */
import { Rng } from '../../../electron/core/sandbox/rng.js';

/** Where the generated URLs point. All loopback; only `evilOrigin` is on the download allow-list. */
export interface FuzzTargets {
  /** `/hooks/<token>` of the receiver under test. */
  hookPath: string;
  /** `/healthz/<token>`. */
  healthPath: string;
  /** The one allowed download origin: it serves files under /ok/, redirects under /r/, 404 under /gone/. */
  evilOrigin: string;
  /** Loopback canary servers: any request reaching them is a failure. */
  canaryPort: number;
  canaryV6Port: number | null;
  /** An absolute folder outside the recordings folder, for absolute-path channel IDs. */
  outsideDir: string;
}

export interface FuzzRequest {
  category: string;
  method: string;
  /** Path and query sent on the request line. */
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
  /** Send the body with chunked encoding (no Content-Length). */
  chunked?: boolean;
}

/** Redirect kinds of the evil origin whose target the downloader must refuse. */
export const REFUSED_REDIRECTS = [
  'canary',
  'canary-localhost',
  'canary-v6',
  'canary-decimal',
  'canary-hex',
  'canary-short',
  'canary-mapped-v6',
  'canary-userinfo',
  'canary-protocol-relative',
  'canary-backslashes',
  'metadata',
  'metadata-v6',
  'private-10',
  'private-192',
  'file',
  'ftp',
  'data',
  'javascript',
  'creds-same-origin',
  'chain-to-canary',
  'loop',
] as const;
export type RedirectKind = (typeof REFUSED_REDIRECTS)[number];

/** The Location the evil origin answers for a redirect kind (`hop` counts loop hops). */
export function redirectLocation(kind: string, t: FuzzTargets, hop: number): string | null {
  const c = t.canaryPort;
  const evil = new URL(t.evilOrigin);
  switch (kind) {
    case 'canary':
      return `http://127.0.0.1:${c}/stolen`;
    case 'canary-localhost':
      return `http://localhost:${c}/stolen`;
    case 'canary-v6':
      return `http://[::1]:${t.canaryV6Port ?? c}/stolen`;
    case 'canary-decimal':
      return `http://2130706433:${c}/stolen`;
    case 'canary-hex':
      return `http://0x7f.0.0.1:${c}/stolen`;
    case 'canary-short':
      return `http://127.1:${c}/stolen`;
    case 'canary-mapped-v6':
      return `http://[::ffff:127.0.0.1]:${c}/stolen`;
    case 'canary-userinfo':
      return `http://${evil.host}@127.0.0.1:${c}/stolen`;
    case 'canary-protocol-relative':
      return `//127.0.0.1:${c}/stolen`;
    case 'canary-backslashes':
      return `\\\\127.0.0.1:${c}\\stolen`;
    case 'metadata':
      return 'http://169.254.169.254/latest/meta-data/iam/security-credentials/';
    case 'metadata-v6':
      return 'http://[fd00:ec2::254]/latest/meta-data/';
    case 'private-10':
      return 'http://10.0.0.1/admin';
    case 'private-192':
      return 'http://192.168.1.1/';
    case 'file':
      return 'file:///etc/passwd';
    case 'ftp':
      return `ftp://127.0.0.1:${c}/stolen`;
    case 'data':
      return 'data:video/mp4;base64,AAAAIGZ0eXBpc29t';
    case 'javascript':
      return 'javascript:alert(1)';
    case 'creds-same-origin':
      return `http://user:password@${evil.host}/ok/0/creds.mp4`;
    case 'chain-to-canary':
      return `/r/canary/0/chain.mp4`;
    case 'loop':
      return `/r/loop/${hop + 1}/loop.mp4`;
    default:
      return null;
  }
}

/** Channel IDs as hostile as the docs allow (and beyond): traversal, device names, controls, bidi, length. */
export function hostileIds(t: FuzzTargets): string[] {
  return [
    'plain_1581324488053_Dc5aQ',
    '../../../../outside/traversal',
    '..\\..\\..\\..\\outside\\backslash',
    `${t.outsideDir}/absolute`,
    'C:\\Windows\\System32\\drivers\\etc\\hosts',
    '\\\\server\\share\\unc',
    'CON',
    'nul',
    'COM1.mp4',
    'LPT9',
    'aux.txt',
    'ＣＯＮ',
    'con .',
    '.',
    '..',
    '...',
    ' ',
    'a\u0000b',
    'evil\u202Egnp4.exe',
    'line\nbreak',
    'carriage\rreturn',
    'tab\there',
    '%2e%2e%2f%2e%2e%2foutside',
    'x'.repeat(1025),
    'y'.repeat(300),
    '한국어-채널',
    '🎥'.repeat(120),
    'a:b;c*$`',
    '<script>alert(1)</script>',
    'trailing.',
    ' leading',
    '\uD800lone',
    '"quoted"',
    '?query#hash',
    '${jndi:ldap://127.0.0.1/x}',
    'name.part',
    'name.mp4.part.json',
    'inbox.jsonl',
  ];
}

/** Percent-encodes; a lone surrogate becomes the invalid UTF-8 escape `%ED%A0%80`, itself a hostile input. */
function enc(text: string): string {
  return text
    .split(/([\uD800-\uDBFF][\uDC00-\uDFFF])|([\uD800-\uDFFF])/u)
    .filter((part): part is string => part !== undefined && part !== '')
    .map((part) => (/^[\uD800-\uDFFF]$/u.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function form(pairs: [string, string][]): Buffer {
  const params = new URLSearchParams();
  for (const [k, v] of pairs) params.append(k, v);
  return Buffer.from(params.toString());
}

/**
 * Yields `count` requests for `t`, deterministic for `seed`. Lazy, so the huge bodies are garbage as soon as
 * they are sent and the memory measured by the fuzzer is the receiver's, not the generator's.
 */
export function* generateRequests(seed: number, count: number, t: FuzzTargets): Generator<FuzzRequest> {
  const rng = new Rng(seed);
  const ids = hostileIds(t);
  const pick = <T>(list: readonly T[]): T => list[rng.int(0, list.length - 1)] as T;
  const hook = t.hookPath;
  const c = t.canaryPort;

  // A bounded pool of allowed URLs: most webhooks repeat one (duplicates), so downloads stay a few hundred.
  // Some allowed URLs end in an executable or page extension: the bytes are anyone's (issue 10, finding 4), and
  // the saved file must still be a media name (the spec checks every name in the folder).
  const RISKY_EXTENSIONS = ['.exe', '.desktop', '.hta', '.lnk', '.html', '.sh'];
  const okUrl = () => {
    const n = rng.int(0, 59);
    const ext = n % 4 === 3 ? (RISKY_EXTENSIONS[n % RISKY_EXTENSIONS.length] as string) : '.mp4';
    return `${t.evilOrigin}/ok/${n}/${enc(ids[n % ids.length] as string)}${ext}`;
  };
  const redirectUrl = () => `${t.evilOrigin}/r/${pick(REFUSED_REDIRECTS)}/${rng.int(0, 2)}/${enc(pick(ids))}.mp4`;
  const goneUrl = () => `${t.evilOrigin}/gone/${rng.int(0, 9)}/gone.mp4`;
  const allowedUrl = () => {
    const r = rng.next();
    return r < 0.7 ? okUrl() : r < 0.9 ? redirectUrl() : goneUrl();
  };
  const evil = new URL(t.evilOrigin);
  const disallowedUrls = [
    `http://127.0.0.1:${c}/svc/x/canary.mp4`,
    `http://localhost:${c}/canary.mp4`,
    `http://[::1]:${t.canaryV6Port ?? c}/canary.mp4`,
    `http://2130706433:${c}/canary.mp4`,
    `http://0x7f000001:${c}/canary.mp4`,
    `http://127.1:${c}/canary.mp4`,
    `http://0.0.0.0:${c}/canary.mp4`,
    `http://[::ffff:7f00:1]:${c}/canary.mp4`,
    `http://${evil.host}@127.0.0.1:${c}/canary.mp4`,
    `http://user:pass@${evil.host}/ok/1/creds.mp4`,
    `http://:@${evil.host}/ok/1/emptycreds.mp4`,
    `https://${evil.host}/ok/1/wrong-scheme.mp4`,
    `http://${evil.hostname}:${Number(evil.port) + 1}/ok/1/wrong-port.mp4`,
    `http://${evil.host}.evil.example/ok/1/suffix.mp4`,
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/x.mp4',
    'http://[fd00::1]/x.mp4',
    'http://10.1.2.3/x.mp4',
    'http://172.16.0.1/x.mp4',
    'http://192.168.0.10/x.mp4',
    'http://100.64.0.1/x.mp4',
    'http://224.0.0.1/x.mp4',
    'http://255.255.255.255/x.mp4',
    'https://evil.example/svc/rand/evil.mp4',
    'https://s3.amazonaws.com.evil.example/x.mp4',
    'file:///etc/passwd',
    'file://localhost/etc/shadow',
    `ftp://127.0.0.1:${c}/x.mp4`,
    `gopher://127.0.0.1:${c}/_GET`,
    'javascript:alert(document.domain)',
    'data:video/mp4;base64,AAAA',
    'blob:http://127.0.0.1/uuid',
    `ws://127.0.0.1:${c}/`,
    `//127.0.0.1:${c}/relative.mp4`,
    '/svc/relative.mp4',
    `http://127.0.0.1:${c}\\@${evil.host}/backslash.mp4`,
    `http://${evil.hostname}\t:${c}/tab.mp4`,
    `http://127.0.0.1:${c}#@${evil.host}/fragment.mp4`,
    `http://${'a'.repeat(9000)}.example/long.mp4`,
  ];

  // Every documented shape, carrying `url` and (sometimes) a hostile channel ID.
  const shapes: ((url: string, id: string | null) => Omit<FuzzRequest, 'category'>)[] = [
    (url, id) => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json' },
      body: json({
        ...(id === null ? {} : { id }),
        url,
        duration: '61',
        filesize: String(rng.int(0, 99999)),
        thumbnail: 'x',
      }),
    }),
    (url, id) => ({
      method: 'GET',
      path: `${hook}?${id === null ? '' : `chid=${enc(id)}&`}url=${enc(url)}`,
      headers: {},
      body: null,
    }),
    (url, id) => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: json({ remotemonster: { ...(id === null ? {} : { channelId: id }), payload: { url } } }),
    }),
    (url, id) => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form([...(id === null ? [] : [['w[channelId]', id] as [string, string]]), ['w[payload][url]', url]]),
    }),
    (url, id) => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form([...(id === null ? [] : [['channel', id] as [string, string]]), ['payload', JSON.stringify({ url })]]),
    }),
    (url, id) => ({
      method: 'POST',
      path: hook,
      headers: {},
      body: json({ ...(id === null ? {} : { chid: id }), payload: { url } }),
    }),
  ];
  const anyShape = (url: string) => pick(shapes)(url, rng.next() < 0.2 ? null : pick(ids));

  const deepJson = (depth: number, open: string, close: string) =>
    Buffer.from(open.repeat(depth) + close.repeat(depth));
  const malformed: (() => Buffer)[] = [
    () => Buffer.from('{"url": "http://x'),
    () => Buffer.from('{url: 1}'),
    () => Buffer.from('{"url":"a",}'),
    () => Buffer.from('\uFEFF{"url":'),
    () => Buffer.from('[]'),
    () => Buffer.from('null'),
    () => Buffer.from('"just a string"'),
    () => Buffer.from('12345'),
    () => Buffer.from('{"__proto__":{"url":"http://127.0.0.1/x.mp4"}}'),
    () => Buffer.from(`{"constructor":{"prototype":{"url":"${okUrl()}"}}}`),
    () => deepJson(rng.int(1000, 30_000), '[', ']'),
    () => deepJson(rng.int(1000, 10_000), '{"a":', '}'),
    () => Buffer.from(`{"a":${'{"a":'.repeat(5000)}{"url":"${okUrl()}"}${'}'.repeat(5000)}}`),
    () => Buffer.from(`{"url":"${okUrl()}"${',"x":1'.repeat(5000)}}`),
    () => Buffer.from(`{"url":"${okUrl()}","url":"http://127.0.0.1:${c}/dup-key.mp4"}`),
    () => Buffer.from(Array.from({ length: rng.int(1, 2000) }, () => rng.int(0, 255))),
    () => Buffer.from('{"url":"\\ud800\\udc00\\ud800"}'),
  ];

  const bodyTypes = [
    'text/plain',
    'application/octet-stream',
    'application/vnd.api+json',
    'APPLICATION/JSON',
    'application/json; charset=utf-16le',
    'application/json; charset=latin1',
    'multipart/form-data; boundary=x',
    'text/html',
    'application/xml',
    'image/png',
    'application/x-www-form-urlencoded; charset=shift_jis',
    ';;;',
    'application/json\u00e9',
  ];

  const structural: (() => Omit<FuzzRequest, 'category'>)[] = [
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json' },
      body: json({ url: [okUrl()] }),
    }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json' },
      body: json({ url: { href: okUrl() } }),
    }),
    () => ({ method: 'POST', path: hook, headers: { 'content-type': 'application/json' }, body: json({ url: 12345 }) }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json' },
      body: json({ url: null, id: 'x' }),
    }),
    () => ({ method: 'POST', path: hook, headers: { 'content-type': 'application/json' }, body: json({ url: '   ' }) }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json' },
      body: json({ id: pick(ids) }),
    }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json' },
      body: json({ a: { url: okUrl() }, b: { url: `http://127.0.0.1:${c}/second.mp4` } }),
    }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json' },
      body: json({
        url: okUrl(),
        id: rng.int(0, 1e9),
        // '9007199254740991': an absurd but valid size, which once read as "disk full" for ever (finding 6).
        filesize: pick([-1, 1e300, '1e3', 'NaN', [], {}, true, '9'.repeat(40), '9007199254740991']),
      }),
    }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json' },
      body: json({ url: okUrl(), duration: 'd'.repeat(10_000), thumbnail: { x: 1 } }),
    }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form([['a[b][c][d][url]', okUrl()]]),
    }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.from(`url=%E0%A4%A&id=%%%&url=${enc(okUrl())}`),
    }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form([
        ['__proto__[url]', okUrl()],
        ['constructor[prototype][url]', okUrl()],
      ]),
    }),
    () => ({
      method: 'POST',
      path: `${hook}?url=${enc(okUrl())}&url=${enc(`http://127.0.0.1:${c}/x.mp4`)}`,
      headers: {},
      body: null,
    }),
    () => ({ method: 'POST', path: hook, headers: { 'content-type': 'application/json' }, body: Buffer.alloc(0) }),
    () => ({
      method: 'POST',
      path: hook,
      headers: { 'content-type': 'application/json' },
      body: json({ url: `${okUrl()}?${'q'.repeat(9000)}` }),
    }),
  ];

  const methods = ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'CONNECT_X'];
  const token = hook.split('/')[2] ?? '';
  const pathJunk = [
    `/hooks/${token.slice(0, -1)}`,
    `/hooks/${token}x`,
    `/hooks/${token.toUpperCase()}`,
    `/hooks/${token}/extra`,
    `/hooks/${token}/../../etc/passwd`,
    `/hooks/../healthz/${token}`,
    '/hooks/',
    '/hooks',
    '/',
    '/favicon.ico',
    `/HOOKS/${token}`,
    `/hooks/%2e%2e/${token}`,
    `/hooks/${enc(token)}%00`,
    `/uploads/${token}`,
    `/${'a'.repeat(6000)}`,
    `${hook}?${'a=1&'.repeat(2000)}`,
    `${hook}#fragment`,
  ];

  for (let i = 0; i < count; i++) {
    const r = rng.next();
    if (r < 0.25) {
      yield { category: 'valid-shapes', ...anyShape(allowedUrl()) };
    } else if (r < 0.35) {
      yield { category: 'redirect-urls', ...anyShape(redirectUrl()) };
    } else if (r < 0.55) {
      yield { category: 'disallowed-origins', ...anyShape(pick(disallowedUrls)) };
    } else if (r < 0.65) {
      yield {
        category: 'malformed-json',
        method: 'POST',
        path: hook,
        headers: { 'content-type': rng.next() < 0.8 ? 'application/json' : 'text/plain' },
        body: pick(malformed)(),
      };
    } else if (r < 0.68) {
      const size = rng.int(64 * 1024 + 1, 1024 * 1024);
      yield {
        category: 'huge-bodies',
        method: 'POST',
        path: hook,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(`{"url":"${okUrl()}","pad":"${'p'.repeat(size)}"}`),
        chunked: rng.next() < 0.5,
      };
    } else if (r < 0.78) {
      const type = pick(bodyTypes);
      const base = anyShape(allowedUrl());
      const body =
        type.includes('utf-16') && base.body
          ? Buffer.from(base.body.toString('utf8'), 'utf16le')
          : (base.body ?? json({ url: okUrl() }));
      const headers: Record<string, string> = { 'content-type': type };
      if (rng.next() < 0.2) headers['content-encoding'] = pick(['gzip', 'br', 'identity', 'x-unknown']);
      yield { category: 'odd-encodings', method: 'POST', path: hook, headers, body };
    } else if (r < 0.88) {
      yield { category: 'structure-junk', ...pick(structural)() };
    } else if (r < 0.95) {
      const junkMethod = rng.next() < 0.5;
      yield {
        category: 'method-path-token',
        method: junkMethod ? pick(methods) : pick(['GET', 'POST']),
        path: junkMethod ? hook : pick(pathJunk),
        headers: { 'content-type': 'application/json' },
        body: junkMethod && rng.next() < 0.5 ? json({ url: okUrl() }) : null,
      };
    } else {
      // Header junk: huge, duplicated and odd headers around an otherwise valid webhook.
      const base = anyShape(okUrl());
      const headers = { ...base.headers };
      const which = rng.int(0, 3);
      if (which === 0) headers['x-junk'] = 'j'.repeat(rng.int(1000, 12_000));
      if (which === 1) headers['transfer-encoding'] = 'gzip';
      if (which === 2)
        headers['content-type'] = `${headers['content-type'] ?? 'application/json'}; boundary="${'b'.repeat(500)}"`;
      if (which === 3) headers.cookie = `session=${'c'.repeat(4000)}`;
      yield { category: 'header-junk', ...base, headers };
    }
  }
}

/** Raw bytes that are not valid HTTP at all, sent on their own sockets. */
export function rawGarbage(seed: number, hookPath: string): Buffer[] {
  const rng = new Rng(seed ^ 0x5bd1e995);
  const fixed = [
    'GARBAGE\r\n\r\n',
    `POST ${hookPath} HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n`,
    `POST ${hookPath} HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nContent-Length: 20\r\n\r\n0123456789`,
    `POST ${hookPath} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`,
    `POST ${hookPath} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnope\r\n`,
    `GET ${hookPath} HTTP/9.9\r\n\r\n`,
    `GET ${hookPath}\u0000 HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET ${hookPath} HTTP/1.1\r\n${'X-A: b\r\n'.repeat(3000)}\r\n`,
    `GET ${hookPath} HTTP/1.1\r\nHost: x\r\nBad Header Name: y\r\n\r\n`,
    `GET ${hookPath} HTTP/1.1\nHost: x\n\n`,
    '\r\n\r\n\r\n',
    'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003',
  ].map((s) => Buffer.from(s, 'latin1'));
  const random = Array.from({ length: 30 }, () =>
    Buffer.from(Array.from({ length: rng.int(1, 4000) }, () => rng.int(0, 255))),
  );
  return [...fixed, ...random];
}
