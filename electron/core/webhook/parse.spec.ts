import { describe, expect, it } from 'vitest';
import { WebhookRejection, parseWebhook } from './parse.js';
import type { ParsedWebhook, WebhookRequestParts } from './parse.js';

const URL_NEW = 'https://s3.amazonaws.com/svc-1/AbC123/1581324488053_Dc5aQ.mp4';
const URL_OLD = 'https://s3.amazonaws.com/svc-1/20200110.mp4';

function post(body: string | object, contentType: string | undefined = 'application/json', query = ''): ParsedWebhook {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return parseWebhook({ method: 'POST', query: new URLSearchParams(query), contentType, body: Buffer.from(text) });
}

function get(query: string): ParsedWebhook {
  return parseWebhook({
    method: 'GET',
    query: new URLSearchParams(query),
    contentType: undefined,
    body: Buffer.alloc(0),
  });
}

function rejection(parts: () => unknown): WebhookRejection {
  try {
    parts();
  } catch (error) {
    if (error instanceof WebhookRejection) return error;
    throw error;
  }
  throw new Error('expected a WebhookRejection');
}

describe('parseWebhook: accepted shapes', () => {
  it('reads the current docs shape (flat JSON, every value a string)', () => {
    const parsed = post({
      id: '1581324488053_Dc5aQ',
      url: URL_NEW,
      duration: '00:12:01',
      filesize: '1048576',
      thumbnail: 'https://s3.amazonaws.com/svc-1/AbC123/thumb.jpg',
    });
    expect(parsed).toEqual({
      channelId: '1581324488053_Dc5aQ',
      url: URL_NEW,
      // Parsed once here; the origin check and the journal's keys read this one (issue 22).
      parsedUrl: new URL(URL_NEW),
      announcedBytes: 1048576,
      duration: '00:12:01',
      thumbnail: 'https://s3.amazonaws.com/svc-1/AbC123/thumb.jpg',
      shape: 'json',
      warnings: [],
    });
  });

  it('reads the older GET shape from the query string', () => {
    const parsed = get(`chid=20200110&url=${encodeURIComponent(URL_OLD)}`);
    expect(parsed).toMatchObject({ channelId: '20200110', url: URL_OLD, shape: 'get', announcedBytes: null });
  });

  it("reads the spec's wrapping object in JSON", () => {
    const parsed = post({ remotemonster: { channel: 'ch-spec', payload: { url: URL_NEW, filesize: 42 } } });
    expect(parsed).toMatchObject({ channelId: 'ch-spec', url: URL_NEW, shape: 'spec', announcedBytes: 42 });
  });

  it('reads payload.url at the top level', () => {
    expect(post({ channelId: 'c1', payload: { url: URL_NEW } })).toMatchObject({ channelId: 'c1', shape: 'spec' });
  });

  it('finds the channel ID inside payload when the wrapper holds only the URL there', () => {
    expect(post({ svc: { payload: { url: URL_NEW, chid: 'inner' } } })).toMatchObject({ channelId: 'inner' });
  });

  it.each([
    ['bracket keys', 'svc[channel]=ch-form&svc[payload][url]=', 'spec'],
    ['dotted keys', 'channel=ch-form&payload.url=', 'spec'],
    ['top-level bracket payload', 'channel=ch-form&payload[url]=', 'spec'],
    ['flat fields', 'channel=ch-form&url=', 'form'],
  ])('reads URL-encoded bodies with %s', (_name, prefix, shape) => {
    const parsed = post(`${prefix}${encodeURIComponent(URL_NEW)}`, 'application/x-www-form-urlencoded');
    expect(parsed).toMatchObject({ channelId: 'ch-form', url: URL_NEW, shape });
  });

  it('reads a URL-encoded field carrying the spec object as JSON text', () => {
    const wrapped = encodeURIComponent(JSON.stringify({ channel: 'ch-json-field', payload: { url: URL_NEW } }));
    expect(post(`svc=${wrapped}`, 'application/x-www-form-urlencoded')).toMatchObject({
      channelId: 'ch-json-field',
      shape: 'spec',
    });
    const payload = encodeURIComponent(JSON.stringify({ url: URL_NEW }));
    expect(post(`id=x1&payload=${payload}`, 'application/x-www-form-urlencoded')).toMatchObject({
      channelId: 'x1',
      shape: 'spec',
    });
  });

  it('accepts a POST whose fields are in the query string', () => {
    const parsed = post('', 'application/json', `id=q1&url=${encodeURIComponent(URL_NEW)}`);
    expect(parsed).toMatchObject({ channelId: 'q1', url: URL_NEW, shape: 'get' });
  });

  it('prefers the body, and falls back to the query when the body has no URL', () => {
    const fromBody = post(
      { id: 'body', url: URL_NEW },
      'application/json',
      `id=query&url=${encodeURIComponent(URL_OLD)}`,
    );
    expect(fromBody.channelId).toBe('body');
    const fromQuery = post({ hello: 'world' }, 'application/json', `id=query&url=${encodeURIComponent(URL_OLD)}`);
    expect(fromQuery).toMatchObject({ channelId: 'query', shape: 'get' });
  });

  it.each(['id', 'chid', 'channelId', 'channel'])('takes the channel ID from %s', (key) => {
    expect(post({ [key]: 'from-key', url: URL_NEW }).channelId).toBe('from-key');
  });

  it('takes a numeric channel ID as text', () => {
    expect(post({ chid: 20200110, url: URL_OLD }).channelId).toBe('20200110');
  });

  it('falls back to the file name of the URL, percent-decoded and without .mp4', () => {
    expect(post({ url: URL_NEW }).channelId).toBe('1581324488053_Dc5aQ');
    expect(post({ url: 'https://s3.amazonaws.com/s/r/my%20show%F0%9F%8E%A5.MP4' }).channelId).toBe('my show🎥');
    expect(post({ url: 'https://s3.amazonaws.com/s/r/bad%E0%A4%A.mp4' }).channelId).toBe('bad%E0%A4%A');
    expect(post({ id: '   ', url: URL_NEW }).channelId).toBe('1581324488053_Dc5aQ');
  });

  it('sniffs JSON or form when the content type is missing or text/plain', () => {
    expect(post({ id: 'sniff', url: URL_NEW }, undefined).shape).toBe('json');
    expect(post(`id=sniff&url=${encodeURIComponent(URL_NEW)}`, 'text/plain').shape).toBe('form');
    expect(
      post(`\uFEFF${JSON.stringify({ id: 'bom', url: URL_NEW })}`, 'application/json; charset=utf-8').channelId,
    ).toBe('bom');
  });

  it('keeps a hostile channel ID as text (it is sanitised where it becomes a file name)', () => {
    const hostile = '../../etc/passwd;$`\u0000';
    expect(post({ id: hostile, url: URL_NEW }).channelId).toBe(hostile);
  });

  it('ignores a channel ID over 256 characters (the flood sent 900) and uses the file name, with a warning', () => {
    expect(post({ id: 'x'.repeat(256), url: URL_NEW }).channelId).toBe('x'.repeat(256));
    const parsed = post({ id: 'x'.repeat(900), url: URL_NEW });
    expect(parsed.channelId).toBe('1581324488053_Dc5aQ');
    expect(parsed.warnings.join()).toMatch(/longer than 256/);
  });

  it('refuses a recording URL over 4096 characters (the flood sent 8,000)', () => {
    const long = `https://s3.amazonaws.com/svc/${'a'.repeat(8000)}/x.mp4`;
    expect(() => post({ id: 'c', url: long })).toThrow(/longer than 4096 characters/);
  });
});

describe('parseWebhook: optional fields', () => {
  it.each([
    ['0', 0],
    [' 123 ', 123],
    [9007199254740991, 9007199254740991],
    [77, 77],
  ])('accepts filesize %j', (filesize, bytes) => {
    expect(post({ id: 'c', url: URL_NEW, filesize }).announcedBytes).toBe(bytes);
  });

  it.each([['-1'], ['12.5'], ['1e6'], ['abc'], [-3], [1.5], ['99999999999999999'], [{}], [true]])(
    'ignores an invalid filesize %j and records why',
    (filesize) => {
      const parsed = post({ id: 'c', url: URL_NEW, filesize });
      expect(parsed.announcedBytes).toBeNull();
      expect(parsed.warnings).toHaveLength(1);
      expect(parsed.warnings[0]).toMatch(/^filesize .* ignored: not a byte count$/);
    },
  );

  it('keeps duration and thumbnail as short text and drops oversized ones', () => {
    expect(post({ id: 'c', url: URL_NEW, duration: 61.5 }).duration).toBe('61.5');
    const long = post({ id: 'c', url: URL_NEW, duration: 'd'.repeat(65), thumbnail: 't'.repeat(5000) });
    expect([long.duration, long.thumbnail]).toEqual([null, null]);
    expect(long.warnings).toHaveLength(2);
    expect(post({ id: 'c', url: URL_NEW, duration: '', thumbnail: null }).warnings).toEqual([]);
  });
});

describe('parseWebhook: rejections', () => {
  const cases: [string, () => unknown, number, RegExp][] = [
    ['bad JSON', () => post('{"id": "x", "url": ', 'application/json'), 400, /not valid JSON/],
    ['a JSON array', () => post('[1,2]', 'application/json'), 400, /not an object/],
    ['a JSON string', () => post('"https://x"', 'application/json'), 400, /not an object/],
    ['JSON null', () => post('null', 'application/json'), 400, /not an object/],
    ['no URL', () => post({ id: 'x' }), 400, /no recording URL/],
    ['an empty POST', () => post('', 'application/json'), 400, /no recording URL/],
    ['a GET without query', () => get(''), 400, /no recording URL/],
    ['a non-string URL', () => post({ id: 'x', url: 42 }), 400, /no recording URL/],
    ['a URL nested two objects deep', () => post({ a: { b: { url: URL_NEW } } }), 400, /no recording URL/],
    ['a relative URL', () => post({ id: 'x', url: '/svc/x.mp4' }), 400, /not a valid absolute URL/],
    ['a URL with no file name', () => post({ url: 'https://s3.amazonaws.com/' }), 400, /no channel ID/],
    ['an overlong URL', () => post({ id: 'x', url: `https://s3.amazonaws.com/${'a'.repeat(9000)}` }), 400, /longer/],
    ['a multipart body', () => post('--b\r\n', 'multipart/form-data; boundary=b'), 415, /not supported/],
    [
      'two different wrapped URLs',
      () => post({ a: { url: URL_NEW }, b: { url: URL_OLD } }),
      400,
      /more than one recording URL/,
    ],
    [
      'a PUT',
      () =>
        parseWebhook({ method: 'PUT', query: new URLSearchParams(), contentType: undefined, body: Buffer.alloc(0) }),
      405,
      /method/,
    ],
  ];
  it.each(cases)('rejects %s', (_name, attempt, status, reason) => {
    const error = rejection(attempt);
    expect(error.status).toBe(status);
    expect(error.reason).toMatch(reason);
  });

  it('survives deeply nested and huge JSON quickly', () => {
    const started = performance.now();
    const deep = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
    expect(rejection(() => post(deep)).status).toBe(400);
    const deepObject = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    expect(rejection(() => post(deepObject)).reason).toMatch(/no recording URL/);
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, { v: i }])));
    expect(rejection(() => post(wide)).reason).toMatch(/no recording URL/);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('is not fooled by prototype keys in JSON or forms', () => {
    const json = post('{"__proto__": {"url": "https://evil.example.com/x.mp4"}, "id": "p", "url": "' + URL_NEW + '"}');
    expect(json.url).toBe(URL_NEW);
    expect(rejection(() => post('__proto__[url]=https%3A%2F%2Fevil.example.com%2Fx.mp4', 'text/plain')).status).toBe(
      400,
    );
    expect(({} as Record<string, unknown>).url).toBeUndefined();
    expect(rejection(() => post({ constructor: { prototype: { url: 'x' } } })).reason).toMatch(/no recording URL/);
  });

  it('takes the first value of a repeated form key', () => {
    const parsed = post(
      `id=first&id=second&url=${encodeURIComponent(URL_NEW)}&url=${encodeURIComponent(URL_OLD)}`,
      'application/x-www-form-urlencoded',
    );
    expect([parsed.channelId, parsed.url]).toEqual(['first', URL_NEW]);
  });
});

it('parts type matches what the receiver passes', () => {
  const parts: WebhookRequestParts = {
    method: 'post',
    query: new URLSearchParams(),
    contentType: 'APPLICATION/JSON',
    body: Buffer.from(JSON.stringify({ id: 'lower', url: URL_NEW })),
  };
  expect(parseWebhook(parts).channelId).toBe('lower');
});
