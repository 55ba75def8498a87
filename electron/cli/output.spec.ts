import { describe, expect, it } from 'vitest';
import { BadCredentialsError, ServiceError } from '../core/errors.js';
import { displayWidth, formatBytes, formatDuration, formatError, relativeTime, table, truncate } from './output.js';

describe('formatError', () => {
  it('prints our errors as one line', () => {
    expect(formatError(new BadCredentialsError())).toMatch(/^The service rejected the service ID and secret\./);
    expect(formatError(new ServiceError(502, 'HTML page "502 Bad Gateway"', '/v1/search'))).toBe(
      'The service answered 502 for /v1/search: HTML page "502 Bad Gateway".',
    );
  });

  it('never prints the message of a foreign error, which may quote request options', () => {
    const line = formatError(new TypeError('options.json = {"secret":"s3cr3t"}'));
    expect(line).not.toContain('s3cr3t');
    expect(line).toMatch(/TypeError/);
    expect(formatError('a string')).not.toContain('a string');
    expect(formatError({ secret: 'x' })).not.toContain('x"');
  });

  it('reports aborts as cancelled', () => {
    expect(formatError(new DOMException('aborted', 'AbortError'))).toBe('Cancelled.');
  });
});

describe('table', () => {
  it('aligns columns, right-aligns numbers, and has no trailing spaces', () => {
    const out = table(
      [
        { id: 'a', n: 5 },
        { id: 'longer-id', n: 1234 },
      ],
      [
        { header: 'ID', value: (r) => r.id },
        { header: 'N', value: (r) => String(r.n), align: 'right' },
        { header: 'END', value: () => 'x' },
      ],
    );
    expect(out).toBe(['ID            N  END', 'a             5  x', 'longer-id  1234  x', ''].join('\n'));
  });

  it('measures wide characters as two columns', () => {
    const out = table(
      [{ id: '방송-1' }, { id: 'abcdef' }],
      [
        { header: 'ID', value: (r) => r.id },
        { header: 'X', value: () => '|' },
      ],
    );
    const lines = out.trimEnd().split('\n');
    const bars = lines.slice(1).map((l) => displayWidth(l.slice(0, l.indexOf('|'))));
    expect(bars[0]).toBe(bars[1]);
  });

  it('truncates long cells with an ellipsis only where a cap is set', () => {
    const id = 'x'.repeat(100);
    const out = table([{ id }], [{ header: 'ID', value: (r) => r.id, maxWidth: 20 }]);
    expect(out.split('\n')[1]).toBe(`${'x'.repeat(19)}…`);
    expect(truncate('방송방송', 5)).toBe('방송…');
    expect(truncate('short', 10)).toBe('short');
  });

  it('neutralises control characters in hostile IDs', () => {
    const out = table([{ id: 'evil\u001b[2J\nnext' }], [{ header: 'ID', value: (r) => r.id }]);
    expect(out).not.toContain('\u001b');
    expect(out.trimEnd().split('\n')).toHaveLength(2);
  });
});

describe('relativeTime', () => {
  const now = new Date('2024-05-10T12:00:00Z');
  const ago = (ms: number) => relativeTime(new Date(now.getTime() - ms), now);
  it('says how long ago, in the largest whole unit', () => {
    expect(ago(1000)).toBe('just now');
    expect(ago(42_000)).toBe('42 s ago');
    expect(ago(3 * 60_000 + 5_000)).toBe('3 min ago');
    expect(ago(5 * 3_600_000)).toBe('5 h ago');
    expect(ago(2 * 86_400_000 + 1)).toBe('2 d ago');
  });
  it('speaks of the future too', () => {
    expect(ago(-2 * 3_600_000)).toBe('in 2 h');
  });
});

describe('formatDuration and formatBytes', () => {
  it('formats durations', () => {
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(5 * 60_000 + 3_000)).toBe('5 min 03 s');
    expect(formatDuration(3_600_000 + 2 * 60_000)).toBe('1 h 02 min');
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000)).toBe('3 d 4 h');
    expect(formatDuration(-1)).toBe('—');
  });
  it('formats sizes in decimal units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(1500)).toBe('1.5 kB');
    expect(formatBytes(999_999)).toBe('1.0 MB');
    expect(formatBytes(2 * 1024 ** 3)).toBe('2.1 GB');
    expect(formatBytes(Number.NaN)).toBe('—');
  });
});
