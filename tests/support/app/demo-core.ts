/**
 * TEST HELPER (not used by the app): a demo-mode app core with the in-memory keychain, for specs that drive it
 * over its embedded sandbox (real HTTP, real temp folders). Its sandbox and pipeline are kept as the core makes
 * them (core-parts.ts): `partsOf(core)`.
 */
import { MemorySecretStore } from '../../../electron/core/credentials.js';
import { createAppCore, type AppCore, type AppCoreOptions } from '../../../electron/core/app/app-core.js';
import { CoreParts } from './core-parts.js';

const parts = new WeakMap<AppCore, CoreParts>();

export async function createDemoCore(home: string, extra: Partial<AppCoreOptions> = {}): Promise<AppCore> {
  const kept = new CoreParts();
  const core = await createAppCore({
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
    ...kept.options,
    ...extra,
  });
  parts.set(core, kept);
  return core;
}

/** The sandbox and pipeline of a core made by `createDemoCore`. */
export function partsOf(core: AppCore): CoreParts {
  const kept = parts.get(core);
  if (!kept) throw new Error('not a core made by createDemoCore');
  return kept;
}
