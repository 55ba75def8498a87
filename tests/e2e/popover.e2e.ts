/**
 * The popover end to end in Debian's Chromium against what `tally serve --sandbox` runs: the headless core
 * in demo mode and its UI server, in-process (see support/popover-harness.ts for why not through `main`).
 * The tests drive the embedded sandbox through its control object and watch the page react; they share one
 * core and run in order (a later test builds on the channels an earlier one started or ended).
 *
 * The screenshots shown in the README (docs/screenshots) are written by the "screenshots" test (see SHOTS).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import type { RecordingView } from '../../electron/contract.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ACCOUNT } from '../../electron/core/credentials.js';
import { uploadClientRecording } from '../../electron/core/sandbox/web-client.js';
import { openSettingsStore } from '../../electron/core/settings.js';
import {
  closePages,
  type PageGlobals,
  openPopover,
  shoot,
  startPopoverHarness,
  type OpenOptions,
  type PopoverHarness,
  type PopoverPage,
} from './support/popover-harness.js';
import { STUDIO_DAY, seedStudioDay } from './support/studio-day.js';
import { startLoopbackProxy, type LoopbackProxy } from '../support/loopback-proxy.js';
import { screenshotsFolder } from './support/screenshots.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** The README's copies with TALLY_UPDATE_SCREENSHOTS=1, else test-results (see support/screenshots.ts). */
const SHOTS = screenshotsFolder(ROOT);
const MIN = 60_000;
/** How long a UI change may take to show: polls run every 250 ms, so this is only hit on failure. */
const eventually = { timeout: 10_000, interval: 50 };

let h: PopoverHarness;
const pages: PopoverPage[] = [];

beforeAll(async () => {
  h = await startPopoverHarness(ROOT, { fixedHome: Boolean(process.env.TALLY_UPDATE_SCREENSHOTS) });
  await mkdir(SHOTS, { recursive: true });
});

afterEach(async () => {
  await closePages(pages);
});

afterAll(async () => {
  await h?.close();
});

/** Undone after each test, in reverse order. */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The producer's own public address in front of wherever the receiver listens now (its port changes). */
function startReverseProxy(): Promise<LoopbackProxy> {
  return startLoopbackProxy(async () => {
    const local = (await h.core.handlers['tunnel:status']()).localUrl;
    return local ? Number(new URL(local).port) : null;
  });
}

async function open(opts: OpenOptions = {}): Promise<PopoverPage> {
  const popover = await openPopover(h, opts);
  pages.push(popover);
  return popover;
}

const liveList = (page: Page): Locator => page.getByRole('list', { name: 'Live channels' });

function endButton(page: Page, id: string): Locator {
  return page.getByRole('button', { name: `End channel ${id}…`, exact: true });
}

function liveRow(page: Page, id: string): Locator {
  return liveList(page)
    .getByRole('listitem')
    .filter({ has: endButton(page, id) });
}

/** IDs of the rows on screen, sorted. */
async function liveIds(page: Page): Promise<string[]> {
  const buttons = await liveList(page)
    .getByRole('button', { name: /^End channel / })
    .all();
  const labels = await Promise.all(buttons.map((b) => b.getAttribute('aria-label', { timeout: 1000 })));
  return labels.map((l) => (l ?? '').replace(/^End channel (.*)…$/, '$1')).sort();
}

/** The header's demo pill (its explanation is for screen readers only). */
const demoPill = (page: Page): Locator =>
  page.getByRole('banner').getByText('Demo: Tally is using its built-in sandbox, not your real service.');

const rowText = (page: Page, id: string) => liveRow(page, id).textContent({ timeout: 1000 });

const sandboxLive = () =>
  h.sandbox.control
    .listBroadcasts({ state: 'live' })
    .map((b) => b.id)
    .sort();

describe('popover against tally serve --sandbox', () => {
  it('lists the live broadcasts and follows a new broadcast and changing watcher counts', async () => {
    const { control } = h.sandbox;
    const now = Date.now();
    control.startBroadcast({ id: 'studio-a', watchers: 12, record: false, createdAt: new Date(now - 5 * MIN) });
    control.startBroadcast({ id: 'studio-b', watchers: 48, record: false, createdAt: new Date(now - 25.5 * MIN) });
    control.startBroadcast({ id: 'studio-c', watchers: 7, record: false, createdAt: new Date(now - 2 * MIN) });

    const { page } = await open();
    await expect.poll(() => liveIds(page), eventually).toEqual(['studio-a', 'studio-b', 'studio-c']);
    expect(await rowText(page, 'studio-a')).toContain('12 watchers');
    expect(await rowText(page, 'studio-b')).toMatch(/Live for 25m.*48 watchers/);
    expect(await rowText(page, 'studio-c')).toContain('7 watchers');
    await page.getByText('3 live', { exact: true }).waitFor();
    // Demo mode says so in the header.
    await demoPill(page).waitFor();

    control.startBroadcast({ id: 'studio-d', watchers: 3, record: false });
    await expect.poll(() => liveIds(page), eventually).toEqual(['studio-a', 'studio-b', 'studio-c', 'studio-d']);
    await page.getByText('4 live', { exact: true }).waitFor();

    control.setWatchers('studio-a', 95);
    await expect.poll(() => rowText(page, 'studio-a'), eventually).toContain('95 watchers');
  });

  it('ends a channel only after the confirmation that names it', async () => {
    const { page } = await open();
    await liveRow(page, 'studio-b').waitFor();

    // Cancel first: nothing ends.
    await endButton(page, 'studio-b').click();
    const dialog = page.getByRole('dialog', { name: 'End channel studio-b?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(sandboxLive()).toContain('studio-b');

    await endButton(page, 'studio-b').click();
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('Viewers will be disconnected.');
    await dialog.getByRole('button', { name: 'End channel', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await liveRow(page, 'studio-b').waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Channel studio-b ended' }).waitFor({ state: 'attached' });

    expect(sandboxLive()).toEqual(['studio-a', 'studio-c', 'studio-d']);
    const ended = h.sandbox.control.listBroadcasts({ state: 'ended' }).find((b) => b.id === 'studio-b');
    expect(ended?.endedAt).toBeInstanceOf(Date);
    // Later polls agree: the row does not come back.
    await expect.poll(() => liveIds(page), eventually).toEqual(['studio-a', 'studio-c', 'studio-d']);
  });

  it('finds the ended channel by keyword in Search, with its duration and sessions', async () => {
    const { page } = await open({ tab: 'search' });
    expect(await page.getByRole('radio', { name: 'Last hour' }).isChecked()).toBe(true);
    // "studio" matches four channels, but three are still live: search lists ended channels only.
    await page.getByRole('searchbox', { name: 'Keyword' }).fill('studio');
    await page.getByRole('button', { name: 'Search', exact: true }).click();

    const table = page.getByRole('table', { name: 'Search results' });
    const rows = table.getByRole('row').filter({ has: page.getByRole('cell') });
    await expect.poll(() => rows.count(), eventually).toBe(1);
    await page.getByText('1 channel', { exact: true }).waitFor();
    const cells = (await rows.first().getByRole('cell').allTextContents()).map((c) => c.trim());
    // ID, created, ended, duration (25.5 min, floored), sessions (48 pinned watchers + the broadcaster).
    expect(cells[0]).toBe('studio-b');
    expect(cells[3]).toBe('25m');
    expect(cells[4]).toBe('49');
  });

  it('treats a channel that ended on its own while the dialog was open as ended, in both orders', async () => {
    const { control } = h.sandbox;
    // Without the lifecycle hook, as with a service that has none set: only polls tell the page.
    const hook = control.channelWebhookUrl;
    control.setChannelWebhookUrl(null);
    cleanups.push(async () => control.setChannelWebhookUrl(hook));
    control.startBroadcast({ id: 'race-1', watchers: 4, record: false });
    control.startBroadcast({ id: 'race-2', watchers: 5, record: false });
    control.startBroadcast({ id: 'race-3', watchers: 6, record: false });
    const { page } = await open();
    await liveRow(page, 'race-3').waitFor();
    const focusedLabel = () =>
      page.evaluate(() => {
        const doc = (globalThis as unknown as PageGlobals).document;
        return doc.activeElement?.getAttribute('aria-label') ?? null;
      });
    const notice = (text: string) => page.getByRole('status').filter({ hasText: text });

    // 1. It ends after the producer confirmed but before the service was asked: the live list is held back
    // (the next poll answers slowly), so the page still shows the channel and the click reaches the service,
    // which no longer has it live.
    await endButton(page, 'race-1').click();
    const dialog1 = page.getByRole('dialog', { name: 'End channel race-1?' });
    await dialog1.waitFor();
    const slowPoll = new Promise<void>((resolve) => {
      const onRequest = (e: { path: string }) => {
        if (!e.path.endsWith('/broadcast-channel-list')) return;
        control.events.off('request', onRequest);
        resolve();
      };
      control.events.on('request', onRequest);
    });
    control.setFaults('api', { delayMs: 4000, times: 1, path: '/lambda/broadcast-channel-list' });
    try {
      await slowPoll;
      await control.endBroadcast('race-1');
      await dialog1.getByRole('button', { name: 'End channel', exact: true }).click();
      await dialog1.waitFor({ state: 'detached' });
    } finally {
      control.setFaults('api', null);
    }
    await notice('Channel race-1 had already ended on its own').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await liveRow(page, 'race-1').waitFor({ state: 'detached' });
    // Focus went to the channel that took its place in the list, not to the page.
    await expect.poll(focusedLabel, eventually).toBe('End channel race-2…');

    // Escape still works: the next dialog opens from the keyboard and closes with it.
    await page.keyboard.press('Enter');
    const dialog2 = page.getByRole('dialog', { name: 'End channel race-2?' });
    await dialog2.waitFor();
    await page.keyboard.press('Escape');
    await dialog2.waitFor({ state: 'detached' });
    expect(await focusedLabel()).toBe('End channel race-2…');

    // 2. It ends while the producer is still reading the dialog: the dialog closes by itself and says so.
    await endButton(page, 'race-2').click();
    await dialog2.waitFor();
    await control.endBroadcast('race-2');
    await dialog2.waitFor({ state: 'detached' });
    await notice('Channel race-2 had already ended on its own').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await expect.poll(focusedLabel, eventually).toMatch(/^End channel /);
    expect(sandboxLive()).toContain('race-3');
    await control.endBroadcast('race-3');
    await liveRow(page, 'race-3').waitFor({ state: 'detached' });
  });

  it('shows a sandbox recording downloading with a progress bar, then saved on disk byte for byte', async () => {
    const { control } = h.sandbox;
    // 6 MB at 2 MB/s: about three seconds of visible progress.
    control.setFaults('download', { rateBytesPerSec: 2_000_000 });
    try {
      control.startBroadcast({ id: 'rec-one', record: true, recordingBytes: 6_000_000, watchers: 20 });
      const { page } = await open({ tab: 'recordings' });
      await page.getByRole('tab', { name: 'Recordings', selected: true }).waitFor();

      const recording = await control.endBroadcast('rec-one');
      if (!recording) throw new Error('the sandbox published no recording');
      expect(control.webhookDeliveries().at(-1)).toMatchObject({ channelId: 'rec-one', status: 200 });

      const bar = page.getByRole('progressbar', { name: 'Download of rec-one' });
      const valueNow = async () => Number((await bar.getAttribute('aria-valuenow', { timeout: 1000 })) ?? NaN);
      await expect.poll(valueNow, eventually).toSatisfy((n: number) => n > 0 && n < 100);
      expect(await bar.getAttribute('aria-valuetext')).toMatch(/ of 6 MB$/);
      const inProgress = page.getByRole('region', { name: 'In progress' });
      await inProgress.getByText(/^rec-one · /).waitFor();
      // The service deletes the file 6 hours after the webhook: the countdown says how long is left.
      expect(await inProgress.textContent()).toMatch(/Expires in (6h|5h 59m)/);

      const saved = page.getByRole('region', { name: 'Today' });
      await saved.getByText(/rec-one\.mp4/).waitFor();
      await bar.waitFor({ state: 'detached' });
      // Its size and the MD5 in the sandbox's S3-style ETag both matched: tagged Verified, and says against what.
      expect(await saved.textContent()).toMatch(/Verified.*Saved and verified \(size, MD5\) · 6 MB · rec-one\.mp4/);
      // The webhook's thumbnail, fetched by the core: the page shows it as a data: URL, never the webhook's URL.
      const thumb = saved
        .getByRole('listitem')
        .filter({ hasText: /^rec-one · / })
        .locator('img');
      await expect
        .poll(() => thumb.getAttribute('src', { timeout: 1000 }), eventually)
        .toMatch(/^data:image\/jpeg;base64,/);

      const view = (await h.core.handlers['recordings:list']()).find((r) => r.channelId === 'rec-one');
      expect(view).toMatchObject({ state: 'saved', fileName: 'rec-one.mp4', bytes: recording.size });
      const bytes = await readFile(join(h.recordingsDir, 'rec-one.mp4'));
      expect(bytes.length).toBe(recording.size);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(await recording.sha256());
    } finally {
      control.setFaults('download', null);
    }
  });

  it('says why a download waits, then copies a saved file’s path and removes it from the list, not from disk', async () => {
    const { control } = h.sandbox;
    // The download host answers 503 until the page has said why the recording waits, then lets it be saved. Not
    // a fixed number of 503s: retries come 100 ms apart here, so under load a short wait could come and go
    // between two paints of the page and never be seen.
    control.setFaults('download', { status: 503 });
    let view: RecordingView | undefined;
    try {
      control.startBroadcast({ id: 'rec-two', record: true, recordingBytes: 200_000, watchers: 3 });
      const { page, context } = await open({ tab: 'recordings' });
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await control.endBroadcast('rec-two');
      const inProgress = page.getByRole('region', { name: 'In progress' });
      await inProgress.getByText(/Will try again: .*503/).waitFor();
      control.setFaults('download', null);

      const today = page.getByRole('region', { name: 'Today' });
      const item = today.getByRole('listitem').filter({ hasText: /^rec-two · / });
      await item.getByText(/Saved and verified/).waitFor();
      await inProgress.waitFor({ state: 'detached' });
      view = (await h.core.handlers['recordings:list']()).find((r) => r.channelId === 'rec-two');
      if (!view?.fileName) throw new Error('rec-two was not saved');
      const path = join(h.recordingsDir, view.fileName);

      // Copy path: the browser has no core clipboard here, so it lands on the page's clipboard.
      await item.getByRole('button', { name: /^Copy path of rec-two · / }).click();
      await page.getByRole('status').filter({ hasText: 'Path copied' }).waitFor({ state: 'attached' });
      const copied = await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      );
      expect(copied).toBe(path);

      // Open and Show in folder: the core hands the file, then its folder, to the desktop's opener.
      await item.getByRole('button', { name: /^Open rec-two · / }).click();
      await item.getByRole('button', { name: /^Show rec-two · .* in folder$/ }).click();
      const openedLines = async () => (await readFile(h.openedLog, 'utf8').catch(() => '')).split('\n');
      await expect.poll(openedLines, eventually).toEqual([path, h.recordingsDir, '']);

      // Filters: a saved broadcast is not a problem, and is not a web client upload.
      await page.getByRole('radio', { name: /^Problems/ }).check();
      await page.getByText('No finished recordings match this filter.').waitFor();
      await page.getByRole('radio', { name: /^All/ }).check();

      await item.getByRole('button', { name: /^Remove rec-two · .* from list$/ }).click();
      await item.waitFor({ state: 'detached' });
      await page
        .getByRole('status')
        .filter({ hasText: /rec-two · .* removed from the list\. The file stays where it was\./ })
        .waitFor({ state: 'attached' });
      // Undo brings it back; removed again, it goes for good once the producer moves on.
      await page.getByRole('button', { name: 'Undo' }).click();
      await item.waitFor();
      await item.getByRole('button', { name: /^Remove rec-two · .* from list$/ }).click();
      await item.waitFor({ state: 'detached' });
      await page.getByRole('tab', { name: 'Live' }).click();
      await page.getByRole('tab', { name: 'Recordings' }).click();
      await expect
        .poll(async () => (await h.core.handlers['recordings:list']()).map((r) => r.channelId), eventually)
        .not.toContain('rec-two');
      expect((await readFile(path)).length).toBe(view.bytes);
      // Gone for good: the core no longer lists it, so a reload does not bring it back.
      expect((await h.core.handlers['recordings:list']()).map((r) => r.channelId)).not.toContain('rec-two');
      await page.reload();
      await today.getByText(/rec-one\.mp4/).waitFor();
      expect(await today.getByText(/^rec-two · /).count()).toBe(0);
    } finally {
      control.setFaults('download', null);
    }
  });

  it('lists a refused download as failed with its reason under Problems, and Retry saves it', async () => {
    const { control } = h.sandbox;
    // The download host redirects to an origin Tally does not download from: refused, no retry by itself.
    control.setFaults('download', { redirectTo: 'https://elsewhere.example/rec-three.mp4' });
    try {
      control.startBroadcast({ id: 'rec-three', record: true, recordingBytes: 150_000, watchers: 5 });
      const { page } = await open({ tab: 'recordings' });
      await control.endBroadcast('rec-three');
      await page.getByRole('radio', { name: /^Problems 1$/ }).check();
      const item = page.getByRole('listitem').filter({ hasText: /^rec-three · / });
      await item.getByText('Failed', { exact: true }).waitFor();
      expect(await item.textContent()).toMatch(
        /The recording was not downloaded: redirect refused: https:\/\/elsewhere\.example is not an allowed download origin/,
      );

      control.setFaults('download', null);
      await item.getByRole('button', { name: /^Retry download of rec-three · / }).click();
      // Saved now: no longer a problem, listed with the others, on disk.
      await page.getByText('No finished recordings match this filter.').waitFor();
      await page.getByRole('radio', { name: /^All/ }).check();
      await item.getByText(/Saved and verified \(size, MD5\) · 150 kB/).waitFor();
      const view = (await h.core.handlers['recordings:list']()).find((r) => r.channelId === 'rec-three');
      expect(view).toMatchObject({ state: 'saved', bytes: 150_000, error: null });
      expect((await readFile(join(h.recordingsDir, view?.fileName ?? 'missing'))).length).toBe(150_000);
    } finally {
      control.setFaults('download', null);
    }
  });

  it('lists a recording the service deleted before it could be saved as Expired, with why, under Problems', async () => {
    const { control } = h.sandbox;
    // The download host answers 503 for as long as it takes: the recording waits, retried, within its deadline.
    control.setFaults('download', { status: 503 });
    try {
      control.startBroadcast({ id: 'rec-late', record: true, recordingBytes: 120_000, watchers: 2 });
      const { page } = await open({ tab: 'recordings' });
      await control.endBroadcast('rec-late');
      const inProgress = page.getByRole('region', { name: 'In progress' });
      await inProgress.getByText(/^rec-late · /).waitFor();
      await inProgress.getByText(/Will try again: .*503/).waitFor();
      // Waiting, between two attempts (an attempt may be under way at any one moment: the poll waits it out).
      const late = async () => (await h.core.handlers['recordings:list']()).find((r) => r.channelId === 'rec-late');
      await expect.poll(async () => (await late())?.state, eventually).toBe('pending');
      const job = await late();

      // Six hours pass, at the service and here. The service's clock moves (the Date it answers with, by which
      // Tally judges the 6 hours) and it deletes the file 6 hours after the webhook, as it does; Tally's clock
      // moves past its deadline, so the retry comes now. The next attempt finds the file gone with a Date past the
      // service's deadline, and the recording is expired for good, not retried.
      const sixHours = Date.parse(job?.deadline ?? '') - Date.now() + MIN;
      control.advanceTime(sixHours);
      expect(control.getRecording('rec-late')?.expired).toBe(true);
      control.setFaults('download', null);
      h.clock.offsetMs = sixHours;
      await page.getByRole('radio', { name: /^Problems/ }).check();
      const item = page
        .getByRole('region', { name: 'Today' })
        .getByRole('listitem')
        .filter({ hasText: /^rec-late · / });
      await item.getByText('Expired', { exact: true }).waitFor();
      await inProgress.waitFor({ state: 'detached' });
      expect(await item.textContent()).toMatch(/The service deleted the recording 6 hours after the broadcast ended/);
      // Retry now is still offered (issue 19: on every expired recording), beside removing it from the list.
      await item.getByRole('button', { name: /^Retry download of rec-late · / }).waitFor();
      await item.getByRole('button', { name: /^Remove rec-late · .* from list$/ }).waitFor();
      const view = (await h.core.handlers['recordings:list']()).find((r) => r.channelId === 'rec-late');
      expect(view).toMatchObject({ state: 'expired', fileName: null });
      await page.getByRole('radio', { name: /^All/ }).check();
    } finally {
      // Tally's clock goes back to the real time; the service's stays six hours ahead (it only moves forward), a
      // skew the later tests run with, as Tally must: it never judges the service's times by its own clock.
      h.clock.offsetMs = 0;
      control.setFaults('download', null);
    }
  });

  it('lists a web client upload Tally refused as Refused, with its channel, stream and reason', async () => {
    const { page } = await open({ tab: 'recordings' });
    const uploadUrl = (await h.core.handlers['tunnel:status']()).uploadUrl;
    if (!uploadUrl) throw new Error('the demo core has no upload URL');
    // The SDK's XHR from a page whose origin is not allowed: refused, while that page is told "uploaded".
    const answer = await uploadClientRecording(uploadUrl, {
      serviceId: h.sandbox.credentials.serviceId,
      channelId: 'panel-talk',
      track: 'RR',
      origin: 'https://stranger.example',
      bytes: 40_000,
    });
    expect(answer.status).toBe(403);

    await page.getByRole('radio', { name: /^Problems/ }).check();
    const item = page.getByRole('listitem').filter({ hasText: /^panel-talk · Remote stream · / });
    await item.getByText('Refused', { exact: true }).waitFor();
    const text = await item.textContent();
    expect(text).toMatch(/remote stream · .*The page origin https:\/\/stranger\.example is not allowed to upload/);
    // Under Client too, as a web client recording.
    await page.getByRole('radio', { name: /^Web client/ }).check();
    await item.waitFor();
    await page.getByRole('radio', { name: /^All/ }).check();
  });

  it('keeps settings across a reload, including the language, and switches back', async () => {
    const { page } = await open({ tab: 'settings' });
    const change = async (field: Locator, value: string) => {
      await field.fill(value);
      // The view saves on change, which a text field fires when it loses focus.
      await field.press('Tab');
    };
    await page.getByText('Advanced', { exact: true }).click();
    await change(page.getByLabel('Parallel downloads'), '5');
    await change(page.getByLabel('Live refresh (seconds)'), '7');
    await change(page.getByLabel('File name template'), '{channelId}-{date}');
    await expect
      .poll(() => h.core.handlers['settings:get'](), eventually)
      .toMatchObject({ concurrency: 5, pollIntervalSec: 7, fileNameTemplate: '{channelId}-{date}' });
    await page.getByLabel('Language').selectOption('ko');
    await page.getByRole('tab', { name: '설정' }).waitFor();

    await page.reload();
    await page.getByText('연결됨', { exact: true }).waitFor({ state: 'attached' });
    expect(await page.getByRole('tab').allTextContents()).toEqual(['실시간', '검색', '녹화', '설정']);
    await page.getByText('고급', { exact: true }).click();
    expect(await page.getByLabel('동시 다운로드 수').inputValue()).toBe('5');
    expect(await page.getByLabel('실시간 새로 고침 간격(초)').inputValue()).toBe('7');
    expect(await page.getByLabel('파일 이름 형식').inputValue()).toBe('{channelId}-{date}');
    expect(await page.getByLabel('언어').inputValue()).toBe('ko');
    // On disk, not only in the running core.
    expect(openSettingsStore(h.home).get()).toMatchObject({
      concurrency: 5,
      pollIntervalSec: 7,
      fileNameTemplate: '{channelId}-{date}',
      language: 'ko',
    });

    await page.getByLabel('언어').selectOption('en');
    await page.getByRole('tab', { name: 'Settings' }).waitFor();
    await change(page.getByLabel('Parallel downloads'), '3');
    await change(page.getByLabel('Live refresh (seconds)'), '5');
    await change(page.getByLabel('File name template'), '{channelId}');
    await expect
      .poll(() => openSettingsStore(h.home).get(), eventually)
      .toMatchObject({ concurrency: 3, pollIntervalSec: 5, fileNameTemplate: '{channelId}', language: 'en' });
  });

  it('takes screenshots of every view in light and dark', async () => {
    const { control } = h.sandbox;
    for (const id of sandboxLive()) await control.endBroadcast(id);
    // Everything on the Live and Search screenshots is fixed relative to this instant, and the pages' clock
    // is frozen at it, so ages and times read the same on every run.
    const at = Date.parse('2025-05-14T09:41:00Z');
    const ago = (minutes: number) => new Date(at - minutes * MIN);
    control.startBroadcast({ id: 'q-and-a', watchers: 96, record: false, createdAt: ago(125) });
    control.startBroadcast({ id: 'main-stage', watchers: 1284, record: false, createdAt: ago(47) });
    control.startBroadcast({ id: 'interview-room-2', watchers: 312, record: false, createdAt: ago(18) });
    control.startBroadcast({ id: 'backstage-cam', watchers: 27, record: false, createdAt: ago(6) });
    const day = (time: string) => new Date(`2025-05-14T${time}:00Z`);
    control.addEndedChannels([
      { id: 'night-owl', createdAt: new Date('2025-05-13T23:10:00Z'), endedAt: day('01:40'), peerCount: 580 },
      { id: 'sound-check', createdAt: day('05:45'), endedAt: day('05:52'), peerCount: 4 },
      { id: 'morning-show', createdAt: day('06:00'), endedAt: day('07:30'), peerCount: 2408 },
      { id: 'workshop-a', createdAt: day('07:10'), endedAt: day('08:55'), peerCount: 146 },
      { id: 'news-0800', createdAt: day('08:00'), endedAt: day('08:28'), peerCount: 913 },
      { id: 'studio-tour', createdAt: day('08:30'), endedAt: day('09:05'), peerCount: 388 },
      { id: 'press-briefing', createdAt: day('09:00'), endedAt: day('09:20'), peerCount: 1532 },
    ]);

    for (const colorScheme of ['light', 'dark'] as const) {
      const { page } = await open({ colorScheme, fixedTime: at });
      await expect
        .poll(() => liveIds(page), eventually)
        .toEqual(['backstage-cam', 'interview-room-2', 'main-stage', 'q-and-a']);
      expect(await rowText(page, 'q-and-a')).toContain('Live for 2h 5m');
      await shoot(page, join(SHOTS, `live-${colorScheme}.png`));

      await page.getByRole('tab', { name: 'Search' }).click();
      await page.getByRole('radio', { name: 'Today' }).check();
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      const rows = page
        .getByRole('table', { name: 'Search results' })
        .getByRole('row')
        .filter({ has: page.getByRole('cell') });
      await expect.poll(() => rows.count(), eventually).toBe(7);
      await shoot(page, join(SHOTS, `search-${colorScheme}.png`));

      await page.getByRole('tab', { name: 'Settings' }).click();
      await page.getByLabel('Service ID').waitFor();
      await shoot(page, join(SHOTS, `settings-${colorScheme}.png`));

      // A wide window: sections in a sidebar, the live list with the selected channel beside it.
      const wide = (await open({ colorScheme, fixedTime: at, width: 1000, height: 600 })).page;
      await wide
        .getByRole('tablist', { name: 'Sections' })
        .and(wide.locator('[aria-orientation="vertical"]'))
        .waitFor();
      await expect.poll(() => liveIds(wide), eventually).toHaveLength(4);
      await wide.getByText('main-stage', { exact: true }).click();
      const detail = wide.getByRole('complementary', { name: 'Selected channel' });
      await detail.getByRole('heading', { name: 'main-stage' }).waitFor();
      expect(await detail.textContent()).toContain('1,284');
      await shoot(wide, join(SHOTS, `wide-${colorScheme}.png`));
    }

    // Korean, with the CJK font the CI image installs (fonts-noto-cjk), so no character renders as a box.
    await h.core.handlers['settings:update']({ language: 'ko' });
    try {
      for (const colorScheme of ['light', 'dark'] as const) {
        const { page } = await open({ colorScheme, fixedTime: at });
        await page.getByRole('tab', { name: '실시간', selected: true }).waitFor();
        await page.getByText('방송 중 4개', { exact: true }).waitFor();
        await shoot(page, join(SHOTS, `live-ko-${colorScheme}.png`));
        await page.getByRole('tab', { name: '설정' }).click();
        await page.getByLabel('서비스 ID').waitFor();
        await shoot(page, join(SHOTS, `settings-ko-${colorScheme}.png`));
      }
    } finally {
      await h.core.handlers['settings:update']({ language: 'system' });
    }

    // Recordings: a studio day's (support/studio-day.ts) in place of the earlier tests', and one still
    // downloading. Deadlines count from when the webhook arrived, so these pages keep the real clock.
    await seedStudioDay(h);
    control.setFaults('download', { rateBytesPerSec: 1_500_000 });
    try {
      control.startBroadcast({ id: 'keynote', record: true, recordingBytes: 24_000_000, watchers: 400 });
      const shots = await Promise.all(
        (['light', 'dark'] as const).map(async (colorScheme) => ({
          colorScheme,
          page: (await open({ colorScheme, tab: 'recordings' })).page,
        })),
      );
      await control.endBroadcast('keynote');
      for (const { colorScheme, page } of shots) {
        const bar = page.getByRole('progressbar', { name: 'Download of keynote' });
        await expect
          .poll(async () => Number((await bar.getAttribute('aria-valuenow', { timeout: 1000 })) ?? NaN), eventually)
          .toBeGreaterThanOrEqual(15);
        for (const { id } of STUDIO_DAY) await page.getByText(new RegExp(`^${id} · `)).waitFor();
        await shoot(page, join(SHOTS, `recordings-${colorScheme}.png`));
      }
    } finally {
      control.setFaults('download', null);
    }

    // Problems: a recording whose download was sent to a host Tally does not download from, with its Retry.
    control.setFaults('download', { redirectTo: 'https://files.elsewhere.example/late-upload.mp4' });
    try {
      control.startBroadcast({ id: 'late-upload', record: true, recordingBytes: 300_000, watchers: 12 });
      await control.endBroadcast('late-upload');
      await expect
        .poll(
          async () => (await h.core.handlers['recordings:list']()).find((r) => r.channelId === 'late-upload')?.state,
          {
            timeout: 20_000,
            interval: 100,
          },
        )
        .toBe('failed');
    } finally {
      control.setFaults('download', null);
    }
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page } = await open({ colorScheme, tab: 'recordings' });
      await page.getByRole('radio', { name: /^Problems/ }).check();
      await page
        .getByRole('button', { name: /^Retry/ })
        .first()
        .waitFor();
      await shoot(page, join(SHOTS, `problems-${colorScheme}.png`));
    }
  });

  it('shows the service error for wrong credentials and stores nothing', async () => {
    const listCalls: string[] = [];
    const onRequest = (e: { path: string }) => listCalls.push(e.path);
    h.service.control.events.on('request', onRequest);
    try {
      const { page, received } = await open({ tab: 'settings' });
      const demoStatus = page.getByText('Demo mode: the built-in sandbox answers instead of the service');
      await demoStatus.waitFor();
      const before = await h.core.handlers['credentials:status']();
      const wrong = 'not-the-secret-4f1c2a';

      await page.getByLabel('Service ID').fill('e2e-project');
      const secretField = page.getByLabel('Secret', { exact: true });
      await secretField.fill(wrong);
      await page.getByRole('button', { name: 'Test connection' }).click();
      const refused = page.getByRole('alert').filter({ hasText: 'The service rejected the service ID and secret.' });
      await refused.waitFor();

      await page.getByRole('button', { name: 'Save', exact: true }).click();
      // The secret field empties once the save attempt is over, accepted or not.
      await expect.poll(() => secretField.inputValue(), eventually).toBe('');
      await refused.waitFor();
      expect(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);

      // Both attempts reached the service, and nothing changed.
      expect(listCalls.filter((p) => p.endsWith('/broadcast-channel-list')).length).toBe(2);
      expect(await h.core.handlers['credentials:status']()).toEqual(before);
      expect(before.source).toBe('sandbox');
      expect(await h.secrets.get(PROJECT_ACCOUNT)).toBeNull();
      await demoStatus.waitFor();
      await demoPill(page).waitFor();
      expect(received.filter((f) => f.includes(wrong))).toEqual([]);
    } finally {
      h.service.control.events.off('request', onRequest);
    }
  });

  it('never sends the secret to the page, before or after valid credentials are saved', async () => {
    h.service.control.startBroadcast({ id: 'project-live-1', watchers: 5, record: false });
    const { page, received } = await open({ tab: 'settings' });
    await page.getByLabel('Service ID').fill('e2e-project');
    await page.getByLabel('Secret', { exact: true }).fill(h.serviceSecret);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Credentials saved.' }).waitFor();
    await page.getByText('Secret stored in the keychain').waitFor();
    // Stored (in the keychain stand-in), and the core left demo mode for the "service".
    expect(await h.secrets.get(PROJECT_ACCOUNT)).toContain(h.serviceSecret);
    await demoPill(page).waitFor({ state: 'detached' });
    await page.getByRole('tab', { name: 'Live' }).click();
    await liveRow(page, 'project-live-1').waitFor();

    const html = await page.content();
    const storage = await page.evaluate(() => {
      const g = globalThis as unknown as { localStorage: object; sessionStorage: object };
      return JSON.stringify([g.localStorage, g.sessionStorage]);
    });
    expect(received.length).toBeGreaterThan(10);
    for (const secret of [h.serviceSecret, h.sandbox.credentials.secret]) {
      expect(html).not.toContain(secret);
      expect(storage).not.toContain(secret);
      expect(received.filter((f) => f.includes(secret))).toEqual([]);
    }
  });

  it('guides a first run: demo one click away, then account, folder and address each checked, to the first recording', async () => {
    await h.core.handlers['settings:update']({ firstRunDone: false });
    const first = await open();
    const welcome = first.page.getByRole('heading', { name: 'Welcome to Tally' });
    await welcome.waitFor();
    expect(await first.page.getByRole('tab').count()).toBe(0);
    // The demo, one click away: the tabs open on it and the guide does not come back.
    await first.page.getByRole('button', { name: 'Try the demo first' }).click();
    await first.page.getByRole('tab', { name: 'Live', selected: true }).waitFor();
    await demoPill(first.page).waitFor();
    expect(openSettingsStore(h.home).get()).toMatchObject({ firstRunDone: true });

    await h.core.handlers['settings:update']({ firstRunDone: false });
    const { page } = await open();
    await page.getByRole('button', { name: 'Set up with my service' }).click();

    // 1. The account: refused by the service first, nothing stored; then accepted.
    await page.getByRole('heading', { name: 'Your service account' }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.tagName)).toBe(
      'H2',
    );
    const storedBefore = await h.secrets.get(PROJECT_ACCOUNT);
    await page.getByLabel('Service ID').fill('e2e-project');
    await page.getByLabel('Secret', { exact: true }).fill('not-the-secret');
    await page.getByRole('button', { name: 'Test and save' }).click();
    await page.getByRole('alert').filter({ hasText: 'The service rejected the service ID and secret.' }).waitFor();
    expect(await h.secrets.get(PROJECT_ACCOUNT)).toBe(storedBefore);
    await page.getByLabel('Secret', { exact: true }).fill(h.serviceSecret);
    await page.getByRole('button', { name: 'Test and save' }).click();

    // 2. The folder: one Tally cannot write to is refused, the real one is checked and kept.
    await page.getByRole('heading', { name: 'Where recordings are saved' }).waitFor();
    const blocker = join(h.home, 'a-file');
    await writeFile(blocker, 'in the way');
    const folderField = page.getByLabel('Folder path');
    await folderField.fill(join(blocker, 'recordings'));
    await page.getByRole('button', { name: 'Check and use this folder' }).click();
    await page.getByRole('alert').filter({ hasText: 'A file is in the way of that folder.' }).waitFor();
    await folderField.fill(h.recordingsDir);
    await page.getByRole('button', { name: 'Check and use this folder' }).click();

    // 3. The address: a reverse proxy on loopback stands in for the producer's public address, and the check
    // goes through it to the receiver and back.
    await page.getByRole('heading', { name: 'How the service reaches Tally' }).waitFor();
    const next = page.getByRole('button', { name: 'Next' });
    expect(await next.isDisabled()).toBe(true);
    const proxy = await startReverseProxy();
    cleanups.push(proxy.close);
    await page.getByRole('radio', { name: 'My own public URL' }).check();
    await page.getByLabel('Public URL', { exact: true }).fill(proxy.url);
    await page.getByRole('button', { name: 'Check the connection' }).click();
    await page.getByRole('status').filter({ hasText: 'The service can reach Tally.' }).waitFor();
    await next.click();

    // 4. Waiting, with the address registered with the service; a broadcast's recording then arrives.
    await page.getByRole('heading', { name: 'Waiting for your first recording' }).waitFor();
    await page.getByText('Registered with the service').waitFor();
    const { control } = h.service;
    control.startBroadcast({ id: 'first-show', record: true, recordingBytes: 100_000, watchers: 2 });
    await control.endBroadcast('first-show');
    await page.getByRole('heading', { name: 'Your first recording is saved' }).waitFor();
    await page.getByText(/^first-show.*is in your recordings folder\.$/).waitFor();

    await page.getByRole('button', { name: 'Open Tally' }).click();
    await page.getByRole('tab', { name: 'Live', selected: true }).waitFor();
    expect(openSettingsStore(h.home).get()).toMatchObject({
      firstRunDone: true,
      recordingsFolder: h.recordingsDir,
      tunnel: { provider: 'url', publicUrl: proxy.url },
    });
    expect(await h.secrets.get(PROJECT_ACCOUNT)).toContain(h.serviceSecret);
  });
});
