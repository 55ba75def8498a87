/**
 * The studio link as the health and the Studio view judge it: its type, and the judgement of a link without a
 * running publisher (a member's follower, a receiver held back in demo mode or without a pipeline). A running
 * publisher's link is judged beside it (publisher-link.ts).
 */
import type { Note } from '../notes.js';

/** The studio link as the health judges it (also what the app's Studio view says of a receiver). */
export interface StudioLink {
  /** `warning`: connected, with a standing warning (a namesake, a full folder, a member lagging toward retention). */
  state: 'connecting' | 'connected' | 'warning' | 'unreachable' | 'error' | 'off';
  reason: Note[];
}

/** What the studio's own status says: the connection's state and why, its standing warnings, held back or not. */
export interface StudioStatusFacts {
  state: Exclude<StudioLink['state'], 'warning'>;
  notes: Note[] | null;
  /** Standing warnings of the follower (by kind, newest last). */
  warnings: readonly Note[];
  /** Chosen as the receiver in demo mode: the sandbox's recordings are not shared. */
  heldBack: boolean;
}

/**
 * The link for the health when no publisher runs: the connection's state, or `warning` while connected with
 * standing warnings; null while studio mode is off.
 */
export function studioLinkOf(facts: StudioStatusFacts): StudioLink | null {
  if (facts.state === 'connected' && facts.warnings.length > 0)
    return { state: 'warning', reason: [...facts.warnings] };
  // Chosen as the receiver in demo mode: nothing is lost (they are not real recordings), so a warning to read, not
  // an error to act on.
  if (facts.heldBack) return { state: 'warning', reason: facts.notes ?? [] };
  if (facts.state === 'off') return null;
  return { state: facts.state, reason: facts.notes ?? [] };
}
