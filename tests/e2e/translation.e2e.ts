/**
 * Korean all the way through, as a producer sees it: at 300, 380 and 1280 px, every tab (Settings unfolded, the
 * tunnel's reason showing), every visible string of the page (text, and the titles, labels and placeholders a
 * pointer or a screen reader reads) is checked for English words left over, beyond names and terms kept in Latin
 * letters and the data itself (channel IDs, file names, paths, addresses), a refused client recording's reason
 * included. In English and Korean alike, the reason
 * on the tunnel's status line is never cut off. The main process's own words (tray menu, notifications) are
 * checked in Korean through the Electron stand-in, in shell.e2e.ts.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  closePages,
  openPopover,
  startPopoverHarness,
  type PageGlobals,
  type PopoverHarness,
  type PopoverPage,
} from './support/popover-harness.js';
import { untilRecordings } from '../support/app/core-helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const eventually = { timeout: 10_000, interval: 50 };
const WIDTHS = [300, 380, 1280] as const;
const TABS = ['live', 'search', 'recordings', 'settings'] as const;

/**
 * Latin words a Korean sentence keeps as they are (the same list as renderer/src/locales/ko.spec.ts): names of
 * products and protocols, and terms the producer types or sees elsewhere in Latin letters.
 */
const KEPT = new Set(
  [
    'Tally tally serve login chmod ngrok localtunnel cloudflared Tailscale Funnel JetStream nats nats-server tls',
    'gnome-keyring KeePassXC ID URL API OS CSV MD5 CORS TLS DNS S3 http https recordUrl receiverHost receiverPort',
    'origin ms s kB KB MB GB B English',
  ]
    .join(' ')
    .split(' '),
);

/** Words of a visible string that are not data: placeholders, addresses, paths, file names, flags, variables. */
function wordsOf(text: string, data: readonly string[]): string[] {
  let rest = text.replace(/\{\w+\}/g, ' ').replace(/\S+\.(mp4|webm|ogg|m4a|part)\b/g, ' ');
  for (const value of data) rest = rest.split(value).join(' ');
  rest = rest
    .replace(/\bhttps?:\/\/\S+/g, ' ')
    .replace(/(^|\s)[~/][^\s]*/g, ' ')
    .replace(/\b[\w-]+(?:\.[\w-]+)+\b/g, ' ')
    .replace(/\b[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+\b/g, ' ')
    .replace(/(^|\s)--?[a-z][\w-]*/g, ' ');
  return rest.match(/[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*/g) ?? [];
}

/** Every visible text of the page, with the title, aria-label and placeholder of each visible element. */
function visibleStrings(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as PageGlobals).document;
    type El = { getClientRects(): { length: number }; getAttribute(name: string): string | null };
    const shown = (el: El) => el.getClientRects().length > 0;
    const out: string[] = [];
    const walker = (doc as unknown as { createTreeWalker(root: unknown, what: number): TreeWalker }).createTreeWalker(
      doc.body,
      4,
    );
    interface Sibling {
      nodeName: string;
      nodeType: number;
      previousSibling: Sibling | null;
    }
    interface TreeWalker {
      nextNode(): (Sibling & { textContent: string | null; parentElement: El | null }) | null;
    }
    /** Whether only <wbr>s and comments (Svelte's anchors) stand between this text node and the text before it. */
    const joinsPrevious = (node: Sibling): boolean => {
      let sibling = node.previousSibling;
      let wbr = false;
      while (sibling && (sibling.nodeName === 'WBR' || sibling.nodeType === 8)) {
        wbr ||= sibling.nodeName === 'WBR';
        sibling = sibling.previousSibling;
      }
      return wbr && sibling?.nodeType === 3;
    };
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.parentElement || !shown(node.parentElement)) continue;
      // A file name offered breaks with <wbr> (BreakableText) is one string, not one per piece.
      if (joinsPrevious(node) && out.length > 0) {
        out[out.length - 1] = `${out.at(-1) ?? ''}${node.textContent ?? ''}`.trim();
        continue;
      }
      const text = node.textContent?.trim();
      if (text) out.push(text);
    }
    for (const el of doc.querySelectorAll('[title], [aria-label], [placeholder]') as unknown as El[]) {
      if (!shown(el)) continue;
      for (const name of ['title', 'aria-label', 'placeholder']) {
        const value = el.getAttribute(name)?.trim();
        if (value) out.push(value);
      }
    }
    return out;
  });
}

let h: PopoverHarness;
const pages: PopoverPage[] = [];

beforeAll(async () => {
  h = await startPopoverHarness(ROOT);
  const { control } = h.sandbox;
  control.startBroadcast({ id: 'evening-news', record: true, recordingBytes: 60_000, watchers: 4 });
  await control.endBroadcast('evening-news');
  control.startBroadcast({ id: 'morning-show', watchers: 12, record: false });
  await untilSaved();
  // A client recording refused (its page origin is not allowed): its reason comes from the upload route as a note.
  const { uploadUrl } = await h.core.handlers['tunnel:status']();
  const refused = await fetch(String(uploadUrl), {
    method: 'POST',
    headers: {
      origin: 'https://stranger.example',
      'content-type': 'audio/ogg',
      'x-filename': 'svc.evening-newsRR.ogg',
    },
    body: 'OggS',
  });
  expect(refused.status).toBe(403);
  // A tunnel whose check fails, so the status line carries a reason (a closed loopback port: nothing leaves).
  await h.core.handlers['settings:update']({ tunnel: { provider: 'url', publicUrl: 'http://127.0.0.1:1/' } });
});

afterEach(async () => {
  await closePages(pages);
});

afterAll(async () => {
  await h?.core.handlers['settings:update']({ language: 'system' });
  await h?.close();
});

/** Resolves once a recording is saved. */
function untilSaved(): Promise<void> {
  return untilRecordings(h.core, (rows) => rows.some((r) => r.state === 'saved'));
}

async function showTab(page: Page, index: number): Promise<void> {
  await page.getByRole('tab').nth(index).click();
  await page.getByRole('tabpanel').waitFor();
  await page.evaluate(() => {
    const doc = (globalThis as unknown as PageGlobals).document;
    for (const details of doc.querySelectorAll('details')) details.setAttribute('open', '');
  });
}

describe('the popover in Korean', () => {
  it('leaves no English in any visible string of any tab, at 300, 380 and 1280 px', async () => {
    await h.core.handlers['settings:update']({ language: 'ko' });
    const data = ['evening-news', 'morning-show', h.home, h.recordingsDir, 'e2e-project', 'sandbox-service'];
    const leftovers = new Set<string>();
    for (const width of WIDTHS) {
      const popover = await openPopover(h, { width });
      pages.push(popover);
      const { page } = popover;
      await expect.poll(() => page.getByRole('tab').first().textContent(), eventually).toBe('실시간');
      for (const [index, tab] of TABS.entries()) {
        await showTab(page, index);
        if (tab === 'live') await page.getByText('morning-show').first().waitFor();
        if (tab === 'recordings') {
          await page
            .getByText(/^evening-news · /)
            .first()
            .waitFor();
          await page
            .getByText(/페이지 출처 https:\/\/stranger\.example/)
            .first()
            .waitFor();
        }
        for (const text of await visibleStrings(page)) {
          const english = wordsOf(text, data).filter((word) => !KEPT.has(word));
          if (english.length > 0) leftovers.add(`${width}px ${tab}: "${text}" (${english.join(', ')})`);
        }
      }
    }
    expect([...leftovers]).toEqual([]);
  });
});

describe('the tunnel status line', () => {
  it('shows its whole reason, never cut off, in English and Korean at every width', async () => {
    const cut: string[] = [];
    for (const language of ['en', 'ko'] as const) {
      await h.core.handlers['settings:update']({ language });
      for (const width of WIDTHS) {
        const popover = await openPopover(h, { width, tab: 'settings' });
        pages.push(popover);
        const reason = popover.page.locator('.status-line .reason').first();
        await expect
          .poll(async () => ((await reason.textContent().catch(() => '')) ?? '').length, eventually)
          .toBeGreaterThan(3);
        const { scroll, client, ellipsis } = await reason.evaluate((el) => {
          const node = el as unknown as { scrollWidth: number; clientWidth: number };
          const style = (
            globalThis as unknown as { getComputedStyle(e: unknown): { textOverflow: string } }
          ).getComputedStyle(el);
          return { scroll: node.scrollWidth, client: node.clientWidth, ellipsis: style.textOverflow === 'ellipsis' };
        });
        if (ellipsis || scroll > client + 1) cut.push(`${language} ${width}px: ${await reason.textContent()}`);
      }
    }
    expect(cut).toEqual([]);
  });
});
