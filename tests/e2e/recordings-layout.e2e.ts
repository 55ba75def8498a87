/**
 * The Recordings tab's layout with what a long studio day brings: file names long enough to wrap break after
 * their separators (`-`, `_`, `.`, `/`) and never mid-word, unless one part alone is longer than the line, at
 * 300, 380 and 1280 px (the list's reasons, and the detail pane's title, file and reason); and with counts in
 * the thousands, the filter chips (All, Broadcasts, Web client, Problems) stay whole and never leave one chip
 * alone on a line, at 300 and 380 px, in English and Korean, light and dark. The page runs against what
 * `tally serve --sandbox` runs (support/popover-harness.ts).
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  closePages,
  horizontalOverflows,
  midWordBreaks,
  openPopover,
  startPopoverHarness,
  wrappedLabels,
  type OpenOptions,
  type PopoverHarness,
  type PopoverPage,
} from './support/popover-harness.js';
import { untilRecordings } from '../support/app/core-helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const eventually = { timeout: 20_000, interval: 50 };
/**
 * A channel whose file name runs over two lines at 300 and 380 px, with natural break points all along it but no
 * hyphen (after which Chromium would break anyway).
 */
const SEPARATED = 'studio_floor.quarterly_review.product_launch.keynote_rehearsal.take_two';
/** A channel whose name is one part longer than any line: the one place a mid-word break is right. */
const UNBROKEN = 'Averyveryverylongchannelidentifierwithoutanyseparatorsbetweenitswordsatall';
/** Failed recordings added to the journal: the Problems count runs into the thousands. */
const FAILED = 1234;
/** Where the file names show: the list's reasons, the detail pane's title, file and reason. */
const NAMES = '.entry .reason .text, .detail-pane h2, .detail-pane .file, .detail-pane .reason';

let h: PopoverHarness;
const pages: PopoverPage[] = [];

beforeAll(async () => {
  h = await startPopoverHarness(ROOT);
  const { control } = h.sandbox;
  for (const id of [SEPARATED, UNBROKEN]) {
    control.startBroadcast({ id, record: true, recordingBytes: 50_000, watchers: 2 });
    await control.endBroadcast(id);
  }
  await untilSaved([SEPARATED, UNBROKEN]);
}, 60_000);

afterEach(async () => {
  await closePages(pages);
});

afterAll(async () => {
  await h?.core.handlers['settings:update']({ language: 'system' });
  await h?.close();
});

/** Resolves once every channel's recording is saved. */
function untilSaved(channels: string[]): Promise<void> {
  return untilRecordings(h.core, (rows) =>
    channels.every((c) => rows.some((r) => r.channelId === c && r.state === 'saved')),
  );
}

async function open(opts: OpenOptions): Promise<Page> {
  const popover = await openPopover(h, { tab: 'recordings', ...opts });
  pages.push(popover);
  return popover.page;
}

describe('file names in Recordings', () => {
  it('wrap after their separators, not mid-word, at 300, 380 and 1280 px', async () => {
    const problems: string[] = [];
    for (const width of [300, 380, 1280]) {
      const page = await open({ width, height: 700 });
      await page.locator('.entry', { hasText: SEPARATED }).first().waitFor();
      // Unfolded, so every line of each reason is laid out and measured.
      const folded = page.locator('.entry .reason .toggle[aria-expanded="false"]');
      for (let left = await folded.count(); left > 0; left = await folded.count()) await folded.first().click();
      // In the wide layout, each of the two in the detail pane in turn.
      for (const channel of width >= 1000 ? [SEPARATED, UNBROKEN] : [SEPARATED]) {
        const at = `${width}px${width >= 1000 ? ` ${channel.slice(0, 12)}… selected` : ''}`;
        if (width >= 1000) {
          await page.locator('.entry', { hasText: channel }).first().locator('button.pick').click();
          await page.locator('.detail-pane .file', { hasText: channel }).waitFor();
        }
        const names = await page.locator(NAMES).allTextContents();
        expect(names.some((n) => n.includes(`${channel}.mp4`))).toBe(true);
        for (const b of await midWordBreaks(page, NAMES)) problems.push(`${at} ${b.element}: ${b.at}`);
        for (const o of await horizontalOverflows(page)) problems.push(`${at} overflow: ${JSON.stringify(o)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('the filter chips', () => {
  it('stay whole, none alone on a line, with counts in the thousands at 300 and 380 px (English, Korean, light, dark)', async () => {
    const pipeline = h.pipeline();
    // Held, so none of them is tried: each is written to the journal, then failed, as a download that gave up.
    await pipeline.setDownloadsPaused(true);
    for (let from = 0; from < FAILED; from += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, FAILED - from) }, async (_, i) => {
          const channelId = `day-${from + i}`;
          const { job } = await pipeline.inbox.add({
            channelId,
            url: `${h.sandbox.downloadOrigin}/lost/${channelId}.mp4`,
            announcedBytes: null,
            duration: null,
            thumbnail: null,
            shape: 'json',
          });
          await pipeline.inbox.update(job.key, { state: 'failed', error: 'gave up', attempts: 5 });
        }),
      );
    }
    const problems: string[] = [];
    try {
      for (const language of ['en', 'ko'] as const) {
        await h.core.handlers['settings:update']({ language });
        for (const colorScheme of ['light', 'dark'] as const) {
          for (const width of [300, 380]) {
            const at = `${language} ${colorScheme} ${width}px`;
            const page = await open({ width, colorScheme });
            const chips = page.locator('.filters label');
            await expect.poll(() => chips.last().textContent(), eventually).toMatch(/\d{3}/);
            const row = await page.locator('.filters').boundingBox();
            const boxes = await Promise.all((await chips.all()).map((c) => c.boundingBox()));
            if (!row || boxes.some((b) => b === null)) throw new Error(`${at}: chips not laid out`);
            // Whole: each chip inside the row, its label on one line.
            for (const [i, b] of boxes.entries()) {
              if (b && (b.x < row.x - 0.5 || b.x + b.width > row.x + row.width + 0.5)) {
                problems.push(`${at}: chip ${i + 1} cut (${Math.round(b.x)}..${Math.round(b.x + b.width)})`);
              }
            }
            for (const w of await wrappedLabels(page, '.filters label')) problems.push(`${at}: wraps ${w.text}`);
            // Never alone: every line of chips holds at least two.
            const lines = new Map<number, number>();
            for (const b of boxes) if (b) lines.set(Math.round(b.y), (lines.get(Math.round(b.y)) ?? 0) + 1);
            for (const [, count] of lines) {
              if (count < 2) problems.push(`${at}: a chip alone on its line (${[...lines.values()].join('+')})`);
            }
            for (const o of await horizontalOverflows(page)) problems.push(`${at}: ${JSON.stringify(o)}`);
          }
        }
      }
      // The row follows the window (and its page stays free of errors: closePages checks): one line when a wide
      // window holds every chip, two rows again when narrow.
      await h.core.handlers['settings:update']({ language: 'en' });
      const page = await open({ width: 380 });
      const row = page.locator('.filters');
      await expect.poll(() => row.getAttribute('class'), eventually).toMatch(/crowded/);
      await page.setViewportSize({ width: 1280, height: 560 });
      await expect.poll(() => row.getAttribute('class'), eventually).not.toMatch(/crowded/);
      await page.setViewportSize({ width: 300, height: 560 });
      await expect.poll(() => row.getAttribute('class'), eventually).toMatch(/crowded/);
    } finally {
      await pipeline.setDownloadsPaused(false);
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
