/**
 * A small typed dictionary: `t('live.empty')`. Keys are checked at compile time (the Korean dictionary
 * must have the English shape), and the active locale is reactive: templates and `$derived` values that
 * call `t()` or a formatter update when the language changes.
 */
import { createSubscriber } from 'svelte/reactivity';
import type { Language } from '../../../electron/contract.js';
import { en, type Messages, type Plural } from '../locales/en.js';
import { ko } from '../locales/ko.js';

export type Locale = 'en' | 'ko';

const dictionaries: Record<Locale, Messages> = { en, ko };

type Join<P extends string, K extends string> = P extends '' ? K : `${P}.${K}`;
type Paths<T, P extends string = ''> = {
  [K in keyof T & string]: T[K] extends string | Plural ? Join<P, K> : Paths<T[K], Join<P, K>>;
}[keyof T & string];

/** Every message key, e.g. 'live.empty' or 'search.count'. */
export type MessageKey = Paths<Messages>;
export type Params = Record<string, string | number>;

let active: Locale = 'en';
let notify: (() => void) | null = null;
// Lets plain functions (t, formatters) take part in Svelte's reactivity without a store in every component.
const track = createSubscriber((update) => {
  notify = update;
  return () => {
    notify = null;
  };
});

interface Formatters {
  number: Intl.NumberFormat;
  decimal: Intl.NumberFormat;
  plural: Intl.PluralRules;
  dateTime: Intl.DateTimeFormat;
  time: Intl.DateTimeFormat;
  units: Map<string, Intl.NumberFormat>;
}
let formatters: Formatters | null = null;

function fmt(): Formatters {
  formatters ??= {
    number: new Intl.NumberFormat(active),
    decimal: new Intl.NumberFormat(active, { maximumFractionDigits: 1 }),
    plural: new Intl.PluralRules(active),
    // Times of day are 24-hour in every language and locale, as the CLI prints them and the README says: a
    // producer compares the popover with `tally listen`'s lines and the logs, which never say AM/PM.
    dateTime: new Intl.DateTimeFormat(active, {
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }),
    time: new Intl.DateTimeFormat(active, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }),
    units: new Map(),
  };
  return formatters;
}

function unit(name: string, digits = 0, display: 'narrow' | 'short' = 'narrow'): Intl.NumberFormat {
  const key = `${name}/${digits}/${display}`;
  const cache = fmt().units;
  let f = cache.get(key);
  if (!f) {
    f = new Intl.NumberFormat(active, {
      style: 'unit',
      unit: name,
      unitDisplay: display,
      maximumFractionDigits: digits,
    });
    cache.set(key, f);
  }
  return f;
}

/** The active locale (reactive). */
export function locale(): Locale {
  track();
  return active;
}

/** Switches the language of every visible string. */
export function setLocale(next: Locale): void {
  if (next === active) return;
  active = next;
  formatters = null;
  if (typeof document !== 'undefined') document.documentElement.lang = next;
  notify?.();
}

/** 'system' follows the browser/OS language; anything that is not Korean falls back to English. */
export function resolveLocale(language: Language, systemLanguage: string | undefined): Locale {
  if (language === 'en' || language === 'ko') return language;
  return systemLanguage?.toLowerCase().startsWith('ko') ? 'ko' : 'en';
}

function lookup(key: string): string | Plural | undefined {
  let node: unknown = dictionaries[active];
  for (const part of key.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
  return node as string | Plural | undefined;
}

/** The message for `key` in the active locale; `{name}` placeholders take `params` (numbers are localised). */
export function t(key: MessageKey, params?: Params): string {
  track();
  let message = lookup(key) ?? key;
  if (typeof message !== 'string') {
    const count = Number(params?.count ?? 0);
    message = fmt().plural.select(count) === 'one' ? message.one : message.other;
  }
  if (!params) return message;
  return message.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    return typeof value === 'number' ? fmt().number.format(value) : value;
  });
}

/** 1,234 / 1,234 in the active locale. */
export function formatNumber(n: number): string {
  track();
  return fmt().number.format(n);
}

/** "May 14, 14:03" (short, for lists; 24-hour whatever the locale). */
export function formatDateTime(iso: string | number): string {
  track();
  return fmt().dateTime.format(new Date(iso));
}

/** "14:03" (24-hour whatever the locale, "09:05" before ten). */
export function formatTime(iso: string | number): string {
  track();
  return fmt().time.format(new Date(iso));
}

/** Compact duration: "45s", "12m", "1h 5m", "2d 3h" ("1시간 5분" in Korean). */
export function formatDuration(totalSeconds: number): string {
  track();
  const s = Math.max(0, Math.floor(totalSeconds));
  const parts: [number, string][] =
    s < 60
      ? [[s, 'second']]
      : s < 3600
        ? [[Math.floor(s / 60), 'minute']]
        : s < 86_400
          ? [
              [Math.floor(s / 3600), 'hour'],
              [Math.floor((s % 3600) / 60), 'minute'],
            ]
          : [
              [Math.floor(s / 86_400), 'day'],
              [Math.floor((s % 86_400) / 3600), 'hour'],
            ];
  return parts
    .filter(([value], i) => i === 0 || value > 0)
    .map(([value, name]) => unit(name).format(value))
    .join(' ');
}

/** Bytes in decimal units, as macOS and most download UIs show them: "850 kB", "12.3 MB". */
export function formatBytes(bytes: number): string {
  track();
  const scales: [number, string][] = [
    [1e9, 'gigabyte'],
    [1e6, 'megabyte'],
    [1e3, 'kilobyte'],
  ];
  for (const [size, name] of scales) if (bytes >= size) return unit(name, 1, 'short').format(bytes / size);
  return unit('byte', 0, 'short').format(bytes);
}
