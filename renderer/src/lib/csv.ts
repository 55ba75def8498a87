/**
 * CSV export of search results (RFC 4180, CRLF, UTF-8 with BOM so spreadsheet apps read non-ASCII IDs).
 */
import type { ChannelView } from '../../../electron/contract.js';

/**
 * One cell: text that a spreadsheet would run as a formula (starting with = + - @, tab or CR) gets a
 * leading apostrophe, and any cell with a quote, comma or line break is quoted with quotes doubled.
 * Channel IDs are chosen by broadcasting clients, so they are hostile text.
 */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const HEADER = ['channel_id', 'created_at', 'ended_at', 'duration_seconds', 'cumulative_sessions'];

/** The whole file as text. */
export function channelsToCsv(channels: readonly ChannelView[]): string {
  const lines = [HEADER.join(',')];
  for (const c of channels) {
    lines.push([c.id, c.createdAt, c.endedAt, c.durationSeconds, c.cumulativeSessions].map(csvCell).join(','));
  }
  return '\uFEFF' + lines.join('\r\n') + '\r\n';
}

/** Saves text as a file through a temporary object URL and an `<a download>` (no server round trip). */
export function downloadText(text: string, fileName: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // Revoke after the click has been handled; the download keeps its own reference.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
