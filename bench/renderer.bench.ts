/**
 * The popover in Chromium with big lists: 10,000 live channels on the Live tab and 50,000 search results on
 * the Search tab, against the same page with 100 rows (the ratio shows how flat the cost stays as lists grow).
 * The built renderer (dist/renderer) is served by a stub of `tally serve` (bench/lib/ui-stub.ts) and driven
 * with playwright-core at the popover's size. Times are taken inside the page with performance.now(): a
 * requestAnimationFrame poll notices the rows, then forces style and layout before reading the clock, so the
 * figure includes the layout of what is shown.
 * - Live: navigation start to the live rows in the DOM: all of them, or for the virtualised list the rows in
 *   view, with the list's size (aria-setsize) reaching the count.
 * - Search: click on Search to the first virtualised rows, then scrollTop = end to the last row being shown.
 * - DOM size: `document.getElementsByTagName('*').length` once the rows are there.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../tests/e2e/browser.js';
import { median, type Benchmark, type BenchRow } from './lib/harness.js';
import { LIVE_MARKER, startUiStub, type UiStub } from './lib/ui-stub.js';

const ROOT = 'dist/renderer';
const VIEWPORT = { width: 380, height: 560 };
const SMALL = 100;
const TIMEOUT_MS = 120_000;

interface LiveFigures {
  ms: number;
  nodes: number;
  heapMb: number;
  /** A pushed poll result from its arrival at the page's WebSocket listener to being laid out. */
  updateMs: number;
}
interface SearchFigures {
  ms: number;
  nodes: number;
  scrollMs: number;
}

/**
 * Installed before the page's own scripts: notes when `target` live rows are laid out, when a pushed event
 * reaches the page's WebSocket listener, and when the pushed update (spotted by its marker) is laid out.
 */
function liveProbe(target: number): string {
  return `(() => {
    const marker = ${JSON.stringify(LIVE_MARKER.toLocaleString('en'))};
    const add = WebSocket.prototype.addEventListener;
    WebSocket.prototype.addEventListener = function (type, listener, options) {
      if (type !== 'message') return add.call(this, type, listener, options);
      const timed = (e) => {
        if (typeof e.data === 'string' && e.data.startsWith('{"type":"event"')) window.__pushAt = performance.now();
        return listener.call(this, e);
      };
      return add.call(this, type, timed, options);
    };
    const check = () => {
      if (window.__liveReady === undefined) {
        // A virtualised list renders only the rows in view; each carries the size of the whole list.
        const rows = document.querySelectorAll('ul.rows > li.row:not(.skeleton)');
        const total = Math.max(rows.length, Number(rows[0]?.getAttribute('aria-setsize') ?? 0));
        if (total >= ${target}) {
          void document.documentElement.offsetHeight;
          window.__liveReady = performance.now();
        }
      } else if (window.__pushAt !== undefined) {
        const first = document.querySelector('ul.rows > li.row .watchers');
        if (first && first.textContent.includes(marker)) {
          void document.documentElement.offsetHeight;
          window.__updateMs = performance.now() - window.__pushAt;
          return;
        }
      }
      requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  })();`;
}

/**
 * A page-side promise for `window[name]` to be set (polled: the page's CSP forbids waitForFunction strings).
 * Bounded: `page.evaluate` has no timeout of its own, and a page that never gets there (a guide or an error in
 * front of the list) must fail the bench, not hang the run.
 */
function waitFor(name: string): string {
  return `new Promise((resolve, reject) => {
    const started = performance.now();
    const check = () =>
      window.${name} !== undefined
        ? resolve(window.${name})
        : performance.now() - started > ${TIMEOUT_MS}
          ? reject(new Error('${name} was never set: the page did not reach the measured state'))
          : setTimeout(check, 20);
    check();
  })`;
}

/** Runs in the page: submit the search, wait for rows, then scroll to the end and wait for the last row. */
function searchScript(count: number): string {
  return `(async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    const until = async (pred) => { while (!pred()) await frame(); };
    const submit = () => document.querySelector('form.query button[type=submit]');
    await until(() => submit() && !submit().disabled);
    const t0 = performance.now();
    submit().click();
    await until(() => document.querySelectorAll('.table .vrow').length > 0);
    void document.documentElement.offsetHeight;
    const t1 = performance.now();
    const nodes = document.getElementsByTagName('*').length;
    const viewport = document.querySelector('.table .viewport');
    const t2 = performance.now();
    viewport.scrollTop = viewport.scrollHeight;
    await until(() => document.querySelector('.table .vrow[aria-rowindex="${count + 1}"]'));
    void document.documentElement.offsetHeight;
    const t3 = performance.now();
    return { ms: t1 - t0, nodes, scrollMs: t3 - t2 };
  })()`;
}

async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  return context.newPage();
}

async function measureLive(browser: Browser, stub: UiStub, count: number): Promise<LiveFigures> {
  stub.setSizes({ live: count, search: 0 });
  const page = await newPage(browser);
  page.setDefaultTimeout(TIMEOUT_MS);
  try {
    await page.addInitScript({ content: liveProbe(count) });
    await page.goto(`${stub.pageUrl}#live`);
    const ms = (await page.evaluate(waitFor('__liveReady'))) as number;
    const nodes = (await page.evaluate("document.getElementsByTagName('*').length")) as number;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const heap = metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? NaN;
    if (stub.pushLiveUpdate(count) !== 1) throw new Error('the page did not subscribe to channels:live');
    const updateMs = (await page.evaluate(waitFor('__updateMs'))) as number;
    return { ms, nodes, heapMb: heap / 1e6, updateMs };
  } finally {
    await page.context().close();
  }
}

async function measureSearch(browser: Browser, stub: UiStub, count: number): Promise<SearchFigures> {
  stub.setSizes({ live: 3, search: count });
  const page = await newPage(browser);
  try {
    await page.goto(`${stub.pageUrl}#search`);
    page.setDefaultTimeout(TIMEOUT_MS);
    return (await page.evaluate(searchScript(count))) as SearchFigures;
  } finally {
    await page.context().close();
  }
}

const bench: Benchmark = async (ctx) => {
  if (!existsSync(join(ROOT, 'index.html'))) {
    throw new Error(`${ROOT}/index.html is missing: run "npm run build" (or "npm run build:renderer") first`);
  }
  const liveCount = ctx.quick ? 2_000 : 10_000;
  const searchCount = ctx.quick ? 10_000 : 50_000;
  const runs = ctx.quick ? 1 : 3;
  const stub = await startUiStub(ROOT);
  const browser = await launchChromium();
  const live = { big: [] as LiveFigures[], small: [] as LiveFigures[] };
  const search = { big: [] as SearchFigures[], small: [] as SearchFigures[] };
  try {
    // One unmeasured load so the first measured one does not pay for Chromium's cold caches.
    await measureLive(browser, stub, SMALL);
    for (let i = 0; i < runs; i += 1) {
      const order = i % 2 === 0 ? (['big', 'small'] as const) : (['small', 'big'] as const);
      for (const size of order) {
        const l = await measureLive(browser, stub, size === 'big' ? liveCount : SMALL);
        live[size].push(l);
        const s = await measureSearch(browser, stub, size === 'big' ? searchCount : SMALL);
        search[size].push(s);
        ctx.log(
          `${size}: live ${l.ms.toFixed(0)} ms, ${l.nodes} nodes, heap ${l.heapMb.toFixed(1)} MB, ` +
            `update ${l.updateMs.toFixed(0)} ms; ` +
            `search ${s.ms.toFixed(0)} ms, ${s.nodes} nodes, scroll ${s.scrollMs.toFixed(0)} ms`,
        );
      }
    }
  } finally {
    await browser.close();
    await stub.stop();
  }
  const med = <T>(list: T[], pick: (x: T) => number): number => median(list.map(pick));
  const peerName = `same, ${SMALL} rows`;
  const base = { bench: 'renderer', peerName, higherIsBetter: false } as const;
  const lc = liveCount.toLocaleString('en');
  const sc = searchCount.toLocaleString('en');
  const rows: BenchRow[] = [
    {
      ...base,
      metric: `Live: load to ${lc} rows shown`,
      ours: med(live.big, (x) => x.ms),
      peer: med(live.small, (x) => x.ms),
      unit: 'ms',
      target: '< 1000 ms',
      note:
        `median of ${runs}; navigation start to rows laid out; JS heap ${med(live.big, (x) => x.heapMb).toFixed(1)} MB ` +
        `vs ${med(live.small, (x) => x.heapMb).toFixed(1)} MB`,
    },
    {
      ...base,
      metric: `Live: apply a ${lc}-channel poll`,
      ours: med(live.big, (x) => x.updateMs),
      peer: med(live.small, (x) => x.updateMs),
      unit: 'ms',
      target: '< 100 ms',
      note: 'a pushed channels:live list (every watcher count changed), from WebSocket message to laid out',
    },
    {
      ...base,
      metric: `Live: DOM nodes, ${lc} rows`,
      ours: med(live.big, (x) => x.nodes),
      peer: med(live.small, (x) => x.nodes),
      unit: 'nodes',
      target: 'flat (~1.0x)',
    },
    {
      ...base,
      metric: `Search: submit to ${sc} results shown`,
      ours: med(search.big, (x) => x.ms),
      peer: med(search.small, (x) => x.ms),
      unit: 'ms',
      target: '< 1000 ms',
    },
    {
      ...base,
      metric: `Search: DOM nodes, ${sc} results`,
      ours: med(search.big, (x) => x.nodes),
      peer: med(search.small, (x) => x.nodes),
      unit: 'nodes',
      target: 'flat (~1.0x)',
    },
    {
      ...base,
      metric: `Search: scroll to the last of ${sc}`,
      ours: med(search.big, (x) => x.scrollMs),
      peer: med(search.small, (x) => x.scrollMs),
      unit: 'ms',
      target: '< 100 ms',
    },
  ];
  return rows;
};
export default bench;
