import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseMediaType } from './media-type.js';
import { MultipartError, multipartBoundary, readMultipartFile, type FilePart } from './multipart.js';

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

/** Yields `input` in the given chunk sizes (cycled). */
async function* chunks(input: Buffer, sizes: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (let i = 0; at < input.length; i += 1) {
    const size = sizes[i % sizes.length] as number;
    yield input.subarray(at, at + size);
    at += size;
  }
}

/** Reads a body and collects the file part and its bytes. */
async function collect(source: AsyncIterable<Buffer>): Promise<{ part: FilePart | null; data: Buffer }> {
  let part: FilePart | null = null;
  const data: Buffer[] = [];
  for await (const event of readMultipartFile(source, B)) {
    if (event.type === 'file') part = event.part;
    else data.push(Buffer.from(event.chunk));
  }
  return { part, data: Buffer.concat(data) };
}

const run = (input: Buffer, sizes: number[]): ReturnType<typeof collect> => collect(chunks(input, sizes));

describe('readMultipartFile', () => {
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

  it('finds the file and its exact bytes wherever the chunks split (every split point of a small body)', async () => {
    for (let size = 1; size <= 80; size += 1) {
      const { part, data } = await run(input, [size]);
      expect(part).toMatchObject({ fieldName: 'file', fileName: 'take.webm' });
      expect(part?.contentType?.essence).toBe('audio/webm');
      expect(data.equals(tricky)).toBe(true);
    }
    for (let cut = 1; cut < input.length; cut += 1) {
      const { data } = await run(input, [cut, input.length]);
      expect(data.equals(tricky)).toBe(true);
    }
  });

  it('holds back at most a delimiter length while streaming, and reads on only once it is handed on', async () => {
    let sent = 0;
    let received = 0;
    let pulls = 0;
    async function* source(): AsyncGenerator<Buffer> {
      yield Buffer.from(`--${B}\r\n${fileHeaders().join('\r\n')}\r\n\r\n`);
      // The body never closes: every byte checked here was handed on before the source ended.
      for (let i = 0; i < 100; i += 1) {
        expect(sent - received).toBeLessThanOrEqual(`\r\n--${B}`.length);
        pulls += 1;
        sent += 10_000;
        yield randomBytes(10_000);
      }
      expect(sent - received).toBeLessThanOrEqual(`\r\n--${B}`.length);
    }
    const reading = (async () => {
      for await (const event of readMultipartFile(source(), B))
        if (event.type === 'data') received += event.chunk.length;
    })();
    await expect(reading).rejects.toThrow(/closing boundary/);
    expect(pulls).toBe(100);
  });

  // busboy does not read a padded delimiter as one, so the padded part is skipped like one without headers;
  // no browser pads, and a padded file part would be refused as missing.
  it('accepts a body that starts with the boundary, transport padding and a part without headers', async () => {
    const raw = Buffer.from(
      `--${B}  \t\r\n\r\nfield\r\n--${B}\r\nContent-Disposition: form-data; name=f; filename=a.ogg\r\nContent-Type: audio/ogg\r\n\r\nOGG\r\n--${B}--`,
    );
    const { part, data } = await run(raw, [7]);
    expect(part?.fileName).toBe('a.ogg');
    expect(data.toString()).toBe('OGG');
  });

  it('reads UTF-8 names, prefers filename* and keeps backslashes', async () => {
    const utf8 = await run(body([{ headers: fileHeaders('녹음 1.webm'), data: 'x' }]), [5]);
    expect(utf8.part?.fileName).toBe('녹음 1.webm');
    const extended = await run(
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
    expect((await run(body([{ headers: fileHeaders('a\\b.webm'), data: 'x' }]), [64])).part?.fileName).toBe(
      'a\\b.webm',
    );
  });

  // busboy's rule: a file name or application/octet-stream makes a part the file; anything else is a text field.
  it('treats an application/octet-stream part without a file name as the file, and drops other nameless parts', async () => {
    const { part } = await run(
      body([
        { headers: ['Content-Disposition: form-data; name="f"', 'Content-Type: application/octet-stream'], data: 'x' },
      ]),
      [64],
    );
    expect(part).toMatchObject({ fieldName: 'f', fileName: null });
    const nameless = body([
      { headers: ['Content-Disposition: form-data; name="f"', 'Content-Type: audio/webm'], data: 'x' },
    ]);
    await expect(run(nameless, [64])).rejects.toThrow(/no file part/);
  });

  it('reports a file part without Content-Type as text/plain, the multipart default', async () => {
    const { part } = await run(
      body([{ headers: ['Content-Disposition: form-data; name="f"; filename="a.webm"'], data: 'x' }]),
      [64],
    );
    expect(part?.contentType?.essence).toBe('text/plain');
  });

  it('passes errors of the source through and tells a source left early', async () => {
    const boom = new Error('connection reset');
    async function* failing(): AsyncGenerator<Buffer> {
      yield input.subarray(0, 200);
      throw boom;
    }
    await expect(collect(failing())).rejects.toBe(boom);
    let returned = false;
    async function* endless(): AsyncGenerator<Buffer> {
      try {
        yield input;
        for (;;) yield randomBytes(1000);
      } finally {
        returned = true;
      }
    }
    for await (const event of readMultipartFile(endless(), B)) if (event.type === 'file') break;
    expect(returned).toBe(true);
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
    ['garbage after a boundary', Buffer.from(`--${B}xx\r\n\r\n`), /closing boundary/],
    ['oversized headers', Buffer.from(`--${B}\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\n`), /headers/],
    [
      'an oversized text field',
      body([{ headers: ['Content-Disposition: form-data; name="a"'], data: 'a'.repeat(70_000) }]),
      /field is larger/,
    ],
    [
      'more than 20 parts',
      body([
        ...Array.from({ length: 20 }, () => ({ headers: ['Content-Disposition: form-data; name="a"'], data: 'a' })),
        { headers: fileHeaders(), data: 'x' },
      ]),
      /more than 20 parts/,
    ],
  ])('refuses %s', async (_what, raw, message) => {
    await expect(run(raw, [1000])).rejects.toThrow(MultipartError);
    await expect(run(raw, [1000])).rejects.toThrow(message);
  });

  it('accepts 20 parts', async () => {
    const raw = body([
      ...Array.from({ length: 19 }, () => ({ headers: ['Content-Disposition: form-data; name="a"'], data: 'a' })),
      { headers: fileHeaders(), data: 'x' },
    ]);
    expect((await run(raw, [1000])).data.toString()).toBe('x');
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
