/** The names client uploads are saved under: the X-FILENAME header decoded, made safe, or a dated default. */
import { safeFileName, sanitizeExt } from '../recordings/filename.js';

/**
 * Decodes an `X-FILENAME` value. Header values reach Node as Latin-1 characters, so a client that sent raw
 * UTF-8 bytes is read back as UTF-8; a value with valid `%XX` escapes (what a page must do for non-ASCII
 * names, since XMLHttpRequest refuses them in headers) is percent-decoded. Anything else is taken as is.
 */
export function decodeHeaderFileName(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  let text = Array.isArray(value) ? (value[0] ?? '') : value;
  if (/[\u0080-\u00ff]/.test(text)) {
    const bytes = Buffer.from(text, 'latin1');
    const utf8 = bytes.toString('utf8');
    if (Buffer.from(utf8, 'utf8').equals(bytes)) text = utf8;
  }
  if (/%[0-9A-Fa-f]{2}/.test(text)) {
    try {
      text = decodeURIComponent(text);
    } catch {
      // Not valid percent-encoding: a literal `%` in a name.
    }
  }
  text = text.trim();
  return text === '' ? null : text;
}

/**
 * The base name (no extension) a client's file name is saved under: its last extension dropped (the real one
 * comes from the content type), then sanitised exactly like a channel ID. `fallback` when there is no name.
 */
export function uploadBaseName(clientName: string | null, fallback: string): string {
  if (clientName === null) return fallback;
  const dot = clientName.lastIndexOf('.');
  const stem = dot > 0 && sanitizeExt(clientName.slice(dot)) !== '' ? clientName.slice(0, dot) : clientName;
  return safeFileName(stem);
}

export function defaultBaseName(when: Date): string {
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const date = `${pad(when.getFullYear(), 4)}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}`;
  const time = `${pad(when.getHours())}${pad(when.getMinutes())}${pad(when.getSeconds())}`;
  return `upload-${date}_${time}`;
}

/** What the web SDK's `X-FILENAME` says about a recording: `<serviceId>.<channelId>LL.ogg` (local) or `…RR.ogg`. */
export interface SdkRecordingName {
  serviceId: string | null;
  channelId: string | null;
  /** `LL` is the producer's own (local) stream, `RR` the remote one. */
  track: 'local' | 'remote' | null;
}

/**
 * Reads the channel and the stream out of a web SDK upload name (SERVICE-FACTS, "Web client recordings").
 * The service ID is everything before the first dot (service IDs have none; channel IDs may). A name not ending
 * in `LL`/`RR` (before `.ogg`) gives nulls, never an error: it is hostile text shown to the producer, nothing more.
 */
export function parseSdkFileName(name: string | null, serviceId?: string | null): SdkRecordingName {
  const none: SdkRecordingName = { serviceId: null, channelId: null, track: null };
  if (name === null) return none;
  const stem = name.replace(/\.ogg$/i, '');
  const tag = stem.slice(-2);
  const track = tag === 'LL' ? 'local' : tag === 'RR' ? 'remote' : null;
  if (track === null) return none;
  const rest = stem.slice(0, -2);
  const prefix = serviceId ? `${serviceId}.` : null;
  const dot = prefix !== null && rest.startsWith(prefix) ? prefix.length - 1 : rest.indexOf('.');
  if (dot <= 0 || dot === rest.length - 1) return { ...none, track };
  return { serviceId: rest.slice(0, dot), channelId: rest.slice(dot + 1).slice(0, 1024), track };
}
