/**
 * Launches Chromium for end-to-end tests: `CHROMIUM_PATH` if set, else Debian's /usr/bin/chromium
 * (Playwright's own browser download cannot run here). The flags keep it off the network except loopback.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
    (p): p is string => !!p,
  );
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error('Chromium not found: install it (apt-get install chromium) or set CHROMIUM_PATH.');
  }
  return found;
}

/** `extraArgs`: flags for one suite, e.g. the file-access flag the shell test's file:// page needs. */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...extraArgs,
    ],
  });
}
