/**
 * What `tally serve --sandbox` runs, started in-process for the popover end-to-end tests: the headless core
 * in demo mode (createAppCore with demo: true) behind the UI server (startUiServer), plus Chromium pages
 * sized like the popover.
 *
 * Why not `main(['serve', '--sandbox', ...])` itself: serve never says where its embedded sandbox listens, so
 * a test could not reach the sandbox's control to start and end broadcasts, and serve always turns on the
 * sandbox's random demo simulation. The calls below are the ones serve.ts makes, with the test seams the
 * core offers (`sandboxOptions`, `pollIntervalMs`; `startSandbox` and `openPipeline`, which keep the sandbox and
 * pipeline the core makes: core-parts.ts) and an in-memory keychain.
 *
 * A second, standalone sandbox stands in for the real service: the configured endpoints point at it, so
 * entering credentials in Settings (which leaves demo mode) talks to loopback only.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, link, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { desktopFileHooks } from '../../../electron/cli/desktop-open.js';
import { uiDir } from '../../../electron/cli/serve.js';
import { createAppCore, type AppCore } from '../../../electron/core/app/app-core.js';
import { startUiServer, type UiServer } from '../../../electron/core/app/ui-server.js';
import { MemorySecretStore } from '../../../electron/core/credentials.js';
import { startSandbox, type Sandbox } from '../../../electron/core/sandbox/index.js';
import { openSettingsStore } from '../../../electron/core/settings.js';
import type { NgrokSdk } from '../../../electron/core/tunnels/index.js';
import type { RecordingPipeline } from '../../../electron/core/pipeline/pipeline.js';
import { CoreParts } from '../../support/app/core-parts.js';
import { launchChromium } from '../browser.js';

/** The popover's size in the tray app. */
export const POPOVER = { width: 380, height: 560 } as const;

export interface PopoverHarness {
  core: AppCore;
  /** The demo sandbox the core runs (its `control` drives broadcasts). */
  sandbox: Sandbox;
  /** The recording pipeline the core opened last (its inbox, its events). */
  pipeline(): RecordingPipeline;
  /** Stand-in for the real service, for the credentials tests. */
  service: Sandbox;
  serviceSecret: string;
  secrets: MemorySecretStore;
  home: string;
  recordingsDir: string;
  /** What the desktop was asked to open: one argument per line, written by the stand-in `xdg-open`. */
  openedLog: string;
  /**
   * How far the core's download clock runs ahead of real time (deadlines and retries): a test moves it to
   * let a recording's 6 hours pass at once, and puts it back to 0.
   */
  clock: { offsetMs: number };
  /** A fresh one-time page link at each read, as `tally serve` prints one (each opens one page once). */
  readonly url: string;
  browser: Browser;
  close(): Promise<void>;
}

export interface PopoverPage {
  page: Page;
  context: BrowserContext;
  /** Text of every WebSocket frame the page received. */
  received: string[];
  /** Uncaught errors in the page. */
  pageErrors: string[];
  close(): Promise<void>;
}

/** The built renderer `tally serve` serves; built here when missing so the file also runs on its own. */
export function ensureRendererBuilt(root: string): string {
  const dir = uiDir();
  if (existsSync(join(dir, 'index.html'))) return dir;
  const built = spawnSync('npx', ['vite', 'build', '--logLevel', 'error'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0 || !existsSync(join(dir, 'index.html'))) {
    throw new Error(`${join(dir, 'index.html')} is missing and could not be built: run npm run build first.`);
  }
  return dir;
}

/** The state folder of a run that refreshes the committed screenshots (see stateFolder). */
const SCREENSHOT_HOME = join(tmpdir(), 'tally-popover-e2e');

/**
 * The harness's state folder, and how to give it back. An ordinary run gets a folder of its own (mkdtemp), so
 * two runs at once (two worktrees) never share state. A run that refreshes the committed screenshots
 * (`fixedHome`) uses one fixed name instead, because the Settings screenshot shows the recordings folder path
 * and must not change on every run; a lock file taken with `wx` keeps a second such run out (it fails at once,
 * naming the lock) rather than letting both wipe the same folder.
 */
async function stateFolder(fixedHome: boolean): Promise<{ home: string; release: () => Promise<void> }> {
  if (!fixedHome) {
    const home = await mkdtemp(join(tmpdir(), 'tally-popover-e2e-'));
    return { home, release: () => rm(home, { recursive: true, force: true }) };
  }
  const lock = `${SCREENSHOT_HOME}.lock`;
  // The lock appears with its process ID already in it (written aside, then linked or renamed into place): a
  // second run never reads it empty, takes it for a dead run's and shares the folder.
  const mine = `${lock}.${process.pid}`;
  await writeFile(mine, String(process.pid));
  try {
    await link(mine, lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const owner = Number(await readFile(lock, 'utf8').catch(() => ''));
    if (owner > 0 && processAlive(owner)) {
      throw new Error(`Another run is refreshing the screenshots (process ${owner} holds ${lock}); wait for it.`, {
        cause: error,
      });
    }
    // Left by a run that was killed: take it over.
    await rename(mine, lock);
  } finally {
    await rm(mine, { force: true });
  }
  await rm(SCREENSHOT_HOME, { recursive: true, force: true });
  await mkdir(SCREENSHOT_HOME, { recursive: true });
  return {
    home: SCREENSHOT_HOME,
    release: async () => {
      await rm(SCREENSHOT_HOME, { recursive: true, force: true });
      await rm(lock, { force: true });
    },
  };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Starts the core in demo mode with the sandbox's own simulation off (the tests decide what is live), the
 * UI server in front of it, and Chromium. `fixedHome`: use the one fixed state folder the committed
 * screenshots show (see stateFolder); popover.e2e.ts sets it when TALLY_UPDATE_SCREENSHOTS is set.
 * `chosenDemo`: demo mode only as the app chooses it (no credentials), not forced as `TALLY_DEMO=1` does.
 * `ngrokSdk`: the loopback fake of the ngrok SDK (fakeNgrokSdk), for a test that chooses ngrok.
 * `retryBaseMs`: the first wait before a failed download is tried again (100 ms unless given): a test that shows
 * "Retry now" resuming a download at once sets it long, so no automatic attempt can come first.
 */
export async function startPopoverHarness(
  root: string,
  opts: { fixedHome?: boolean; chosenDemo?: boolean; ngrokSdk?: NgrokSdk; retryBaseMs?: number } = {},
): Promise<PopoverHarness> {
  const staticDir = ensureRendererBuilt(root);
  const { home, release } = await stateFolder(opts.fixedHome ?? false);
  const recordingsDir = join(home, 'recordings');
  // Port 0: other test files may be running and 8787 is the default receiver port.
  // The first-run guide is done: the tests that need it turn it back on.
  openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: recordingsDir, firstRunDone: true });

  // The desktop's opener, for Open and Show in folder as `tally serve` on a desktop runs them: a stand-in
  // `xdg-open` (the one fake here: no desktop session runs in CI) that writes its arguments to a file.
  const binDir = join(home, 'bin');
  const openedLog = join(home, 'opened.txt');
  await mkdir(binDir);
  await writeFile(
    join(binDir, 'xdg-open'),
    `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a" >> '${openedLog}'; done\n`,
  );
  await chmod(join(binDir, 'xdg-open'), 0o755);

  const serviceSecret = `e2e-${randomBytes(12).toString('hex')}`;
  const service = await startSandbox({ serviceId: 'e2e-project', secret: serviceSecret, seed: 3 });
  const secrets = new MemorySecretStore();
  const clock = { offsetMs: 0 };
  const parts = new CoreParts();
  const core = await createAppCore({
    home,
    secrets,
    transport: 'ws',
    demo: opts.chosenDemo !== true,
    hooks: desktopFileHooks({ env: { DISPLAY: ':e2e', PATH: binDir }, platform: 'linux', loopbackOnly: true }),
    env: {
      TALLY_BASE_URL: service.endpoints.baseUrl,
      TALLY_CONSOLE_API_URL: service.endpoints.consoleApiUrl,
      TALLY_ADMIN_URL: service.endpoints.adminUrl,
      // Where the stand-in serves its recordings: the download-origin policy must allow it, as the real
      // service's download host is allowed by default.
      TALLY_DOWNLOAD_ORIGINS: service.downloadOrigin,
    },
    version: '0.1.0',
    sandboxOptions: { demo: false, seed: 7, timeFactor: 1, searchIndexDelayMs: 0 },
    // Its uploads on every broadcast end carry random names: the Recordings screenshot would change each run.
    demoWebClient: false,
    ...parts.options,
    pollIntervalMs: 250,
    // One connection per download, so a throttled download moves at exactly the throttled rate.
    pipelineOverrides: {
      segments: 1,
      retryBaseMs: opts.retryBaseMs ?? 100,
      now: () => Date.now() + clock.offsetMs,
      // The ngrok cloud cannot be reached here: a test that chooses ngrok passes the loopback fake SDK.
      ...(opts.ngrokSdk ? { ngrokSdk: opts.ngrokSdk } : {}),
    },
  });
  let ui: UiServer | null = null;
  let browser: Browser | null = null;
  const close = async () => {
    await browser?.close();
    await ui?.close();
    await core.stop();
    await service.close();
    await release();
  };
  try {
    await core.start();
    if (!parts.startedSandbox) throw new Error('demo mode did not start the embedded sandbox');
    const sandbox = parts.sandbox;
    const server = await startUiServer({ core, staticDir, host: '127.0.0.1', port: 0 });
    ui = server;
    browser = await launchChromium();
    return {
      core,
      sandbox,
      pipeline: () => parts.pipeline,
      service,
      serviceSecret,
      secrets,
      home,
      recordingsDir,
      openedLog,
      clock,
      get url() {
        return server.oneTimeUrl();
      },
      browser,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface OpenOptions {
  colorScheme?: 'light' | 'dark';
  /** Tab to open (the popover keeps the tab in the hash). */
  tab?: 'live' | 'search' | 'recordings' | 'settings';
  /** Freezes the page's Date at this instant (timers keep running), so relative times are stable. */
  fixedTime?: number;
  /** Page size in CSS pixels (default: the popover's). */
  width?: number;
  height?: number;
}

/** What openPopover needs: a Chromium and a UI server's link (any core behind startUiServer, not only the harness's). */
export type PopoverHost = Pick<PopoverHarness, 'browser' | 'url'>;

/** Closes the pages a test opened (emptying the list), then fails the test if any of them threw. */
export async function closePages(pages: PopoverPage[]): Promise<void> {
  const open = pages.splice(0);
  await Promise.all(open.map((p) => p.close()));
  expect(
    open.flatMap((p) => p.pageErrors),
    'uncaught errors in the page',
  ).toEqual([]);
}

/** Opens the popover in its own browser context and waits until it is connected. */
export async function openPopover(h: PopoverHost, opts: OpenOptions = {}): Promise<PopoverPage> {
  const context = await h.browser.newContext({
    viewport: { width: opts.width ?? POPOVER.width, height: opts.height ?? POPOVER.height },
    deviceScaleFactor: 2,
    colorScheme: opts.colorScheme ?? 'light',
    locale: 'en-US',
    timezoneId: 'UTC',
    reducedMotion: 'reduce',
  });
  context.setDefaultTimeout(15_000);
  if (opts.fixedTime !== undefined) await context.clock.setFixedTime(opts.fixedTime);
  const page = await context.newPage();
  const received: string[] = [];
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('websocket', (ws) => {
    ws.on('framereceived', ({ payload }) => received.push(typeof payload === 'string' ? payload : payload.toString()));
  });
  await page.goto(`${h.url}#${opts.tab ?? 'live'}`);
  // In either language: a test may have switched the popover to Korean.
  await page.getByText(/^(Connected|연결됨)$/).waitFor({ state: 'attached' });
  // The health line comes with the core's first answer and pushes the page down: measure nothing before it.
  await page.getByRole('region', { name: /^(Health|상태)$/ }).waitFor({ state: 'attached' });
  return { page, context, received, pageErrors, close: () => context.close() };
}

/** A text node, as the in-page checks see it. */
export interface PageText {
  parentElement: { closest(selector: string): unknown } | null;
}

/** The few DOM members the in-page checks use (this project compiles tests without the DOM library). */
export interface PageElement {
  tagName: string;
  classList: Iterable<string>;
  textContent: string | null;
  clientWidth: number;
  scrollWidth: number;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  getBoundingClientRect(): { left: number; right: number; width: number; height: number };
}
export interface PageGlobals {
  document: {
    activeElement: PageElement | null;
    documentElement: PageElement;
    body: { querySelectorAll(selector: string): Iterable<PageElement> };
    querySelectorAll(selector: string): Iterable<PageElement>;
    createRange(): {
      selectNodeContents(node: PageText): void;
      getClientRects(): Iterable<{ top: number; width: number; height: number }>;
    };
    /** `whatToShow` 4: text nodes only. */
    createTreeWalker(root: PageElement, whatToShow: 4): { nextNode(): PageText | null };
  };
  getComputedStyle(el: PageElement): {
    visibility: string;
    clipPath: string;
    clip: string;
    overflowX: string;
  };
}

/** One element that reaches past the page's left or right edge, or whose content spills out of its box. */
export interface Overflow {
  element: string;
  left: number;
  right: number;
  scrollWidth: number;
  clientWidth: number;
}

/**
 * Every visible element that sticks out horizontally: its box starts left of 0 or ends right of the page
 * width (the body clips, so nothing would scroll: it would simply be cut off), or its own content is wider
 * than it while it lets overflow show (text spilling over a neighbour). Half a pixel of tolerance covers
 * sub-pixel layout.
 */
export function horizontalOverflows(page: Page): Promise<Overflow[]> {
  return page.evaluate(() => {
    const { document, getComputedStyle } = globalThis as unknown as PageGlobals;
    const width = document.documentElement.clientWidth;
    const found: Overflow[] = [];
    const describe = (el: PageElement) => {
      const label = el.getAttribute('aria-label') ?? el.getAttribute('id') ?? (el.textContent ?? '').trim();
      return `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} "${label.slice(0, 40)}"`;
    };
    for (const el of document.body.querySelectorAll('*')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden') continue;
      // Screen-reader-only text is a clipped 1 px box by design.
      if (style.clipPath !== 'none' || style.clip !== 'auto') continue;
      const spills = style.overflowX === 'visible' && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 0.5;
      if (box.left < -0.5 || box.right > width + 0.5 || spills) {
        found.push({
          element: describe(el),
          left: Math.round(box.left),
          right: Math.round(box.right),
          scrollWidth: el.scrollWidth,
          clientWidth: el.clientWidth,
        });
      }
    }
    return found;
  });
}

/** A short label whose text runs over more than one line. */
export interface WrappedLabel {
  element: string;
  text: string;
  lines: number;
}

/**
 * Every visible element matching `selector` whose text is laid out on more than one line: a state name, pill
 * or button label that breaks mid-word ("꺼" over "짐") when a neighbour squeezes it. Lines are counted from
 * the text's own line boxes (the distinct tops of its client rects), so padding and line height do not matter.
 */
export function wrappedLabels(page: Page, selector: string): Promise<WrappedLabel[]> {
  return page.evaluate((selector) => {
    const { document } = globalThis as unknown as PageGlobals;
    const found: WrappedLabel[] = [];
    for (const el of document.querySelectorAll(selector)) {
      const text = (el.textContent ?? '').trim();
      if (text === '' || el.getBoundingClientRect().width === 0) continue;
      // The text's own line boxes, without screen-reader-only text (laid out in a clipped 1 px box).
      const rects: { top: number; height: number }[] = [];
      const walker = document.createTreeWalker(el, 4);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement?.closest('.sr-only')) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        for (const r of range.getClientRects()) if (r.width > 0 && r.height > 0) rects.push(r);
      }
      rects.sort((a, b) => a.top - b.top);
      // Boxes on one line (text in two sizes, an icon) start within a few pixels of each other; the next line
      // starts at least a line height lower.
      const gap = Math.min(...rects.map((r) => r.height)) / 2;
      let lines = 0;
      let lineTop = -Infinity;
      for (const rect of rects) {
        if (rect.top - lineTop <= gap) continue;
        lines += 1;
        lineTop = rect.top;
      }
      if (lines > 1) {
        found.push({ element: `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`, text, lines });
      }
    }
    return found;
  }, selector);
}

/**
 * A screenshot for the README: the popover as it is, without the text caret. Small files: the popover is
 * mostly flat colour, which PNG compresses well.
 */
export async function shoot(page: Page, path: string): Promise<void> {
  await page.screenshot({ path, caret: 'hide', animations: 'disabled' });
}

/** A line break inside a word of a file name, path or address, where a break after a separator would do. */
export interface MidWordBreak {
  element: string;
  /** The text around the break, `|` where the line ends. */
  at: string;
}

/**
 * Every line break inside the text of the visible elements matching `selector` that falls mid-word: not at a
 * space, and not after a `-`, `_`, `.`, `/` or `\`. A break inside a part (the run between two such points)
 * that is wider than the element's line on its own is the fallback, not a fault. Lines are told apart by the
 * tops of each character's box, as wrappedLabels does.
 */
export function midWordBreaks(page: Page, selector: string): Promise<MidWordBreak[]> {
  return page.evaluate((selector) => {
    interface Box {
      top: number;
      width: number;
      height: number;
    }
    interface TextNode {
      data: string;
    }
    const { document, getComputedStyle } = globalThis as unknown as {
      document: {
        querySelectorAll(s: string): Iterable<PageElement>;
        createTreeWalker(root: PageElement, what: 4): { nextNode(): TextNode | null };
        createRange(): {
          setStart(node: TextNode, offset: number): void;
          setEnd(node: TextNode, offset: number): void;
          getClientRects(): Iterable<Box>;
        };
      };
      getComputedStyle(el: PageElement): { paddingLeft: string; paddingRight: string };
    };
    const natural = (c: string) => /[\s\-_./\\]/.test(c);
    const found: MidWordBreak[] = [];
    for (const el of document.querySelectorAll(selector)) {
      if (el.getBoundingClientRect().width === 0) continue;
      const style = getComputedStyle(el);
      const line = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      // Each character with its box (none for a space the line ended on).
      const chars: { c: string; box: Box | null }[] = [];
      const walker = document.createTreeWalker(el, 4);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < node.data.length; i += 1) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const box = [...range.getClientRects()].find((r) => r.width > 0 && r.height > 0) ?? null;
          chars.push({ c: node.data[i] ?? '', box });
        }
      }
      const text = chars.map((ch) => ch.c).join('');
      let previous = -1;
      for (let i = 0; i < chars.length; i += 1) {
        const box = chars[i]?.box;
        if (!box || /\s/.test(chars[i]?.c ?? '')) continue;
        const before = previous >= 0 ? chars[previous]?.box : null;
        const newLine = before && box.top - before.top > Math.min(box.height, before.height) / 2;
        const spaced = previous >= 0 && i - previous > 1;
        if (newLine && !spaced && !natural(chars[previous]?.c ?? '')) {
          // The part the break falls in: from the separator before it to the one after it.
          let start = previous;
          while (start > 0 && !natural(chars[start - 1]?.c ?? '')) start -= 1;
          let end = i;
          while (end < chars.length && !natural(chars[end]?.c ?? '')) end += 1;
          const width = chars.slice(start, end).reduce((sum, ch) => sum + (ch.box?.width ?? 0), 0);
          if (width <= line + 0.5) {
            found.push({
              element: `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`,
              at: `${text.slice(Math.max(0, i - 24), i)}|${text.slice(i, i + 24)}`,
            });
          }
        }
        previous = i;
      }
    }
    return found;
  }, selector);
}
