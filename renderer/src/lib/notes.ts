/** Core messages (notes) in the popover's language, falling back to the core's English text. */
import type { Note } from '../../../electron/contract.js';
import { messageOf } from './errors.js';
import { knownNote, noteInLocale } from './note-text.js';

function known(note: Note): boolean {
  return knownNote(note.code);
}

/** One note in the popover's language; `error` notes are translated like the errors they carry. */
function translated(note: Note): string {
  const params = note.params ?? {};
  if (note.code === 'error') {
    const { errorCode, message } = params;
    return messageOf({ code: errorCode, message: String(message ?? ''), params });
  }
  return noteInLocale(note.code, params);
}

/**
 * A core message in the popover's language: its notes translated by code when the popover knows every code,
 * else the core's English `text` as it is (a newer core behind `tally serve` may send codes this page lacks).
 */
export function coreText(text: string, notes: readonly Note[] | null | undefined): string;
export function coreText(text: string | null, notes: readonly Note[] | null | undefined): string | null;
export function coreText(text: string | null, notes: readonly Note[] | null | undefined): string | null {
  if (!notes || notes.length === 0 || !notes.every(known)) return text;
  return notes.map(translated).join(' ');
}
