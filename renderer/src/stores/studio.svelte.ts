/**
 * Studio mode as the popover sees it: the mode, the team URL, whether credentials are stored (never the
 * password or token), the connection state and the studio recordings on this computer, kept current by the
 * core's `studio:changed` pushes.
 */
import type {
  RequestMap,
  StudioInput,
  StudioView,
  TallyBridge,
  TeamCredentialsInput,
} from '../../../electron/contract.js';
import { messageOf } from '../lib/errors.js';

export class StudioStore {
  view = $state.raw<StudioView | null>(null);
  error = $state<string | null>(null);

  constructor(private readonly bridge: TallyBridge) {}

  start(): () => void {
    const off = this.bridge.on('studio:changed', (v) => (this.view = v));
    void this.load();
    return off;
  }

  async load(): Promise<void> {
    try {
      this.view = await this.bridge.studio.get();
      this.error = null;
    } catch (error) {
      this.error = messageOf(error);
    }
  }

  async set(input: StudioInput): Promise<void> {
    this.view = await this.bridge.studio.set(input);
  }

  async saveCredentials(url: string, credentials: TeamCredentialsInput): Promise<void> {
    this.view = await this.bridge.studio.setCredentials(url, credentials);
  }

  async clearCredentials(): Promise<void> {
    this.view = await this.bridge.studio.clearCredentials();
  }

  test(url: string): Promise<RequestMap['studio:test']['result']> {
    return this.bridge.studio.test(url);
  }
}
