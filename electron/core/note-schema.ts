/**
 * The schema of a note (notes.ts) for whatever reads one back from outside: a journal line, an upload log line,
 * a message over the contract. Apart from notes.ts so that code which only writes notes (the download engine's
 * worker thread) does not load zod.
 */
import { z } from 'zod';
import type { Note } from './notes.js';

export const NoteSchema: z.ZodType<Note> = z
  .object({
    code: z.string().min(1).max(64),
    params: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  })
  .strict();
