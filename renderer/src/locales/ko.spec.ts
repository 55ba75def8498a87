import { describe, expect, it } from 'vitest';
import { en } from './en.js';
import { ko } from './ko.js';

/** Every leaf string of a dictionary with its dotted key (both plural forms of a Plural). */
function leaves(node: unknown, path = ''): [string, string][] {
  if (typeof node === 'string') return [[path, node]];
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => leaves(value, path ? `${path}.${key}` : key));
}

/**
 * Latin words a Korean sentence keeps as they are: names of products and protocols, and terms the producer
 * types or sees elsewhere in Latin letters (the `recordUrl` field, an `origin`, a unit).
 */
const KEPT = new Set(
  [
    'Tally tally serve login chmod status retry follow ngrok localtunnel cloudflared Tailscale Funnel JetStream nats nats-server tls gnome-keyring KeePassXC',
    'ID URL API OS CSV MD5 CORS TLS DNS S3 AWS Ceph MinIO DIR member-id http https recordUrl receiverHost receiverPort origin ms s Origin Content-Type POST',
  ]
    .join(' ')
    .split(' '),
);

/**
 * A key chord as a keyboard prints it (`Ctrl+C`, `Cmd+Shift+Q`, `Alt+F4`): modifier names joined by `+` to one
 * key. Keys keep their Latin names in every language, but only inside a chord: a bare "Ctrl" or "C" is a word.
 */
const KEY_CHORD =
  /\b(?:(?:Ctrl|Cmd|Alt|Shift|Option|Meta|Win)\+)+(?:[A-Z0-9]|F[1-9][0-9]?|Tab|Enter|Esc|Space|Delete|Backspace)\b/g;

/**
 * What is not a word to translate: placeholders, addresses, host names, flags, headers, environment variables
 * and key chords.
 */
function wordsOf(text: string): string[] {
  const rest = text
    .replace(KEY_CHORD, ' ')
    .replace(/\{\w+\}/g, ' ')
    .replace(/\bhttps?:\/\/\S+/g, ' ')
    .replace(/\b[\w-]+(?:\.[\w-]+)+\b/g, ' ')
    .replace(/\b[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+\b/g, ' ')
    .replace(/(^|[\s(])--?[a-z][\w-]*/g, ' ');
  return rest.match(/[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*/g) ?? [];
}

const english = new Map(leaves(en));
const korean = leaves(ko);
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('the Korean dictionary', () => {
  it('has no English left in a visible string, beyond names and terms kept in Latin letters', () => {
    const leftovers = korean.flatMap(([key, text]) =>
      wordsOf(text)
        .filter((word) => !KEPT.has(word))
        .map((word) => `${key}: ${word}`),
    );
    expect(leftovers).toEqual([]);
  });

  it('passes a key chord as a key name but still finds English around it', () => {
    expect(wordsOf('실행 중인 터미널에서 Ctrl+C 또는 Cmd+Shift+Q, Alt+F4')).toEqual([]);
    expect(wordsOf('터미널에서 Ctrl+C to stop, or press Ctrl')).toEqual(['to', 'stop', 'or', 'press', 'Ctrl']);
    expect(wordsOf('Ctrl+Copy')).toEqual(['Ctrl', 'Copy']);
  });

  it('says every sentence in Korean: a string without Hangul is a name or a pattern of placeholders', () => {
    const untranslated = korean
      .filter(([, text]) => !/[\uac00-\ud7a3]/.test(text))
      .filter(([, text]) => wordsOf(text).some((word) => !KEPT.has(word)) || /[.!?]$/.test(text.trim()));
    expect(untranslated).toEqual([]);
  });

  it('keeps the English placeholders, so every specific lands in the Korean sentence', () => {
    const mismatched = korean
      .filter(
        ([key, text]) => english.has(key) && placeholders(text).join() !== placeholders(english.get(key) ?? '').join(),
      )
      .map(([key]) => key);
    expect(mismatched).toEqual([]);
  });

  it('points to Settings sections by their Korean names', () => {
    const headings = new Set(
      leaves(ko.settings)
        .concat(leaves(ko.studio))
        .map(([, text]) => text),
    );
    const named = korean.flatMap(([, text]) => [...text.matchAll(/설정 → ‘([^’]+)’/g)].map((m) => m[1] ?? ''));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((name) => !headings.has(name))).toEqual([]);
  });
});
