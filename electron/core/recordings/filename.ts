/**
 * File names for recordings. A channel ID is chosen by whoever broadcasts and arrives through an
 * unauthenticated webhook, so it is hostile text: it must never escape the recordings folder, hit a Windows
 * device name, hide its real extension behind bidi tricks, or be too long for the file system.
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { ValidationError } from '../errors.js';

/** Default byte budget of a name: well under the 255-byte limit of common file systems, leaving room for ` (2)` and `.part`. */
export const DEFAULT_MAX_NAME_BYTES = 200;

export interface SafeNameOptions {
  /** Upper bound in UTF-8 bytes (default 200, minimum 24). */
  maxBytes?: number;
}

// Bidi embedding/override/isolate marks and invisible characters that can disguise a name (`evil\u202Evom.exe`).
const INVISIBLE = /[\u061C\u200B\u200E\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/gu;
// C0/C1 controls and the Unicode line/paragraph separators.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/gu;
// Path separators and the characters Windows forbids in names.
const RESERVED_CHARS = /[<>:"/\\|?*]/gu;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/gu;
// Windows device names stay reserved with any extension (`CON.mp4`) and trailing spaces.
const DEVICE_NAME = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/iu;

// Created on first use: ICU's break-iterator data costs the process about 2.5 MB of memory, and only a name
// longer than its budget needs it.
let segmenter: Intl.Segmenter | undefined;
// Plain ASCII is already NFC: normalising it would only page in ICU's normalisation data (about 2 MB).
// eslint-disable-next-line no-control-regex -- the whole ASCII range, controls included
const ASCII = /^[\u0000-\u007F]*$/u;

/** First 8 hex chars of sha256 of the original text: distinguishes names that sanitise to the same thing. */
function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 8);
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Longest prefix within `budget` UTF-8 bytes, cut between graphemes (or code points for a monstrous grapheme). */
function cutToBytes(text: string, budget: number): string {
  let out = '';
  let used = 0;
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment } of segmenter.segment(text)) {
    const size = utf8Bytes(segment);
    if (used + size > budget) break;
    out += segment;
    used += size;
  }
  if (out === '' && text !== '') {
    for (const codePoint of text) {
      const size = utf8Bytes(codePoint);
      if (used + size > budget) break;
      out += codePoint;
      used += size;
    }
  }
  return out;
}

function trimEnds(text: string): string {
  // Windows silently drops trailing dots and spaces, so `a.` and `a` would be the same file there.
  return text.replace(/^[\s.]+/u, '').replace(/[\s.]+$/u, '');
}

function isDeviceName(name: string): boolean {
  const stem = name.split('.')[0] ?? '';
  return DEVICE_NAME.test(stem.trimEnd());
}

/**
 * A single, portable file-name component derived from untrusted text. Never empty, never `.`/`..`, no
 * separators, controls, Windows-reserved characters or device names, no bidi overrides, NFC-normalised and
 * at most `maxBytes` UTF-8 bytes. When anything had to change, `-<hash>` of the original is appended so two
 * different IDs do not end up with the same name. Idempotent: a safe name comes back unchanged.
 */
export function safeFileName(input: string, opts: SafeNameOptions = {}): string {
  const maxBytes = Math.max(24, Math.floor(opts.maxBytes ?? DEFAULT_MAX_NAME_BYTES));
  const original = String(input);
  let name = ASCII.test(original) ? original : original.normalize('NFC');
  name = name.replace(LONE_SURROGATE, '_').replace(INVISIBLE, '').replace(CONTROL, '_').replace(RESERVED_CHARS, '_');
  name = trimEnds(name);
  if (isDeviceName(name)) name = `_${name}`;

  const changed = name !== original;
  const hash = shortHash(original);
  if (name === '') return `recording-${hash}`;
  if (!changed && utf8Bytes(name) <= maxBytes) return name;

  const suffix = `-${hash}`;
  const head = trimEnds(cutToBytes(name, maxBytes - suffix.length));
  if (head === '') return `recording-${hash}`;
  return `${head}${suffix}`;
}

/** Values available to a file-name template. */
export interface FileNameFields {
  channelId: string;
  /** When the webhook was received (ISO string, Date or epoch ms). */
  receivedAt: string | Date | number;
  /** Extension with its dot, e.g. `.mp4`; anything else than 1-10 ASCII letters/digits is dropped. */
  ext: string;
}

export interface RenderOptions {
  /** Clock for `{date}`/`{time}`: the producer's local time (default) or UTC. */
  timeZone?: 'local' | 'utc';
  /** Byte budget of the whole name including the extension (default 200). */
  maxBytes?: number;
}

export const DEFAULT_FILE_NAME_TEMPLATE = '{channelId}';

/** A safe `.ext` (lower-cased) or '' when the text is not a plausible extension. */
export function sanitizeExt(ext: string): string {
  const bare = ext.startsWith('.') ? ext.slice(1) : ext;
  return /^[A-Za-z0-9]{1,10}$/.test(bare) ? `.${bare.toLowerCase()}` : '';
}

/**
 * The extensions a recording may be saved and opened under: video and audio containers only. The webhook's URL is
 * anyone's text (the default origin allows every S3 bucket), so `.exe`, `.desktop`, `.hta`, `.lnk`, `.html` or
 * `.sh` from it must never reach the disk, where a double click would run them.
 */
export const MEDIA_EXTENSIONS: ReadonlySet<string> = new Set([
  '.mp4',
  '.m4v',
  '.m4a',
  '.mov',
  '.webm',
  '.mkv',
  '.ogg',
  '.oga',
  '.opus',
  '.mp3',
  '.aac',
  '.wav',
  '.flac',
  '.ts',
  '.flv',
  '.3gp',
]);

/** `ext` when it is a media extension (lower-cased), else `fallback`. */
export function mediaExt(ext: string, fallback = '.mp4'): string {
  const safe = sanitizeExt(ext);
  return MEDIA_EXTENSIONS.has(safe) ? safe : fallback;
}

/** Whether a saved file's name ends in a media extension (what "open" may launch). */
export function hasMediaExt(file: string): boolean {
  const dot = file.lastIndexOf('.');
  return dot > 0 && MEDIA_EXTENSIONS.has(file.slice(dot).toLowerCase());
}

/** The media extension of a download URL's last path segment (`.mp4` for `/svc/x/ch.mp4`), or `fallback`. */
export function extFromUrl(url: string, fallback = '.mp4'): string {
  try {
    const last = new URL(url).pathname.split('/').pop() ?? '';
    const dot = last.lastIndexOf('.');
    return dot > 0 ? mediaExt(decodeURIComponent(last.slice(dot)), fallback) : fallback;
  } catch {
    return fallback;
  }
}

/**
 * The container the file's first bytes announce, as an extension, or null when they say nothing known. What the
 * bytes are beats what the URL says (a WebM body behind a `.mp4` URL is saved as `.webm`).
 */
export function sniffMediaExt(head: Uint8Array): string | null {
  const ascii = (from: number, to: number) => String.fromCharCode(...head.subarray(from, to));
  if (head.length >= 12 && ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12);
    if (brand === 'M4A ') return '.m4a';
    if (brand === 'qt  ') return '.mov';
    return '.mp4';
  }
  if (head.length >= 4 && head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) {
    return ascii(0, Math.min(head.length, 64)).includes('webm') ? '.webm' : '.mkv';
  }
  if (head.length >= 4 && ascii(0, 4) === 'OggS') return '.ogg';
  if (head.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return '.wav';
  if (head.length >= 4 && ascii(0, 4) === 'fLaC') return '.flac';
  if (head.length >= 3 && ascii(0, 3) === 'FLV') return '.flv';
  if (head.length >= 3 && ascii(0, 3) === 'ID3') return '.mp3';
  return null;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/**
 * Renders a name template (`{channelId}`, `{date}` YYYY-MM-DD, `{time}` HHmmss, `{datetime}` both joined by
 * `_`) into a safe file name ending with `ext`. Each value is sanitised, then the whole result again, so a
 * template cannot create sub-folders either.
 */
export function renderFileName(
  template: string | null | undefined,
  fields: FileNameFields,
  opts: RenderOptions = {},
): string {
  const ext = sanitizeExt(fields.ext);
  const maxBytes = Math.max(40, opts.maxBytes ?? DEFAULT_MAX_NAME_BYTES) - ext.length;
  const when = new Date(fields.receivedAt);
  let date = 'unknown-date';
  let time = 'unknown-time';
  if (!Number.isNaN(when.getTime())) {
    const utc = opts.timeZone === 'utc';
    const [y, mo, d, h, mi, sec] = utc
      ? [
          when.getUTCFullYear(),
          when.getUTCMonth() + 1,
          when.getUTCDate(),
          when.getUTCHours(),
          when.getUTCMinutes(),
          when.getUTCSeconds(),
        ]
      : [
          when.getFullYear(),
          when.getMonth() + 1,
          when.getDate(),
          when.getHours(),
          when.getMinutes(),
          when.getSeconds(),
        ];
    date = `${pad(y, 4)}-${pad(mo)}-${pad(d)}`;
    time = `${pad(h)}${pad(mi)}${pad(sec)}`;
  }
  // The ID gets most of the budget but leaves room for the date/time text around it.
  const channel = safeFileName(fields.channelId, { maxBytes: Math.max(24, maxBytes - 40) });
  const values: Record<string, string> = {
    channelId: channel,
    date,
    time,
    datetime: `${date}_${time}`,
  };
  const text = (template?.trim() ? template : DEFAULT_FILE_NAME_TEMPLATE).replace(
    /\{(channelId|date|time|datetime)\}/g,
    (_match, key: string) => values[key] ?? '',
  );
  return `${safeFileName(text, { maxBytes })}${ext}`;
}

/**
 * Absolute path of `name` directly inside `folder`.
 * @throws ValidationError when the name would resolve anywhere else (separators, `..`, absolute paths).
 */
export function resolveInside(folder: string, name: string): string {
  const root = path.resolve(folder);
  const target = path.resolve(root, name);
  const rel = path.relative(root, target);
  if (
    rel === '' ||
    rel === '..' ||
    rel.startsWith(`..${path.sep}`) ||
    path.isAbsolute(rel) ||
    path.dirname(rel) !== '.'
  ) {
    throw new ValidationError(['name'], `The file name "${name}" does not stay inside ${root}.`);
  }
  return target;
}

/** A name reserved by `chooseFreeName`. */
export interface FreeName {
  /** Absolute path inside the folder. */
  path: string;
  /** File name only. */
  name: string;
  /** True when `isSameFile` accepted an existing file: nothing was reserved and that file is the result. */
  existing: boolean;
}

const MAX_NUMBERED = 9999;

/**
 * The one final-name picker: tries `base + ext`, then `base (2) + ext`, `base (3) + ext`... in `folder`,
 * asking `claim` for each candidate. `claim` takes the name in its own way (an O_EXCL placeholder, a marker,
 * a hard link) and returns what the caller wants back, or undefined when the name is taken. `base` and `ext`
 * are used as given: callers pass names already made safe. After 9999 taken names, `tooMany` is thrown.
 */
export async function pickFinalName<T>(
  folder: string,
  base: string,
  ext: string,
  claim: (path: string, name: string) => Promise<T | undefined>,
  tooMany: () => Error = () =>
    new ValidationError(['name'], `More than ${MAX_NUMBERED} files named "${base}${ext}" already exist in ${folder}.`),
): Promise<T> {
  for (let n = 1; n <= MAX_NUMBERED; n += 1) {
    const name = n === 1 ? `${base}${ext}` : `${base} (${n})${ext}`;
    const claimed = await claim(resolveInside(folder, name), name);
    if (claimed !== undefined) return claimed;
  }
  throw tooMany();
}

/**
 * Reserves `base + ext`, else `base (2) + ext`, `base (3) + ext`... by creating an empty file with O_EXCL, so
 * two concurrent downloads never pick the same name and an existing file is never overwritten. The caller
 * renames its finished file onto the (empty) reservation. When `isSameFile` says an existing file already is
 * this very recording, that path is returned with `existing: true` instead.
 */
export async function chooseFreeName(
  folder: string,
  base: string,
  ext: string,
  isSameFile?: (candidate: string) => boolean | Promise<boolean>,
): Promise<FreeName> {
  return pickFinalName(folder, safeFileName(base), sanitizeExt(ext), async (candidate, name) => {
    try {
      const handle = await open(candidate, 'wx');
      await handle.close();
      return { path: candidate, name, existing: false };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (isSameFile && (await isSameFile(candidate))) return { path: candidate, name, existing: true };
      return undefined;
    }
  });
}
