/**
 * Times of day in the popover: 24-hour in English and Korean whatever the browser's locale, as the README says
 * and as `tally listen` and the logs print them (a trial in an en-US browser saw "2:03 PM").
 */
import { afterEach, describe, expect, it } from 'vitest';
import { formatDateTime, formatTime, setLocale } from './i18n.js';

const afternoon = new Date(2026, 4, 14, 14, 3).getTime();
const morning = new Date(2026, 4, 14, 9, 5).getTime();

describe('times of day', () => {
  afterEach(() => setLocale('en'));

  it('are 24-hour in English, with no AM/PM', () => {
    setLocale('en');
    expect(formatTime(afternoon)).toBe('14:03');
    expect(formatTime(morning)).toBe('09:05');
    expect(formatDateTime(afternoon)).toBe('May 14, 14:03');
  });

  it('are 24-hour in Korean, with no 오전/오후', () => {
    setLocale('ko');
    expect(formatTime(afternoon)).toBe('14:03');
    expect(formatDateTime(morning)).toBe('5월 14일 09:05');
  });
});
