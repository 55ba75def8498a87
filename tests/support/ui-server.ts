/**
 * `tally serve`'s page server over a quiet app core (no demo, no credentials) in a temp home, on a clock the
 * test moves: for the one-time code exchange, which fetches no page.
 */
import { join } from 'node:path';
import { createAppCore } from '../../electron/core/app/app-core.js';
import { startUiServer, type UiServer } from '../../electron/core/app/ui-server.js';
import { MemorySecretStore } from '../../electron/core/credentials.js';
import { openSettingsStore } from '../../electron/core/settings.js';

export async function startQuietUiServer(
  home: string,
  now: () => number,
): Promise<{ ui: UiServer; close: () => Promise<void> }> {
  openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: join(home, 'recordings'), demoMode: false });
  const core = await createAppCore({ home, secrets: new MemorySecretStore(), transport: 'ws', env: {}, version: '9' });
  // No page is fetched by these tests: the home folder does as the static root.
  const ui = await startUiServer({ core, staticDir: home, now });
  return {
    ui,
    close: async () => {
      await ui.close();
      await core.stop();
    },
  };
}
