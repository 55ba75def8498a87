/**
 * TEST HELPER (not used by the app): pieces of the facts receive/health.ts judges, as the specs of the health
 * build them: a receiver listening where it was told to, with nothing wrong.
 */
import type { HealthFacts } from '../../../electron/core/receive/health.js';

/** The receiver's facts while it listens on its configured port 8787 and nothing refuses or holds it. */
export function listeningReceiver(patch: Partial<HealthFacts['receiver']> = {}): HealthFacts['receiver'] {
  return {
    host: '127.0.0.1',
    configuredPort: 8787,
    portFollows: false,
    listening: true,
    port: 8787,
    holder: null,
    down: null,
    refusing: null,
    ...patch,
  };
}
