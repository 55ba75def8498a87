/** The text of one note code in the popover's language, with its params and nested notes filled in. */
import { NOTE_TEXT, type NoteParams } from '../../../electron/contract.js';
import { locale, t, type MessageKey } from './i18n.js';

/** Note params that are numbers used as names, shown as the core wrote them rather than as amounts. */
const IDENTIFIER_PARAMS = ['port', 'configured', 'pid', 'status', 'errno', 'code', 'providerCode'] as const;

/** Whether this popover has a translation for a note code (a newer core may send codes it lacks). */
export function knownNote(code: unknown): code is string {
  return typeof code === 'string' && Object.hasOwn(NOTE_TEXT, code);
}

/**
 * The note `code` in the popover's language. Outside English, a param `<name>Note` naming a known code is a
 * sentence nested in this one (core/notes.ts `nested`): it is translated too and put in place of `<name>`,
 * which holds the core's English text. English keeps the core's text exactly as the CLI shows it.
 */
export function noteInLocale(code: string, params: NoteParams = {}, depth = 0): string {
  return t(`notes.${code}` as MessageKey, localParams(params, code, depth));
}

/** `params` with each nested sentence (see noteInLocale) in the popover's language; as they are in English. */
export function localParams(params: NoteParams, code = '', depth = 0): NoteParams {
  const all: NoteParams = { ...params };
  // Numbers that name something (port 8787, status 503) are not amounts: no "8,787" in any language.
  for (const key of IDENTIFIER_PARAMS) if (typeof all[key] === 'number') all[key] = String(all[key]);
  if (locale() === 'en' || depth >= 3) return all;
  // Settings fields by the names the producer sees them under, not the settings file's keys.
  if (typeof all.fields === 'string') all.fields = fieldNames(all.fields);
  for (const [key, inner] of Object.entries(params)) {
    if (!key.endsWith('Note') || key === 'Note' || inner === code || !knownNote(inner)) continue;
    all[key.slice(0, -'Note'.length)] = noteInLocale(inner, params, depth + 1);
  }
  return all;
}

/** `recordingsFolder, tunnel.publicUrl` as the fields' labels in the popover's language, where it has them. */
function fieldNames(fields: string): string {
  return fields
    .split(/,\s*/)
    .map((path) => {
      const key = `fieldNames.${path.replace(/\./g, '_')}` as MessageKey;
      const label = t(key);
      return label === key ? path : label;
    })
    .join(', ');
}
