/**
 * App-wide state: what the core says about itself, the connection, and background errors for the banner.
 */
import type { AppInfo, ErrorView, TallyBridge } from '../../../electron/contract.js';
import type { ConnectionSource, ConnectionState } from '../lib/transport-ws.js';

export interface BannerError extends ErrorView {
  id: number;
  /** Which reconfiguration of the core it came from (see `#epoch`). */
  epoch: number;
}

/** Keeps the banner readable when the same failure repeats on every poll. */
const MAX_ERRORS = 3;

export class AppStore {
  info = $state.raw<AppInfo | null>(null);
  connection = $state<ConnectionState>('connecting');
  errors = $state.raw<BannerError[]>([]);
  #nextId = 1;
  /**
   * Counts the core's reconfigurations: it pushes `tunnel:status` at the end of every one, after any error
   * the attempt raised. An error from an earlier attempt is stale once a later attempt has finished (if the
   * problem remains, that attempt pushed it again), so switching a failing tunnel back to Off clears it.
   */
  #epoch = 0;

  constructor(
    private readonly bridge: TallyBridge,
    private readonly source: ConnectionSource,
  ) {
    this.connection = source.state;
  }

  get demo(): boolean {
    return this.info?.demo ?? false;
  }

  /** Native pickers and reveal-in-folder exist only in the Electron shell. */
  get native(): boolean {
    return this.info?.native ?? false;
  }

  /** Open and Show in folder work (the tray app, or a browser on the machine that has the files). */
  get fileActions(): boolean {
    return this.info?.fileActions ?? false;
  }

  /** Subscribes to errors and connection changes; `onReconnected` runs after a dropped link comes back. */
  start(onReconnected?: () => void): () => void {
    let wasDown = false;
    const offState = this.source.onState((state) => {
      this.connection = state;
      if (state === 'reconnecting') wasDown = true;
      if (state === 'open' && wasDown) {
        wasDown = false;
        onReconnected?.();
        void this.load();
      }
    });
    const offError = this.bridge.on('app:error', (error) => this.push(error));
    const offTunnel = this.bridge.on('tunnel:status', () => {
      const current = this.#epoch;
      this.#epoch += 1;
      const fresh = this.errors.filter((e) => e.epoch >= current);
      if (fresh.length !== this.errors.length) this.errors = fresh;
    });
    // Demo mode ends when credentials are entered (and can be turned on again): the pill follows it.
    const offSettings = this.bridge.on('settings:changed', (settings) => {
      if (this.info && this.info.demo !== settings.demoMode) this.info = { ...this.info, demo: settings.demoMode };
    });
    void this.load();
    return () => {
      offState();
      offError();
      offTunnel();
      offSettings();
    };
  }

  async load(): Promise<void> {
    try {
      this.info = await this.bridge.app.info();
    } catch {
      // The header simply shows no demo pill; views report their own failures.
    }
  }

  push(error: ErrorView): void {
    const rest = this.errors.filter((e) => e.code !== error.code || e.message !== error.message);
    this.errors = [...rest, { ...error, id: this.#nextId++, epoch: this.#epoch }].slice(-MAX_ERRORS);
  }

  dismiss(id: number): void {
    this.errors = this.errors.filter((e) => e.id !== id);
  }
}
