import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors.js';
import { parseDuration, parseTimeInput, toUnixSeconds } from './time-input.js';

const NOW = new Date('2024-05-10T12:00:00.000Z');

describe('parseDuration', () => {
  it('reads every unit and long unit names', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('7d')).toBe(7 * 86_400_000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
    expect(parseDuration('2 hours')).toBe(7_200_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
  });

  it('returns null for what is not a span', () => {
    expect(parseDuration('2x')).toBeNull();
    expect(parseDuration('h')).toBeNull();
    expect(parseDuration('-2h')).toBeNull();
    expect(parseDuration('2024-05-01')).toBeNull();
    expect(parseDuration('99999999d')).toBeNull();
  });
});

describe('parseTimeInput', () => {
  it('counts relative spans back from now', () => {
    expect(parseTimeInput('2h', NOW).toISOString()).toBe('2024-05-10T10:00:00.000Z');
    expect(parseTimeInput('30m', NOW).toISOString()).toBe('2024-05-10T11:30:00.000Z');
    expect(parseTimeInput('7d', NOW).toISOString()).toBe('2024-05-03T12:00:00.000Z');
    expect(parseTimeInput('2h ago', NOW).toISOString()).toBe('2024-05-10T10:00:00.000Z');
    expect(parseTimeInput(' NOW ', NOW).getTime()).toBe(NOW.getTime());
  });

  it('reads ISO date-times with zones exactly', () => {
    expect(parseTimeInput('2024-05-01T14:30:00Z', NOW).toISOString()).toBe('2024-05-01T14:30:00.000Z');
    expect(parseTimeInput('2024-05-01T14:30Z', NOW).toISOString()).toBe('2024-05-01T14:30:00.000Z');
    expect(parseTimeInput('2024-05-01T14:30:00.250+09:00', NOW).toISOString()).toBe('2024-05-01T05:30:00.250Z');
    expect(parseTimeInput('2024-05-01T14:30:00-0130', NOW).toISOString()).toBe('2024-05-01T16:00:00.000Z');
  });

  it('reads dates and zone-less date-times as local time', () => {
    const date = parseTimeInput('2024-05-01', NOW);
    expect([date.getFullYear(), date.getMonth(), date.getDate(), date.getHours(), date.getMinutes()]).toEqual([
      2024, 4, 1, 0, 0,
    ]);
    const dt = parseTimeInput('2024-05-01 14:30', NOW);
    expect([dt.getDate(), dt.getHours(), dt.getMinutes()]).toEqual([1, 14, 30]);
  });

  it('reads Unix seconds', () => {
    expect(toUnixSeconds(parseTimeInput('@1700000000', NOW))).toBe(1_700_000_000);
    expect(toUnixSeconds(parseTimeInput('1700000000', NOW))).toBe(1_700_000_000);
    expect(toUnixSeconds(parseTimeInput('@0', NOW))).toBe(0);
  });

  it('refuses impossible dates instead of rolling them over', () => {
    expect(() => parseTimeInput('2024-02-30', NOW)).toThrow(ValidationError);
    expect(() => parseTimeInput('2024-04-31T10:00Z', NOW)).toThrow(/not a real date/);
    expect(() => parseTimeInput('2024-13-01', NOW)).toThrow(ValidationError);
    expect(() => parseTimeInput('2024-05-01T24:00', NOW)).toThrow(ValidationError);
  });

  it('refuses garbage with a hint naming the field', () => {
    for (const bad of ['yesterday', '2h30', '', '2024', '12:00', '5 parsecs']) {
      let caught: unknown;
      try {
        parseTimeInput(bad, NOW, '--since');
      } catch (error) {
        caught = error;
      }
      expect(caught, bad).toBeInstanceOf(ValidationError);
      expect((caught as ValidationError).message).toMatch(/--since/);
      expect((caught as ValidationError).paths).toEqual(['--since']);
    }
  });

  it('never returns an invalid Date', () => {
    for (const text of ['2h', '2024-05-01', '@1700000000', '2024-05-01T00:00Z']) {
      expect(Number.isNaN(parseTimeInput(text, NOW).getTime())).toBe(false);
    }
  });
});
