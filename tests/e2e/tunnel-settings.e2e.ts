/**
 * Choosing a tunnel in the popover's Settings that cannot start yet (issue 12: ngrok before its authtoken is
 * stored) in Debian's Chromium against the headless core in demo mode (support/popover-harness.ts). The page
 * must show the authtoken field at once, without a reload, and a status line that names it; storing the
 * authtoken then opens the tunnel. The ngrok cloud cannot be reached here, so the core gets the loopback fake
 * of the ngrok SDK (fakeNgrokSdk), which only stands in for ngrok's edge.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeNgrokSdk, type FakeNgrokSdk } from '../support/tunnels/fake-ngrok-sdk.js';
import { openPopover, startPopoverHarness, type PageElement, type PopoverHarness } from './support/popover-harness.js';

const ROOT = join(import.meta.dirname, '..', '..');
const AUTHTOKEN = '2fake-e2e-ngrok-authtoken';

let h: PopoverHarness;
let sdk: FakeNgrokSdk;

beforeAll(async () => {
  sdk = fakeNgrokSdk({ acceptedAuthtoken: AUTHTOKEN });
  h = await startPopoverHarness(ROOT, { ngrokSdk: sdk });
});

afterAll(async () => {
  await h?.close();
  await sdk?.close();
});

describe('Settings → How the service reaches Tally', () => {
  it('shows the ngrok authtoken field at once when ngrok is chosen, says it is missing, and opens once it is saved', async () => {
    const p = await openPopover(h, { tab: 'settings' });
    try {
      const { page } = p;
      const status = page.locator('.status-line').filter({ hasText: /^\s*(Off|Error|Connecting…|Reachable)/ });
      await status.getByText('Off', { exact: true }).waitFor();

      await page.locator('select[id$="-provider"]').selectOption('ngrok');
      // No reload: the saved choice reaches the page, and with it the authtoken field.
      const token = page.locator('input[id$="-ngrokToken"]');
      await token.waitFor();
      await page.getByText('No authtoken yet: ngrok needs one.').waitFor();
      await status.getByText('Error', { exact: true }).waitFor();
      const explained = status.getByText(/ngrok needs an authtoken/);
      expect(await explained.textContent()).toContain(
        'set it in Settings → How the service reaches Tally → ngrok authtoken',
      );
      // Shown whole, not cut off: it is the one line that says what to do.
      expect(await explained.evaluate((el: PageElement) => el.scrollWidth <= el.clientWidth)).toBe(true);
      // Nothing beside the choice says it failed: it was saved, and recordings are still received.
      expect(await page.locator('[id$="-provider-error"]').count()).toBe(0);
      expect((await h.core.handlers['tunnel:status']()).localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\//);
      expect(sdk.forwardCalls).toEqual([]);

      await token.fill(AUTHTOKEN);
      await page.getByRole('button', { name: 'Save authtoken' }).click();
      await page.getByText('Authtoken stored in the keychain').waitFor();
      // The tunnel opens with it, without restarting the app: the public webhook URL appears.
      const webhookUrl = page.locator('input[id$="-webhookUrl"]');
      await webhookUrl.waitFor();
      expect(await webhookUrl.inputValue()).toMatch(/^http:\/\/[0-9a-f]{12}\.ngrok-free\.test\/hooks\//);
      expect(sdk.forwardCalls.map((c) => c.authtoken)).toEqual([AUTHTOKEN]);
      expect(await status.getByText('Error', { exact: true }).count()).toBe(0);
      expect(p.pageErrors).toEqual([]);
    } finally {
      await p.close();
      await h.core.handlers['settings:update']({ tunnel: { provider: 'none' } });
    }
  });
});
