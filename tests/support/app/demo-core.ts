/**
 * TEST HELPER (not used by the app): a demo-mode app core with the in-memory keychain, for specs that drive it
 * over its embedded sandbox (real HTTP, real temp folders).
 */
import { MemorySecretStore } from '../../../electron/core/credentials.js';
import { createAppCore, type AppCoreOptions, type TallyAppCore } from '../../../electron/core/app/app-core.js';

export function createDemoCore(home: string, extra: Partial<AppCoreOptions> = {}): Promise<TallyAppCore> {
  return createAppCore({
    home,
    secrets: new MemorySecretStore(),
    transport: 'ws',
    demo: true,
    env: {},
    version: '9.9.9',
    // timeFactor 1 keeps the demo's own broadcasts running for minutes: the test decides what ends.
    sandboxOptions: { timeFactor: 1, searchIndexDelayMs: 0, seed: 11 },
    // The demo's web client uploads on every broadcast end; only the tests about it turn it on.
    demoWebClient: false,
    ...extra,
  });
}
