import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { chooseFreeName, extFromUrl, renderFileName, resolveInside, safeFileName } from './filename.js';

const HOSTILE = [
  '../../etc/passwd',
  '..',
  '.',
  '...',
  '',
  '   ',
  'CON',
  'con.mp4',
  'Lpt1',
  'COM9.tar.gz',
  'aux ',
  'NUL.',
  'a/b\\c',
  'x'.repeat(1024),
  'é'.repeat(300),
  '🎥'.repeat(100),
  'live\u202Egnp.exe',
  'bell\u0007and\nnewline\ttab',
  '<>:"|?*',
  'name. . ',
  '.hidden',
  'e\u0301te',
  'lone\uD800surrogate',
  '1581324488053_Dc5aQ',
];

function isWellFormedUtf16(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

describe('safeFileName', () => {
  it('leaves an ordinary channel ID unchanged', () => {
    expect(safeFileName('1581324488053_Dc5aQ')).toBe('1581324488053_Dc5aQ');
    expect(safeFileName('Morning show 2024')).toBe('Morning show 2024');
  });

  it.each(HOSTILE)('makes %j a single portable name', (input) => {
    const name = safeFileName(input);
    expect(name).not.toBe('');
    // eslint-disable-next-line no-control-regex -- asserting their absence
    expect(name).not.toMatch(/[/\\<>:"|?*\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/u);
    expect(name).not.toMatch(/^\.|[. ]$/);
    expect(name.split('.')[0]?.trimEnd()).not.toMatch(/^(con|prn|aux|nul|com\d|lpt\d)$/i);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(200);
    expect(name).toBe(name.normalize('NFC'));
    expect(isWellFormedUtf16(name)).toBe(true);
    // Idempotent: a safe name stays as it is.
    expect(safeFileName(name)).toBe(name);
  });

  it('tags changed names with a hash of the original, so different IDs stay different', () => {
    expect(safeFileName('a/b')).not.toBe(safeFileName('a_b'));
    expect(safeFileName('a/b')).toMatch(/^a_b-[0-9a-f]{8}$/);
    expect(safeFileName('CON')).toMatch(/^_CON-[0-9a-f]{8}$/);
    const long1 = `${'x'.repeat(1000)}1`;
    const long2 = `${'x'.repeat(1000)}2`;
    expect(safeFileName(long1)).not.toBe(safeFileName(long2));
    expect(safeFileName('')).toMatch(/^recording-[0-9a-f]{8}$/);
    expect(safeFileName('..')).toMatch(/^recording-[0-9a-f]{8}$/);
  });

  it('cuts multi-byte text on character boundaries within the byte budget', () => {
    const emoji = safeFileName('🎥'.repeat(100), { maxBytes: 50 });
    expect(Buffer.byteLength(emoji)).toBeLessThanOrEqual(50);
    expect(emoji).toMatch(/^(🎥)+-[0-9a-f]{8}$/u);
    const accents = safeFileName('é'.repeat(300));
    expect(Buffer.from(accents, 'utf8').toString('utf8')).toBe(accents);
    expect(accents.startsWith('é'.repeat(10))).toBe(true);
  });

  it('removes bidi overrides instead of letting them disguise the extension', () => {
    expect(safeFileName('live\u202Egnp.exe')).toMatch(/^livegnp\.exe-[0-9a-f]{8}$/);
  });

  it('normalises to NFC', () => {
    expect(safeFileName('e\u0301te').startsWith('\u00e9te')).toBe(true);
  });
});

describe('renderFileName', () => {
  const fields = { channelId: 'ch1', receivedAt: '2024-03-05T07:08:09.123Z', ext: '.mp4' };

  it('uses the channel ID by default', () => {
    expect(renderFileName(undefined, fields)).toBe('ch1.mp4');
    expect(renderFileName('', fields)).toBe('ch1.mp4');
  });

  it('fills date and time placeholders', () => {
    expect(renderFileName('{date}_{channelId}', fields, { timeZone: 'utc' })).toBe('2024-03-05_ch1.mp4');
    expect(renderFileName('{channelId} {datetime}', fields, { timeZone: 'utc' })).toBe('ch1 2024-03-05_070809.mp4');
    expect(renderFileName('{time}', fields, { timeZone: 'utc' })).toBe('070809.mp4');
    const local = new Date(fields.receivedAt);
    const pad = (n: number): string => String(n).padStart(2, '0');
    expect(renderFileName('{date}', fields)).toBe(
      `${local.getFullYear()}-${pad(local.getMonth() + 1)}-${pad(local.getDate())}.mp4`,
    );
  });

  it('sanitises values and the template: no folders, hostile IDs contained', () => {
    const name = renderFileName(
      '{date}/../{channelId}',
      { ...fields, channelId: '../../etc/passwd' },
      { timeZone: 'utc' },
    );
    expect(name).not.toContain('/');
    expect(name.endsWith('.mp4')).toBe(true);
    expect(name.startsWith('2024-03-05_.._')).toBe(true);
  });

  it('keeps the date and the extension when the ID is very long', () => {
    const name = renderFileName('{date}_{channelId}', { ...fields, channelId: 'y'.repeat(1024) }, { timeZone: 'utc' });
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(200);
    expect(name.startsWith('2024-03-05_yyy')).toBe(true);
    expect(name.endsWith('.mp4')).toBe(true);
  });

  it('drops an extension that is not plausible', () => {
    expect(renderFileName('{channelId}', { ...fields, ext: '.mp4/../x' })).toBe('ch1');
    expect(renderFileName('{channelId}', { ...fields, ext: 'WEBM' })).toBe('ch1.webm');
  });
});

describe('extFromUrl', () => {
  it('takes the extension of the last path segment', () => {
    expect(extFromUrl('https://s3.amazonaws.com/svc/rand/ch.mp4')).toBe('.mp4');
    expect(extFromUrl('https://s3.amazonaws.com/svc/rand/ch.WEBM?X-Amz-Signature=1')).toBe('.webm');
    expect(extFromUrl('https://s3.amazonaws.com/svc/rand/ch')).toBe('.mp4');
    expect(extFromUrl('not a url')).toBe('.mp4');
  });
});

describe('resolveInside', () => {
  it('returns an absolute path directly inside the folder', () => {
    expect(resolveInside('/rec', 'a.mp4')).toBe(path.resolve('/rec/a.mp4'));
  });

  it.each(['../x', '..', '.', '', 'a/b', '/etc/passwd', 'sub/../../x'])('refuses %j', (name) => {
    expect(() => resolveInside('/rec', name)).toThrow(ValidationError);
  });
});

describe('chooseFreeName', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-name-'));
  });
  afterEach(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('numbers names instead of overwriting an existing file', async () => {
    await fsp.writeFile(path.join(dir, 'show.mp4'), 'keep me');
    const first = await chooseFreeName(dir, 'show', '.mp4');
    const second = await chooseFreeName(dir, 'show', '.mp4');
    expect([first.name, second.name]).toEqual(['show (2).mp4', 'show (3).mp4']);
    expect(await fsp.readFile(path.join(dir, 'show.mp4'), 'utf8')).toBe('keep me');
    expect((await fsp.stat(first.path)).size).toBe(0);
  });

  it('gives concurrent callers distinct names (atomic reservation)', async () => {
    const results = await Promise.all(Array.from({ length: 25 }, () => chooseFreeName(dir, 'same', '.mp4')));
    expect(new Set(results.map((r) => r.path)).size).toBe(25);
    expect(await fsp.readdir(dir)).toHaveLength(25);
  });

  it('returns an existing file that isSameFile recognises', async () => {
    await fsp.writeFile(path.join(dir, 'a.mp4'), 'x');
    await fsp.writeFile(path.join(dir, 'a (2).mp4'), 'yy');
    const found = await chooseFreeName(dir, 'a', '.mp4', async (p) => (await fsp.stat(p)).size === 2);
    expect(found).toEqual({ path: path.join(dir, 'a (2).mp4'), name: 'a (2).mp4', existing: true });
  });

  it('sanitises a hostile base so the reservation stays inside the folder', async () => {
    const found = await chooseFreeName(dir, '../../escape', '.mp4');
    expect(path.dirname(found.path)).toBe(dir);
  });
});
