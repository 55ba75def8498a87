/**
 * The popover's layout in Chromium, in English and Korean: nothing sticks out at the tray popover's 300 and
 * 380 px, short labels (states, pills, buttons) stay on one line, and a wide window (1000 px) shows each
 * tab as a list with the selected item beside it, or Settings as a readable column. The page runs against
 * what `tally serve --sandbox` runs (support/popover-harness.ts), seeded with a saved recording, a failed one
 * with a long reason, a live channel and past channels with long IDs.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  closePages,
  horizontalOverflows,
  openPopover,
  startPopoverHarness,
  wrappedLabels,
  type OpenOptions,
  type PageGlobals,
  type PopoverHarness,
  type PopoverPage,
} from './support/popover-harness.js';
import { untilRecordings } from '../support/app/core-helpers.js';
import { contrast, inkRows, pixelAt } from './support/png-ink.js';

const ROOT = join(import.meta.dirname, '..', '..');
const MIN = 60_000;
const eventually = { timeout: 10_000, interval: 50 };
const LONG_ID = 'a-rather-long-channel-identifier-from-the-studio-floor';
/** The download host of the failed recording: its reason quotes it, so the reason runs over two lines. */
const FAR_HOST = 'recordings-archive.eu-west-2.storage.elsewhere.example';
/** Labels that must never break over two lines: state names, pills, tags, buttons, tabs, filters. */
const SHORT_LABELS = [
  '.status-line > span:nth-child(2)',
  '.conn-label',
  '.pill',
  '.badge',
  '.state-tag',
  '.btn',
  '[role="tab"]',
  '.filters label',
  '.segmented label',
  '.link',
  '.toggle',
].join(', ');

let h: PopoverHarness;
const pages: PopoverPage[] = [];

beforeAll(async () => {
  h = await startPopoverHarness(ROOT);
  const { control } = h.sandbox;
  control.startBroadcast({ id: 'morning-show', record: true, recordingBytes: 100_000, watchers: 3 });
  await control.endBroadcast('morning-show');
  await untilState('morning-show', 'saved');
  // A redirect to an origin Tally does not download from: failed, with a reason longer than two lines.
  control.setFaults('download', { redirectTo: `https://${FAR_HOST}/workshop.mp4` });
  try {
    control.startBroadcast({ id: 'workshop-a', record: true, recordingBytes: 100_000, watchers: 3 });
    await control.endBroadcast('workshop-a');
    await untilState('workshop-a', 'failed');
  } finally {
    control.setFaults('download', null);
  }
  const now = Date.now();
  control.addEndedChannels([
    {
      id: `${LONG_ID}-earlier`,
      createdAt: new Date(now - 50 * MIN),
      endedAt: new Date(now - 5 * MIN),
      peerCount: 123_456,
    },
    { id: 'news-update', createdAt: new Date(now - 30 * MIN), endedAt: new Date(now - 20 * MIN), peerCount: 913 },
  ]);
  control.startBroadcast({ id: LONG_ID, watchers: 123_456, record: false });
});

afterEach(async () => {
  await closePages(pages);
});

afterAll(async () => {
  await h?.close();
});

/** Resolves once the channel's recording is in `state`. */
function untilState(channelId: string, state: string): Promise<void> {
  return untilRecordings(h.core, (rows) => rows.some((r) => r.channelId === channelId && r.state === state));
}

async function open(opts: OpenOptions = {}): Promise<PopoverPage> {
  const popover = await openPopover(h, opts);
  pages.push(popover);
  return popover;
}

/** Search the last hour (the first preset) and wait for the result rows. */
async function searchLastHour(page: Page): Promise<void> {
  await page.getByRole('radio').first().check();
  await page.locator('form button[type="submit"]').click();
  await page.getByRole('table').getByRole('cell').first().waitFor();
}

async function unfoldAll(page: Page): Promise<void> {
  await page.evaluate(() => {
    const doc = (globalThis as unknown as PageGlobals).document;
    for (const details of doc.querySelectorAll('details')) details.setAttribute('open', '');
  });
}

describe('popover layout', () => {
  it('fits 300 and 380 px wide in every tab and the first-run guide (both paths), in English and Korean, labels on one line', async () => {
    const problems: string[] = [];
    const check = async (page: Page, where: string) => {
      for (const o of await horizontalOverflows(page)) problems.push(`${where}: ${JSON.stringify(o)}`);
      for (const w of await wrappedLabels(page, SHORT_LABELS)) problems.push(`${where}: wraps ${JSON.stringify(w)}`);
    };
    try {
      for (const language of ['en', 'ko'] as const) {
        // The first-run guide: its welcome and its first step.
        await h.core.handlers['settings:update']({ language, firstRunDone: false });
        for (const width of [300, 380]) {
          const guide = await open({ width });
          await expect
            .poll(() => guide.page.locator('#fr-title').textContent(), eventually)
            .toBe(language === 'en' ? 'Welcome to Tally' : 'Tally에 오신 것을 환영합니다');
          await check(guide.page, `${language} ${width}px first run, welcome`);
          await guide.page.locator('button.primary').first().click();
          await guide.page.locator('#fr-title + *').waitFor();
          await guide.page.locator('input').first().waitFor();
          await check(guide.page, `${language} ${width}px first run, account`);
          // The studio member's path: its first step, the team server and its credentials.
          const join = await open({ width });
          await join.page
            .getByRole('button', { name: language === 'en' ? 'I’m joining a studio' : '스튜디오에 합류하기' })
            .click();
          await join.page.locator('#fr-title + * + form input').first().waitFor();
          await check(join.page, `${language} ${width}px first run, joining a studio`);
        }
        await h.core.handlers['settings:update']({ firstRunDone: true });
        for (const width of [300, 380]) {
          const { page } = await open({ width });
          const at = `${language} ${width}px`;
          const tabs = page.getByRole('tab');
          await expect.poll(() => tabs.first().textContent(), eventually).toBe(language === 'en' ? 'Live' : '실시간');
          await page.getByRole('button', { name: new RegExp(LONG_ID) }).waitFor();
          await check(page, `${at} live`);
          await page.getByRole('button', { name: new RegExp(LONG_ID) }).click();
          await page.getByRole('dialog').waitFor();
          await check(page, `${at} live, confirm dialog`);
          await page.keyboard.press('Escape');
          await page.getByRole('dialog').waitFor({ state: 'detached' });

          await tabs.nth(1).click();
          await page.getByRole('radiogroup').waitFor();
          await check(page, `${at} search`);
          await searchLastHour(page);
          await check(page, `${at} search, results`);
          await page.getByRole('radio').nth(3).check();
          await page.locator('#search-until').fill('2000-01-01T00:00');
          await page.getByRole('alert').waitFor();
          await check(page, `${at} search, custom range with an error`);

          await tabs.nth(2).click();
          await page.getByText(/^workshop-a · /).waitFor();
          await check(page, `${at} recordings`);

          await tabs.nth(3).click();
          await page.getByRole('tabpanel').locator('select').first().waitFor();
          // Unfold every folded part so its fields are measured too.
          await unfoldAll(page);
          await check(page, `${at} settings`);
          // Each connection's own fields: the public URL (a closed loopback port: nothing leaves the machine),
          // then ngrok's domain and authtoken. Without an authtoken the core stores the choice and the tunnel
          // status says the authtoken is missing, the long line that must fit too.
          for (const tunnel of [
            { provider: 'url', publicUrl: 'http://127.0.0.1:1/' },
            { provider: 'ngrok', ngrokDomain: `${LONG_ID}.ngrok-free.app` },
          ] as const) {
            await h.core.handlers['settings:update']({ tunnel });
            const shown = (await open({ width, tab: 'settings' })).page;
            await shown
              .locator(tunnel.provider === 'url' ? 'input[id$="-publicUrl"]' : 'input[id$="-ngrokToken"]')
              .last()
              .waitFor();
            await unfoldAll(shown);
            await check(shown, `${at} settings, ${tunnel.provider}`);
          }
          await h.core.handlers['settings:update']({ tunnel: { provider: 'none' } });
        }
      }
    } finally {
      await h.core.handlers['settings:update']({
        language: 'system',
        firstRunDone: true,
        tunnel: { provider: 'none' },
      });
    }
    expect(problems).toEqual([]);
  }, 150_000); // Two widths, two languages, every tab and both first-run paths: about a minute on a busy machine.

  it('at 1000 px shows the list with the selection beside it, and Settings as a column, without overflow', async () => {
    const problems: string[] = [];
    /** The tab's list and its detail pane side by side, each with room. */
    const besideEachOther = async (page: Page, where: string) => {
      const panel = page.getByRole('tabpanel');
      const pane = panel.getByRole('complementary');
      await pane.getByRole('heading').first().waitFor();
      const list = await panel.locator('.view').first().boundingBox();
      const detail = await pane.boundingBox();
      if (!list || !detail) throw new Error(`${where}: list or detail not laid out`);
      expect(list.width, where).toBeGreaterThanOrEqual(300);
      expect(detail.width, where).toBeGreaterThanOrEqual(300);
      expect(detail.x, where).toBeGreaterThanOrEqual(list.x + list.width - 1);
    };
    const check = async (page: Page, where: string) => {
      for (const o of await horizontalOverflows(page)) problems.push(`${where}: ${JSON.stringify(o)}`);
    };
    try {
      for (const language of ['en', 'ko'] as const) {
        await h.core.handlers['settings:update']({ language });
        const { page } = await open({ width: 1000, height: 700 });
        const tabs = page.getByRole('tab');
        await expect.poll(() => tabs.first().textContent(), eventually).toBe(language === 'en' ? 'Live' : '실시간');

        await besideEachOther(page, `${language} live`);
        await check(page, `${language} live`);

        await tabs.nth(1).click();
        await searchLastHour(page);
        await besideEachOther(page, `${language} search`);
        await check(page, `${language} search`);

        await tabs.nth(2).click();
        await besideEachOther(page, `${language} recordings`);
        // The failed one's reason, whole, in the pane.
        await page
          .getByText(/^workshop-a · /)
          .first()
          .click();
        await page
          .getByRole('complementary')
          .getByText(`https://${FAR_HOST} is not an allowed download origin`, { exact: false })
          .waitFor();
        await check(page, `${language} recordings`);

        await tabs.nth(3).click();
        await page.getByRole('tabpanel').locator('select').first().waitFor();
        await unfoldAll(page);
        const panel = await page.getByRole('tabpanel').boundingBox();
        const column = await page.getByRole('tabpanel').locator('section').first().boundingBox();
        if (!panel || !column) throw new Error('settings not laid out');
        expect(column.width).toBeLessThanOrEqual(640);
        // Centred in the panel, not stretched across it.
        expect(Math.abs(column.x - panel.x - (panel.x + panel.width - column.x - column.width))).toBeLessThan(24);
        await check(page, `${language} settings`);
      }
    } finally {
      await h.core.handlers['settings:update']({ language: 'system' });
    }
    expect(problems).toEqual([]);
  });

  it('cuts a long recording reason at two lines and unfolds it by keyboard at 300 px', async () => {
    const { page } = await open({ width: 300, tab: 'recordings' });
    const entry = page.getByRole('listitem').filter({ hasText: /^workshop-a · / });
    const reason = entry.getByText(`https://${FAR_HOST} is not an allowed download origin`, { exact: false });
    // Found by what it controls: its name changes from Show all to Show less.
    const toggle = entry.locator('button[aria-controls^="rec-reason-"]');
    expect(await toggle.textContent()).toBe('Show all');
    const lines = () =>
      reason.evaluate((el: unknown) => {
        const { getComputedStyle } = globalThis as unknown as {
          getComputedStyle(e: unknown): { lineHeight: string };
        };
        const p = el as { clientHeight: number; scrollHeight: number };
        return {
          shown: p.clientHeight / parseFloat(getComputedStyle(el).lineHeight),
          cut: p.scrollHeight > p.clientHeight,
        };
      });
    expect(await lines()).toMatchObject({ cut: true });
    expect(Math.round((await lines()).shown)).toBe(2);
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');

    await toggle.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => toggle.getAttribute('aria-expanded'), eventually).toBe('true');
    const unfolded = await lines();
    expect(unfolded.cut).toBe(false);
    expect(unfolded.shown).toBeGreaterThan(2.5);
    expect(await toggle.textContent()).toBe('Show less');
  });

  it('centres button labels as drawn, and sets the app icon apart from a dark header', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page } = await open({ colorScheme, tab: 'live' });
      const buttons = [
        page.getByRole('button', { name: new RegExp(LONG_ID) }),
        page.getByRole('tab').nth(1),
        page.getByRole('button', { name: 'Search', exact: true }),
      ];
      for (const [i, button] of buttons.entries()) {
        if (i === 1) {
          await button.click();
          continue;
        }
        const box = await button.boundingBox();
        if (!box) throw new Error('button not laid out');
        // Inside the border; labels without descenders, so the ink runs from the capitals to the baseline.
        const png = await page.screenshot({
          clip: { x: box.x + 2, y: box.y + 2, width: box.width - 4, height: box.height - 4 },
        });
        const ink = inkRows(png);
        if (!ink) throw new Error('no label drawn');
        const offset = (ink.top + ink.bottom) / 2 - (ink.height - 1) / 2;
        // Device pixels at scale 2: within half a CSS pixel of the middle.
        expect(
          Math.abs(offset),
          `${colorScheme} ${await button.textContent()}: ${JSON.stringify(ink)}`,
        ).toBeLessThanOrEqual(1);
      }

      // The icon's dark tile: its edge (the top middle of the image) against the tile itself.
      const logo = await page.locator('header img').boundingBox();
      if (!logo) throw new Error('icon not laid out');
      const png = await page.screenshot({ clip: { x: logo.x, y: logo.y, width: logo.width, height: logo.height } });
      // At scale 2 the middle column of the image is at logo.width device pixels.
      const middle = Math.round(logo.width);
      expect(contrast(pixelAt(png, middle, 0), pixelAt(png, middle, 6)), colorScheme).toBeGreaterThan(1.4);
    }
  });
});
