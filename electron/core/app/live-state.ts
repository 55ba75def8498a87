/**
 * The live list as last fetched, and poll errors reported once per distinct problem rather than on every
 * poll while it lasts.
 */
import type { ErrorView } from '../../contract.js';
import type { Channel } from '../model.js';

export class LiveState {
  channels: Channel[] = [];
  #errorKey: string | null = null;

  /** A successful poll: returns the channels to push. */
  succeeded(channels: Channel[]): Channel[] {
    this.channels = channels;
    this.#errorKey = null;
    return channels;
  }

  /** A failed poll: true when this problem is new and worth a push. */
  failed(view: ErrorView): boolean {
    const key = `${view.code}\u0000${view.message}`;
    if (key === this.#errorKey) return false;
    this.#errorKey = key;
    return true;
  }

  /** Another backend or project: errors of the old one no longer apply. */
  forgetError(): void {
    this.#errorKey = null;
  }
}
