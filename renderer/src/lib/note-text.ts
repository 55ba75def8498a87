import { NOTE_TEXT, type NoteParams } from '../../../electron/contract.js';
import { locale, t, type MessageKey } from './i18n.js';

/** Whether this popover has a translation for a note code (a newer core may send codes it lacks). */
export function knownNote(code: unknown): code is string {
  return typeof code === 'string' && Object.hasOwn(NOTE_TEXT, code);
}

/**
 * The note `code` in the popover's language. Outside English, a param `<name>Note` naming a known code is a
 * sentence nested in this one (contract-notes.ts `nested`): it is translated too and put in place of `<name>`,
 * which holds the core's English text. English keeps the core's text exactly as the CLI shows it.
 */
export function noteInLocale(code: string, params: NoteParams = {}, depth = 0): string {
  return t(`notes.${code}` as MessageKey, localParams(params, code, depth));
}

/** `params` with each nested sentence (see noteInLocale) in the popover's language; as they are in English. */
export function localParams(params: NoteParams, code = '', depth = 0): NoteParams {
  const all: NoteParams = { ...params };
  if (locale() === 'en' || depth >= 3) return all;
  for (const [key, inner] of Object.entries(params)) {
    if (!key.endsWith('Note') || key === 'Note' || inner === code || !knownNote(inner)) continue;
    all[key.slice(0, -'Note'.length)] = noteInLocale(inner, params, depth + 1);
  }
  return all;
}
