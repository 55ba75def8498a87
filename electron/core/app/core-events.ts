/**
 * The app core's push events: listeners that cannot break the core or each other, and tray snapshots
 * computed only while someone listens and pushed only when they changed.
 */
import { EventEmitter } from 'node:events';
import { describe } from './core-messages.js';
import type { AppCoreEvents, TraySnapshot } from './types.js';

export class CoreEvents {
  readonly #events = new EventEmitter();
  readonly #log: (line: string) => void;
  readonly #snapshot: () => TraySnapshot;
  /** Called when a tray starts or stops listening: the live poller's schedule depends on it. */
  readonly #trayListenersChanged: () => void;
  #lastTray = '';

  constructor(log: (line: string) => void, snapshot: () => TraySnapshot, trayListenersChanged: () => void) {
    this.#log = log;
    this.#snapshot = snapshot;
    this.#trayListenersChanged = trayListenersChanged;
    this.#events.setMaxListeners(0);
  }

  /** Whether a tray wants snapshots (and so the live count in the background). */
  get trayListening(): boolean {
    return this.#events.listenerCount('tray:snapshot') > 0;
  }

  on<E extends keyof AppCoreEvents>(event: E, listener: (payload: AppCoreEvents[E]) => void): () => void {
    const safe = (payload: AppCoreEvents[E]) => {
      try {
        listener(payload);
      } catch (error) {
        // One broken listener (a closed window) must not break the core or the other listeners.
        this.#log(`a ${event} listener failed: ${describe(error)}`);
      }
    };
    this.#events.on(event, safe);
    if (event === 'tray:snapshot') {
      // Snapshots are not computed while nobody listens: the next change must reach the new listener.
      this.#lastTray = '';
      this.#trayListenersChanged();
    }
    return () => {
      this.#events.off(event, safe);
      if (event === 'tray:snapshot') this.#trayListenersChanged();
    };
  }

  emit<E extends keyof AppCoreEvents>(event: E, payload: AppCoreEvents[E]): void {
    this.#events.emit(event, payload);
  }

  /** Pushes a tray snapshot when someone listens and it differs from the last one pushed. */
  updateTray(): void {
    if (!this.trayListening) return;
    const snapshot = this.#snapshot();
    const text = JSON.stringify(snapshot);
    if (text === this.#lastTray) return;
    this.#lastTray = text;
    this.emit('tray:snapshot', snapshot);
  }
}
