import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseMediaType } from './media-type.js';
import { MultipartError, MultipartParser, multipartBoundary, readMultipartFile, type FilePart } from './multipart.js';

const B = 'XyZ-boundary';

function body(
  parts: { headers: string[]; data: Buffer | string }[],
  opts: { preamble?: string; close?: boolean } = {},
): Buffer {
  const out: Buffer[] = [];
  if (opts.preamble !== undefined) out.push(Buffer.from(`${opts.preamble}\r\n`));
  parts.forEach((part, i) => {
    out.push(Buffer.from(`${i === 0 ? '' : '\r\n'}--${B}\r\n${part.headers.join('\r\n')}\r\n\r\n`));
    out.push(Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data));
  });
  if (opts.close !== false) out.push(Buffer.from(`\r\n--${B}--\r\nepilogue`));
  return Buffer.concat(out);
}

const fileHeaders = (name = 'take.webm', type = 'audio/webm'): string[] => [
  `Content-Disposition: form-data; name="file"; filename="${name}"`,
  `Content-Type: ${type}`,
];

/** Feeds `input` in the given chunk sizes (cycled) and collects the file part and its bytes. */
function run(input: Buffer, sizes: number[]): { part: FilePart | null; data: Buffer } {
  const parser = new MultipartParser(B);
  let part: FilePart | null = null;
  const data: Buffer[] = [];
  let at = 0;
  let i = 0;
  while (at < input.length) {
    const size = sizes[i % sizes.length] as number;
    i += 1;
    for (const event of parser.push(input.subarray(at, at + size))) {
      if (event.type === 'file') part = event.part;
      else data.push(Buffer.from(event.chunk));
    }
    at += size;
  }
  parser.end();
  return { part, data: Buffer.concat(data) };
}

describe('MultipartParser', () => {
  // Content full of near-delimiters: CR, LF, dashes and a boundary prefix, which must all pass through. The prefix
  // ends on a fixed byte: random bytes right after it would complete the real delimiter once in 256 runs.
  const tricky = Buffer.concat([
    Buffer.from(`\r\n--XyZ-bound\r\r\n-\r\n--${B.slice(0, -1)}Q`),
    randomBytes(3000),
    Buffer.from('\r\n-\r'),
  ]);
  const input = body(
    [
      { headers: ['Content-Disposition: form-data; name="note"'], data: 'hello' },
      { headers: fileHeaders(), data: tricky },
    ],
    { preamble: 'This is the preamble.' },
  );

  it('finds the file and its exact bytes wherever the chunks split (every split point of a small body)', () => {
    for (let size = 1; size <= 80; size += 1) {
      const { part, data } = run(input, [size]);
      expect(part).toMatchObject({ fieldName: 'file', fileName: 'take.webm' });
      expect(part?.contentType?.essence).toBe('audio/webm');
      expect(data.equals(tricky)).toBe(true);
    }
    for (let cut = 1; cut < input.length; cut += 1) {
      const { data } = run(input, [cut, input.length]);
      expect(data.equals(tricky)).toBe(true);
    }
  });

  it('holds back at most a delimiter length while streaming', () => {
    const parser = new MultipartParser(B);
    parser.push(Buffer.from(`--${B}\r\n${fileHeaders().join('\r\n')}\r\n\r\n`));
    let emitted = 0;
    for (let i = 0; i < 100; i += 1) {
      for (const event of parser.push(randomBytes(10_000))) if (event.type === 'data') emitted += event.chunk.length;
      expect((i + 1) * 10_000 - emitted).toBeLessThanOrEqual(`\r\n--${B}`.length);
    }
  });

  it('accepts a body that starts with the boundary, transport padding and a part without headers', () => {
    const raw = Buffer.from(
      `--${B}  \t\r\n\r\nfield\r\n--${B}\r\nContent-Disposition: form-data; name=f; filename=a.ogg\r\nContent-Type: audio/ogg\r\n\r\nOGG\r\n--${B}--`,
    );
    const { part, data } = run(raw, [7]);
    expect(part?.fileName).toBe('a.ogg');
    expect(data.toString()).toBe('OGG');
  });

  it('reads UTF-8 names, prefers filename* and keeps backslashes', () => {
    const utf8 = run(body([{ headers: fileHeaders('녹음 1.webm'), data: 'x' }]), [5]);
    expect(utf8.part?.fileName).toBe('녹음 1.webm');
    const extended = run(
      body([
        {
          headers: [
            `Content-Disposition: form-data; name="f"; filename="fallback.webm"; filename*=UTF-8''%E2%82%AC%20take.webm`,
            'Content-Type: audio/webm',
          ],
          data: 'x',
        },
      ]),
      [64],
    );
    expect(extended.part?.fileName).toBe('€ take.webm');
    expect(run(body([{ headers: fileHeaders('a\\b.webm'), data: 'x' }]), [64]).part?.fileName).toBe('a\\b.webm');
  });

  it('treats a part with a media type but no file name as the file (fetch with a Blob and no name)', () => {
    const { part } = run(
      body([{ headers: ['Content-Disposition: form-data; name="f"', 'Content-Type: audio/webm'], data: 'x' }]),
      [64],
    );
    expect(part).toMatchObject({ fieldName: 'f', fileName: null });
  });

  it.each([
    [
      'a second file part',
      body([
        { headers: fileHeaders(), data: 'a' },
        { headers: fileHeaders('b.webm'), data: 'b' },
      ]),
      /one file/,
    ],
    ['no file part', body([{ headers: ['Content-Disposition: form-data; name="a"'], data: 'text' }]), /no file part/],
    [
      'a missing closing boundary',
      body([{ headers: fileHeaders(), data: 'abc' }], { close: false }),
      /closing boundary/,
    ],
    ['garbage after a boundary', Buffer.from(`--${B}xx\r\n\r\n`), /line break/],
    ['oversized headers', Buffer.from(`--${B}\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\n`), /headers/],
    [
      'an oversized text field',
      body([{ headers: ['Content-Disposition: form-data; name="a"'], data: 'a'.repeat(70_000) }]),
      /field is larger/,
    ],
  ])('refuses %s', (_what, raw, message) => {
    expect(() => run(raw, [1000])).toThrow(MultipartError);
    expect(() => run(raw, [1000])).toThrow(message);
  });

  it('streams through readMultipartFile from an async source', async () => {
    async function* source(): AsyncGenerator<Buffer> {
      for (let i = 0; i < input.length; i += 333) yield input.subarray(i, i + 333);
    }
    const chunks: Buffer[] = [];
    for await (const event of readMultipartFile(source(), B)) if (event.type === 'data') chunks.push(event.chunk);
    expect(Buffer.concat(chunks).equals(tricky)).toBe(true);
  });
});

describe('multipartBoundary', () => {
  it.each([
    ['multipart/form-data; boundary=abc', 'abc'],
    ['Multipart/Form-Data; boundary="----WebKitFormBoundaryQ2x"', '----WebKitFormBoundaryQ2x'],
    ['multipart/form-data; charset=utf-8; boundary="a b"', 'a b'],
    ['multipart/form-data', null],
    ['multipart/form-data; boundary=', null],
    [`multipart/form-data; boundary=${'a'.repeat(71)}`, null],
    ['multipart/mixed; boundary=abc', null],
    ['audio/webm', null],
  ])('%s → %s', (header, expected) => {
    expect(multipartBoundary(parseMediaType(header))).toBe(expected);
  });
});
