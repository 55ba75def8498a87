import { describe, expect, it } from 'vitest';
import { csvCell } from './csv.js';

describe('csvCell', () => {
  it('quotes separators, quotes and line breaks', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a"b')).toBe('"a""b"');
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    expect(csvCell('x,y')).toBe('"x,y"');
  });

  it('defuses text a spreadsheet would run as a formula, but leaves numbers alone', () => {
    for (const lead of ['=', '+', '-', '@', '\t']) expect(csvCell(`${lead}1`)).toBe(`'${lead}1`);
    expect(csvCell('\r1')).toBe(`"'\r1"`);
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell(null)).toBe('');
  });
});
