/**
 * What a job's `error` says, written the same way by every branch of the download queue.
 */
import { errorNote, note, said, type Note } from '../notes.js';
import { TallyError } from '../errors.js';

/** `2026-01-02 03:04:05 UTC`: deadlines in reasons. */
export function formatTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

/** The job's `error` note: our errors with their code, anything else prefixed. */
export function describe(error: Error): Note {
  if (error instanceof TallyError) return errorNote(error);
  const code = (error as NodeJS.ErrnoException).code;
  return note('saveFailed', { detail: `${code ? `${code} ` : ''}${error.message}` });
}

/** The job's `error` text and its notes, written together. */
export function stored(...notes: Note[]): { error: string; errorNotes: Note[] } {
  const { text, notes: errorNotes } = said(...notes);
  return { error: text, errorNotes };
}
