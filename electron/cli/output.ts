/**
 * Human output of the CLI: one-line errors, aligned tables, relative times, durations and sizes.
 * Machine output (`--json`) never goes through here, so nothing is truncated there.
 */
import { TallyError } from '../core/errors.js';

/**
 * One clear line for any thrown value. Our own errors are written for people and never carry the
 * secret, so their message is printed as is; anything else gets a generic line, because a foreign
 * error's message may quote request options.
 */
export function formatError(error: unknown): string {
  if (error instanceof TallyError) return oneLine(error.message);
  if (isAbort(error)) return 'Cancelled.';
  const name = error instanceof Error && /^[A-Za-z]{1,40}$/.test(error.name) ? error.name : 'unknown error';
  return `Unexpected internal error (${name}). Please report it with the command you ran.`;
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/** A column of `table`: header text, how to read a cell, alignment and an optional width cap. */
export interface Column<T> {
  header: string;
  value: (row: T) => string;
  align?: 'left' | 'right';
  /** Cells wider than this are cut with `…` (human output only). */
  maxWidth?: number;
}

/** Renders rows as an aligned text table with a header line; columns are separated by two spaces. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((c) => truncate(terminalSafe(c.value(row)), c.maxWidth)));
  const headers = columns.map((c) => c.header);
  const widths = columns.map((_, i) =>
    Math.max(displayWidth(headers[i] ?? ''), ...cells.map((r) => displayWidth(r[i] ?? ''))),
  );
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => {
        const last = i === values.length - 1;
        const align = columns[i]?.align ?? 'left';
        return pad(v, widths[i] ?? 0, align, last);
      })
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n') + '\n';
}

function pad(text: string, width: number, align: 'left' | 'right', last: boolean): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  if (align === 'right') return fill + text;
  return last ? text : text + fill;
}

/**
 * Channel IDs, URLs and error messages from webhooks are hostile text: control characters would move the
 * cursor, recolour the terminal or forge whole lines (CR/LF), and bidi overrides would reorder what is shown.
 */
export function terminalSafe(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '�');
}

/** Cuts text to `max` terminal columns, ending with `…` when something was cut. */
export function truncate(text: string, max?: number): string {
  if (max === undefined || displayWidth(text) <= max) return text;
  if (max <= 1) return '…';
  let out = '';
  let width = 0;
  for (const ch of text) {
    const w = charWidth(ch.codePointAt(0) ?? 0);
    if (width + w > max - 1) break;
    out += ch;
    width += w;
  }
  return out + '…';
}

/** Terminal columns a string takes: wide East Asian characters and emoji count 2, combining marks 0. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += charWidth(ch.codePointAt(0) ?? 0);
  return width;
}

function charWidth(cp: number): number {
  if (
    (cp >= 0x0300 && cp <= 0x036f) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0x1ab0 && cp <= 0x1aff) ||
    (cp >= 0x20d0 && cp <= 0x20ff)
  ) {
    return 0;
  }
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xa960 && cp <= 0xa97f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** "just now", "42 s ago", "3 min ago", "5 h ago", "2 d ago", or "in 2 h" for the future. */
export function relativeTime(date: Date, now: Date = new Date()): string {
  const diff = now.getTime() - date.getTime();
  const abs = Math.abs(diff);
  if (abs < 5_000) return 'just now';
  let amount: string;
  if (abs < 60_000) amount = `${Math.floor(abs / 1000)} s`;
  else if (abs < 3_600_000) amount = `${Math.floor(abs / 60_000)} min`;
  else if (abs < 86_400_000) amount = `${Math.floor(abs / 3_600_000)} h`;
  else amount = `${Math.floor(abs / 86_400_000)} d`;
  return diff >= 0 ? `${amount} ago` : `in ${amount}`;
}

/** "42 s", "5 min 03 s", "1 h 02 min", "3 d 4 h" for a span in milliseconds. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)} min ${two(s % 60)} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${two(Math.floor((s % 3600) / 60))} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

/** Decimal units, as file managers on macOS and most Linux desktops show them: "0 B", "1.5 MB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  if (bytes < 999.5) return `${Math.round(bytes)} B`;
  const units = ['kB', 'MB', 'GB', 'TB', 'PB'];
  let value = bytes;
  let unit = 'B';
  for (const u of units) {
    if (value < 999.5) break;
    value /= 1000;
    unit = u;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${unit}`;
}

/** Local date and time without seconds, stable across locales: `2024-05-01 14:30`. */
export function formatDateTime(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

/** The one time of day every command prints: local, 24-hour, with seconds (`09:41:03`), whatever the locale. */
export function clockTime(date: Date = new Date()): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}
