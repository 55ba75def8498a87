/**
 * The channel lifecycle hook in the Live view, in Chromium over the WebSocket transport (the popover harness:
 * the core in demo mode, whose embedded sandbox calls the hook as `GET ?action=create|close&chid=…`). The
 * sandbox's live list is made to hang, so no poll can answer: a channel that appears and disappears on screen
 * did so from the hook alone.
 */
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  closePages,
  openPopover,
  startPopoverHarness,
  type PopoverHarness,
  type PopoverPage,
} from './support/popover-harness.js';
import { ROOT } from '../support/built-cli.js';

const eventually = { timeout: 10_000, interval: 50 };
let h: PopoverHarness;
const pages: PopoverPage[] = [];

beforeAll(async () => {
  h = await startPopoverHarness(ROOT);
});

afterEach(async () => {
  h.sandbox.control.setFaults('api', null);
  await closePages(pages);
});

afterAll(async () => {
  await h?.close();
});

const liveList = (page: Page): Locator => page.getByRole('list', { name: 'Live channels' });
const endButton = (page: Page, id: string): Locator =>
  liveList(page).getByRole('button', { name: `End channel ${id}…`, exact: true });

describe('the Live view and the channel lifecycle hook', () => {
  it('shows an opened channel and drops a closed one at once, while every poll of the live list hangs', async () => {
    const popover = await openPopover(h, { tab: 'live' });
    pages.push(popover);
    const { page } = popover;

    const hooks: { action: string; channelId: string; status: number | null }[] = [];
    h.sandbox.control.events.on('channel-hook', (d: { action: string; channelId: string; status: number | null }) =>
      hooks.push(d),
    );
    // From now on the service's live list never answers in time: only the hook can change the view.
    h.sandbox.control.setFaults('api', { path: '/lambda/broadcast-channel-list', delayMs: 20_000 });

    h.sandbox.control.startBroadcast({ id: 'hooked-live', watchers: 3, record: false });
    await endButton(page, 'hooked-live').waitFor({ timeout: eventually.timeout });

    await h.sandbox.control.endBroadcast('hooked-live');
    await endButton(page, 'hooked-live').waitFor({ state: 'detached', timeout: eventually.timeout });
    await expect
      .poll(() => hooks.map((d) => `${d.action}:${d.channelId}:${d.status}`), eventually)
      .toEqual(expect.arrayContaining(['create:hooked-live:200', 'close:hooked-live:200']));
  });
});
