/**
 * A producer's computer as a studio member, in Chromium over the WebSocket transport against a real
 * `nats-server`: no service credentials at all, so the app starts in demo mode as it chooses to; Settings →
 * Studio → "Follows a studio" leaves demo mode (the sandbox stops), turns automatic webhook registration off
 * with a note, and the recording the receiver announces is mirrored here and listed as on this computer.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { announceRecording } from '../support/studio-announce.js';
import { openPopover, startPopoverHarness, type PopoverHarness, type PopoverPage } from './support/popover-harness.js';

const ROOT = join(import.meta.dirname, '..', '..');
const eventually = { timeout: 15_000, interval: 50 };

let h: PopoverHarness;
let nats: NatsServer;
let pages: PopoverPage[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  h = await startPopoverHarness(ROOT, { chosenDemo: true });
});

afterEach(async () => {
  const errors = pages.flatMap((p) => p.pageErrors);
  await Promise.all(pages.map((p) => p.close()));
  pages = [];
  expect(errors, 'uncaught errors in the page').toEqual([]);
});

afterAll(async () => {
  await h?.close();
  await nats?.close();
});

describe('a studio member without service credentials', () => {
  it('follows the studio from Settings, leaves demo mode and lists the mirrored recording', async () => {
    expect((await h.core.handlers['credentials:status']()).source).toBe('sandbox');
    expect((await h.core.handlers['app:info']()).demo).toBe(true);
    const popover = await openPopover(h, { tab: 'settings' });
    pages.push(popover);
    const { page } = popover;
    const studio = page.getByRole('region', { name: 'Studio' });
    await studio.getByText('Studio mode is off.').waitFor();

    await studio.getByRole('radio', { name: /^Follows a studio/ }).check();
    await studio.getByLabel('Team server', { exact: true }).fill(nats.url);
    await studio.getByLabel('Name of this computer in the studio').fill('e2e-member');
    await studio.getByRole('button', { name: 'Save studio settings' }).click();
    await studio.getByText(/^Connected to the team server/).waitFor();
    expect((await h.core.handlers['app:info']()).demo).toBe(false);
    expect(h.core.testOnly.sandbox()).toBeNull();

    // The receiver alone registers the webhook URL (the service keeps one): the setting is off here, and says why.
    const autoRegister = page.getByRole('checkbox', { name: 'Register automatically when the URL changes' });
    await expect.poll(() => autoRegister.isDisabled(), eventually).toBe(true);
    await page.getByText(/^This computer follows a studio: the studio's receiver registers the webhook URL/).waitFor();

    const source = join(h.recordingsDir, '..', 'team-source.bin');
    await writeFile(source, Buffer.alloc(90_000, 7));
    await announceRecording(nats.url, source, 'member-show');
    await page.getByRole('tab', { name: 'Recordings' }).click();
    const rows = page.getByRole('region', { name: 'Studio recordings' });
    await expect
      .poll(() => rows.textContent({ timeout: 1000 }).catch(() => ''), eventually)
      .toMatch(/member-show\.mp4\s*On this computer/);
  });
});
