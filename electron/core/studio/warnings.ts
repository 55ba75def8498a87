/**
 * What a studio receiver or member wants its user to know and act on, one line each (a full folder, refused S3
 * keys, a server without JetStream, a member falling behind the retention...): kept by kind so the health model
 * shows what is in force now, and said (logged, emitted) only when a kind is new, not at every retry.
 */
import { noteText, type Note } from '../notes.js';

/** One line for the user, as English text and as a note for the popover. */
export interface StudioWarning {
  /** What it is about; a later warning of the same kind replaces the earlier one. */
  kind: string;
  message: string;
  note: Note;
}

export function studioWarning(kind: string, n: Note): StudioWarning {
  return { kind, message: noteText(n), note: n };
}

export class StudioWarnings {
  readonly #byKind = new Map<string, StudioWarning>();

  /** Keeps the warning; true when its kind was not in force yet (then it should be said). */
  set(w: StudioWarning): boolean {
    const fresh = !this.#byKind.has(w.kind);
    this.#byKind.set(w.kind, w);
    return fresh;
  }

  /** The cause went away; true when it was in force. */
  clear(kind: string): boolean {
    return this.#byKind.delete(kind);
  }

  has(kind: string): boolean {
    return this.#byKind.has(kind);
  }

  list(): StudioWarning[] {
    return [...this.#byKind.values()];
  }
}
