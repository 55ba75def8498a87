/**
 * The core's health (contract-health.ts): what the header, the tunnel line and the own-URL step show. Loaded
 * once, then kept by `health:changed`; the core judges, the popover only shows.
 */
import type {
  HealthComponentId,
  HealthComponentView,
  HealthView,
  SettingsView,
  TallyBridge,
} from '../../../electron/contract.js';

export class HealthStore {
  view = $state.raw<HealthView | null>(null);
  /** Counts pushes, so a slow `health:get` never overwrites a newer push. */
  #pushes = 0;

  constructor(private readonly bridge: TallyBridge) {}

  start(): () => void {
    const off = this.bridge.on('health:changed', (view) => {
      this.#pushes += 1;
      this.view = view;
    });
    void this.load();
    return off;
  }

  async load(): Promise<void> {
    const pushes = this.#pushes;
    try {
      const view = await this.bridge.health.get();
      if (pushes === this.#pushes) this.view = view;
    } catch {
      // The header then shows no health line (an older core, or the link is down); pushes still update it.
    }
  }

  /** One component's judgement, or undefined when the core does not report it. */
  component(id: HealthComponentId): HealthComponentView | undefined {
    return this.view?.components.find((c) => c.id === id);
  }

  /**
   * The local address a reverse proxy must forward to: the configured port (with an own URL it never moves, and
   * it is the one to forward to even while another program holds it), or where the receiver listens when the
   * settings leave the port to the OS (0). Null until the health is known.
   */
  get forwardTo(): string | null {
    const r = this.view?.receiver;
    const port = r ? r.configuredPort || r.port : null;
    if (!r || !port) return null;
    // Listening on every interface: loopback is the address a proxy on this computer forwards to.
    const host = r.host === '0.0.0.0' || r.host === '::' ? '127.0.0.1' : r.host.includes(':') ? `[${r.host}]` : r.host;
    return `${host}:${port}`;
  }
}

/**
 * "127.0.0.1:8787" for "Forward to …": the health's receiver address, else (before the health is known) the port
 * the settings ask for. Null when neither says (a port left to the OS and not listening yet).
 */
export function forwardAddress(health: HealthStore | undefined, settings: SettingsView | null): string | null {
  return health?.forwardTo ?? (settings?.receiverPort ? `127.0.0.1:${settings.receiverPort}` : null);
}
