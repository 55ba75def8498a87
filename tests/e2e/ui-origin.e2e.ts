/**
 * The `tally serve` key stays with its origin (issue 32, item 3), in Debian's Chromium: after the one-time link a
 * page served by ANOTHER program on another loopback port gets no credential of the UI (no cookie on its
 * requests, nothing in its storage), and a WebSocket handshake with the stolen key and a foreign Origin is
 * refused, from that page and from a client that forges the header.
 *
 * It runs inside a private network namespace of its own (`unshare --net`, loopback up), so no other server on
 * this machine can answer or listen in: the outer run starts this same file again in the namespace (as root; the
 * inner run sees TALLY_E2E_NETNS). Where no namespace can be made it runs here and says so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import NodeWebSocket from 'ws';
import { uiProtocols } from '../../electron/contract.js';
import { startPopoverHarness, type PopoverHarness } from './support/popover-harness.js';

const ROOT = join(import.meta.dirname, '..', '..');
const THIS_FILE = 'tests/e2e/ui-origin.e2e.ts';

/** The page globals the in-page checks read (tests compile without the DOM library). */
interface PageStorage {
  document: { cookie: string };
  sessionStorage: { length: number; getItem(key: string): string | null };
  localStorage: { length: number };
}

/** This process's network namespace (`net:[inode]`). */
function networkNamespace(): string {
  return readlinkSync('/proc/self/ns/net');
}

/** Whether this run can start itself again in a fresh network namespace. */
function canUnshare(): boolean {
  return process.getuid?.() === 0 && existsSync('/usr/bin/unshare') && existsSync('/usr/sbin/ip');
}

const inner = process.env.TALLY_E2E_NETNS === '1';
const runHere = inner || !canUnshare();

describe.runIf(!runHere)('the UI key, in a private network namespace', () => {
  it('passes every check below when run in a namespace of its own', () => {
    const run = spawnSync(
      'unshare',
      [
        '--net',
        '--',
        'sh',
        '-c',
        `ip link set lo up && exec node_modules/.bin/vitest run --config vitest.e2e.config.ts ${THIS_FILE}`,
      ],
      {
        cwd: ROOT,
        env: { ...process.env, TALLY_E2E_NETNS: '1', TALLY_E2E_OUTER_NETNS: networkNamespace(), FORCE_COLOR: '0' },
        encoding: 'utf8',
      },
    );
    const output = stripVTControlCharacters(`${run.stdout}\n${run.stderr}`);
    expect(run.status, output.slice(-4000)).toBe(0);
    // The inner run did run the checks (not a skip), in a namespace.
    expect(output).toMatch(/Tests\s+1 passed/);
  }, 240_000);
});

describe.runIf(runHere)('the UI key stays with its origin', () => {
  let h: PopoverHarness;
  let other: Server;
  let otherOrigin = '';
  /** Every request the other loopback server got, with its headers. */
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    if (inner)
      expect(networkNamespace(), 'the inner run is in a namespace of its own').not.toBe(
        process.env.TALLY_E2E_OUTER_NETNS,
      );
    else console.log('ui-origin.e2e: no private network namespace here (needs root and unshare); runs as is.');
    h = await startPopoverHarness(ROOT);
    // Another program's server on another loopback port: what issue 32 found receiving the UI's cookie.
    other = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      if (req.url === '/pixel.gif') {
        res.writeHead(200, { 'Content-Type': 'image/gif' }).end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
        return;
      }
      res
        .writeHead(200, { 'Content-Type': 'text/html' })
        .end('<!doctype html><title>other</title><img src="/pixel.gif">');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await h?.close();
    if (other) await new Promise((resolve) => other.close(resolve));
  });

  it('after the one-time link, another loopback port gets no credential and the stolen key is refused', async () => {
    const context = await h.browser.newContext();
    try {
      const link = h.url;
      const ui = await context.newPage();
      await ui.goto(`${link}#live`);
      await ui.getByText('Connected', { exact: true }).waitFor({ state: 'attached' });
      const uiOrigin = new URL(link).origin;
      // The link's code is gone from the address; the key is in this origin's sessionStorage, no cookie anywhere.
      expect(ui.url()).not.toContain('code=');
      const key = await ui.evaluate(() => (globalThis as unknown as PageStorage).sessionStorage.getItem('tally.token'));
      expect(key).toMatch(/^[\w-]{20,}$/);
      expect(await ui.evaluate(() => (globalThis as unknown as PageStorage).document.cookie)).toBe('');
      expect(await context.cookies()).toEqual([]);

      // The link opens Tally once: a second visit is told so and gets nothing.
      const again = await context.newPage();
      const answer = await again.goto(link);
      expect(answer?.status()).toBe(401);
      expect(await again.content()).toContain('already used');
      await again.close();

      // The UI's own address without the link (another tab: sessionStorage is per tab) is told to get a new link.
      const bare = await context.newPage();
      await bare.goto(`${uiOrigin}/#live`);
      await bare.getByRole('alert').filter({ hasText: 'Each link opens Tally once' }).waitFor();
      await bare.close();

      // A page of another loopback port in the same browser: no cookie on its requests, nothing in its storage.
      const foreign = await context.newPage();
      await foreign.goto(`${otherOrigin}/`);
      await expect.poll(() => seen.some((r) => r.url === '/pixel.gif')).toBe(true);
      expect(seen.length).toBeGreaterThan(0);
      for (const request of seen) expect(request.headers.cookie, request.url).toBeUndefined();
      expect(
        await foreign.evaluate(() => {
          const page = globalThis as unknown as PageStorage;
          return { cookie: page.document.cookie, session: page.sessionStorage.length, local: page.localStorage.length };
        }),
      ).toEqual({ cookie: '', session: 0, local: 0 });

      // Even with the key (stolen some other way), that page's handshake is refused: its Origin is its own.
      const attempt = await foreign.evaluate(
        ([url, protocols]) =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(url, protocols);
            ws.onopen = () => resolve('open');
            ws.onclose = (e) => resolve(`closed ${e.code}`);
          }),
        [`ws://${new URL(uiOrigin).host}/ws`, uiProtocols({ key: key ?? '' })] as const,
      );
      expect(attempt).toBe('closed 1006');

      // A client that forges the Origin of the other port, or of a website, is refused the same (403); the
      // same key from the UI's own origin is let in, so the Origin is what refused them.
      const handshake = (origin: string) =>
        new Promise<number>((resolve, reject) => {
          const ws = new NodeWebSocket(`ws://${new URL(uiOrigin).host}/ws`, uiProtocols({ key: key ?? '' }), {
            origin,
          });
          ws.once('open', () => {
            ws.close();
            resolve(101);
          });
          ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
          ws.once('error', reject);
        });
      expect(await handshake(otherOrigin)).toBe(403);
      expect(await handshake('http://evil.example')).toBe(403);
      expect(await handshake(uiOrigin)).toBe(101);
    } finally {
      await context.close();
    }
  });
});
