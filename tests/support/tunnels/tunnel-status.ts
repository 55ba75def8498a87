/**
 * TEST HELPER (not used by the app): a tunnel status as the supervisor reports it, with nothing open and nothing
 * said, for specs that need one and change only what they test.
 */
import type { TunnelStatus } from '../../../electron/core/tunnels/types.js';
import { tunnelOff } from '../../../electron/core/view-shapes.js';

/** No tunnel, no URL, nothing registered or checked; `patch` says what differs. */
export function tunnelStatus(patch: Partial<TunnelStatus> = {}): TunnelStatus {
  return { ...tunnelOff('none'), ...patch };
}
