/** The `none` tunnel provider: no public URL, the receiver is reachable locally only. */
import { TunnelProviderBase } from './types.js';
import type { LocalTarget, TunnelOpenResult } from './types.js';

/**
 * No tunnel: the receiver is reachable on this machine (and the LAN, if it listens there) only. Useful
 * for the sandbox, or when something outside Tally already forwards traffic and the URL is not known.
 */
export class NoTunnel extends TunnelProviderBase {
  readonly kind = 'none' as const;

  /** Always resolves with a null public URL. */
  async open(_local: LocalTarget, _signal?: AbortSignal): Promise<TunnelOpenResult> {
    return { publicBaseUrl: null };
  }

  async close(): Promise<void> {}
}
