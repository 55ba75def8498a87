/**
 * TEST HELPER (not used by the app): a stand-in for `TunnelSupervisor`'s event surface as `AutoRegistrar` sees
 * it, so registrar specs can announce URL changes and good self-checks without running a tunnel.
 */
import { EventEmitter } from 'node:events';
import type { UrlChange } from '../../../electron/core/tunnels/supervisor.js';
import type { RegistrationSource } from '../../../electron/core/tunnels/register.js';
import type { TunnelStatus } from '../../../electron/core/tunnels/types.js';
import { tunnelStatus } from './tunnel-status.js';

export class FakeRegistrationSource
  extends EventEmitter<{ 'url-changed': [UrlChange]; status: [TunnelStatus] }>
  implements RegistrationSource
{
  registeredUrl: string | null = null;
  status: TunnelStatus = tunnelStatus({ provider: 'localtunnel', state: 'connecting' });
  setRegisteredUrl(url: string | null): void {
    this.registeredUrl = url;
    this.status = { ...this.status, registered: url !== null && url === this.status.publicUrl };
  }
  change(url: string): void {
    const previous = this.status.publicUrl;
    this.status = { ...this.status, publicUrl: url, registered: false };
    this.emit('url-changed', { previous, current: url, publicBaseUrl: url.replace(/\/hooks\/.*$/, '') });
  }
  reachable(): void {
    this.status = { ...this.status, state: 'reachable' };
    this.emit('status', { ...this.status });
  }
}
