/** Times typed by people (`2h`, `now`, ISO 8601, Unix seconds) for `tally search` and the CLI flags. */
import { ValidationError } from './errors.js';

/**
 * Time values typed by people: relative spans (`90s`, `30m`, `2h`, `7d`, `2w`, optionally followed by
 * `ago`), `now`, ISO 8601 dates and date-times, and Unix seconds (`@1700000000` or a bare 9–11 digit number).
 */

const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
});

const UNIT_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  s: 's',
  sec: 's',
  secs: 's',
  second: 's',
  seconds: 's',
  m: 'm',
  min: 'm',
  mins: 'm',
  minute: 'm',
  minutes: 'm',
  h: 'h',
  hr: 'h',
  hrs: 'h',
  hour: 'h',
  hours: 'h',
  d: 'd',
  day: 'd',
  days: 'd',
  w: 'w',
  week: 'w',
  weeks: 'w',
});

const SPAN_RE = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/;
// Date, optional time (minutes required, seconds and fraction optional), optional zone.
const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** Largest span accepted, so arithmetic never leaves the range a Date can hold. */
const MAX_SPAN_MS = 100 * 365 * 86_400_000;

const HINT = 'use a span like 30m, 2h or 7d, an ISO date like 2024-05-01 or 2024-05-01T14:30Z, or @<unix seconds>';

/**
 * Parses a span like `90s`, `30m`, `2h`, `7d`, `2w` (also `2 hours`) into milliseconds.
 * Returns null when the text is not a span, so callers can try other forms.
 */
export function parseDuration(input: string): number | null {
  const match = SPAN_RE.exec(input.trim().toLowerCase());
  if (!match) return null;
  const unit = UNIT_ALIASES[match[2] ?? ''];
  if (!unit) return null;
  const ms = Number(match[1]) * (UNIT_MS[unit] ?? NaN);
  if (!Number.isFinite(ms) || ms > MAX_SPAN_MS) return null;
  return Math.round(ms);
}

/**
 * Turns a time typed on the command line into a Date. Relative spans count back from `now`
 * (`2h` means two hours ago). A date without a time is local midnight; a date-time without a zone is
 * local time, as people read their own clock. Throws ValidationError with a hint on anything else.
 */
export function parseTimeInput(input: string, now: Date = new Date(), field = 'time'): Date {
  const text = input.trim();
  if (!text) throw new ValidationError([field], `${field} is empty: ${HINT}.`);
  const lower = text.toLowerCase();
  if (lower === 'now') return new Date(now.getTime());

  const span = parseDuration(lower.replace(/\s+ago$/, ''));
  if (span !== null) return new Date(now.getTime() - span);

  const unix = /^@?(\d{9,11})$/.exec(text) ?? /^@(\d{1,12})$/.exec(text);
  if (unix) return checked(new Date(Number(unix[1]) * 1000), text, field);

  const iso = ISO_RE.exec(text);
  if (iso) return parseIso(iso, text, field);

  throw new ValidationError([field], `Cannot read ${field} "${clip(text)}": ${HINT}.`);
}

function parseIso(m: RegExpExecArray, text: string, field: string): Date {
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  const zone = m[8];
  const bad = () => new ValidationError([field], `"${clip(text)}" is not a real date and time.`);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) throw bad();

  let date: Date;
  if (zone === undefined) {
    date = new Date(year, month - 1, day, hour, minute, second, ms);
    // Date rolls 31 April over to 1 May; a round trip catches days that do not exist.
    if (date.getFullYear() !== year || date.getMonth() !== month - 1 || date.getDate() !== day) throw bad();
  } else {
    const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
    const probe = new Date(utc);
    if (probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day) throw bad();
    date = new Date(utc - zoneOffsetMs(zone));
  }
  return checked(date, text, field);
}

function zoneOffsetMs(zone: string): number {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  return sign * (hours * 60 + minutes) * 60_000;
}

function checked(date: Date, text: string, field: string): Date {
  if (Number.isNaN(date.getTime())) {
    throw new ValidationError([field], `"${clip(text)}" is not a valid ${field}: ${HINT}.`);
  }
  return date;
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** Unix seconds for a Date (floored), as the service's search endpoint expects. */
export function toUnixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
