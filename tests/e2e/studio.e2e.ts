/**
 * Settings → Studio end to end in Chromium over the WebSocket transport, against a real `nats-server` with
 * JetStream and token auth (tests/support/nats-server.ts, as tests/studio.spec.ts uses): the popover makes this
 * computer the studio's receiver, is refused by the server without credentials, stores the token in the
 * keychain (never in the page), tests the server, connects, and the Recordings tab shows a sandbox recording
 * shared with the studio. A second popover, on a core without any service credentials (so in demo mode as it
 * chooses), follows the studio: it leaves demo mode, turns automatic webhook registration off with a note, and
 * lists the recording the receiver announces as mirrored here, a row of Recordings like any other. A third, on its first run and without service
 * credentials, joins a studio from the guide: its own server, token tested, folder checked, then it waits, and
 * the recording a receiver announces lands in the folder and in Recordings.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { announceRecording } from '../support/studio-announce.js';
import { sandboxAnswers } from '../support/app/core-parts.js';
import { openSettingsStore } from '../../electron/core/settings.js';
import {
  closePages,
  horizontalOverflows,
  openPopover,
  shoot,
  startPopoverHarness,
  type PopoverHarness,
  type PopoverPage,
} from './support/popover-harness.js';
import { screenshotsFolder } from './support/screenshots.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** The README's copies with TALLY_UPDATE_SCREENSHOTS=1, else test-results (see support/screenshots.ts). */
const SHOTS = screenshotsFolder(ROOT);
const eventually = { timeout: 15_000, interval: 50 };
const TOKEN = `team-${randomBytes(12).toString('hex')}`;

let h: PopoverHarness;
let nats: NatsServer;
const pages: PopoverPage[] = [];

beforeAll(async () => {
  nats = await startNatsServer({ args: ['--auth', TOKEN] });
  h = await startPopoverHarness(ROOT);
});

afterEach(async () => {
  await closePages(pages);
});

afterAll(async () => {
  await h?.close();
  await nats?.close();
});

describe('Settings → Studio against a real nats-server', () => {
  it('stores the team token, tests the server, becomes the receiver and lists a shared recording', async () => {
    // Studio mode never runs in demo mode (the sandbox's recordings are not the studio's): the core first gets
    // the stand-in service's credentials, as the Settings e2e in popover.e2e.ts enters them.
    await h.core.handlers['credentials:set']({ serviceId: 'e2e-project', secret: h.serviceSecret });
    await expect.poll(async () => (await h.core.handlers['app:info']()).demo, eventually).toBe(false);
    const popover = await openPopover(h, { tab: 'settings' });
    pages.push(popover);
    const { page, received } = popover;
    const studio = page.getByRole('region', { name: 'Studio' });
    await studio.getByText('Studio mode is off.').waitFor();

    await studio.getByRole('radio', { name: /^Is the studio’s receiver/ }).check();
    await studio.getByLabel('Team servers', { exact: true }).fill(nats.url);
    // How long the team keeps recordings: the receiver decides, and it reaches the team server's assets.
    await studio.getByRole('spinbutton', { name: 'Keep on the team server (days)' }).fill('14');

    // Without the token the server refuses: the test says so and nothing connects.
    await studio.getByRole('button', { name: 'Test', exact: true }).click();
    await studio.getByRole('alert').waitFor();
    expect(await studio.getByRole('alert').textContent()).toMatch(/\S/);

    // The token goes to the keychain once; the page only hears which server it is for.
    await studio.getByLabel('Password or token').fill(TOKEN);
    await studio.getByRole('button', { name: 'Store in keychain' }).click();
    await studio.getByText('The team credentials are stored in the keychain.').waitFor();
    await studio.getByText(/^Credentials stored in the keychain for /).waitFor();
    expect(await studio.getByLabel('Password or token').inputValue()).toBe('');
    expect((await h.core.handlers['studio:get']()).credentials).toMatchObject({ kind: 'token' });

    await studio.getByRole('button', { name: 'Test', exact: true }).click();
    await studio.getByText(/^The team server answered\./).waitFor();

    await studio.getByRole('button', { name: 'Save studio settings' }).click();
    await studio.getByText('Studio settings saved.').waitFor();
    await expect
      .poll(async () => (await h.core.handlers['studio:get']()).status, eventually)
      .toMatchObject({
        state: 'connected',
      });
    await studio.getByText(/^Connected to the team server/).waitFor();
    expect(await h.core.handlers['studio:get']()).toMatchObject({ mode: 'receiver', retentionDays: 14 });

    // A recording the receiver saves is shared with the studio, and Recordings says so. The stand-in service
    // sends its webhook to the receiver's loopback URL (no tunnel here).
    const { control } = h.service;
    control.setWebhookUrl((await h.core.handlers['tunnel:status']()).localUrl);
    control.startBroadcast({ id: 'studio-show', record: true, recordingBytes: 80_000, watchers: 3 });
    await page.getByRole('tab', { name: 'Recordings' }).click();
    // The receiver lists the studio's members and how far each is behind; none has joined this team server yet.
    await page.getByRole('region', { name: 'Studio members' }).getByText('No member follows the studio yet.').waitFor();
    await control.endBroadcast('studio-show');
    const shared = page.getByRole('region', { name: 'Studio recordings' });
    await expect
      .poll(() => shared.textContent({ timeout: 1000 }).catch(() => ''), eventually)
      .toMatch(/studio-show.*Shared/);

    expect(received.filter((frame) => frame.includes(TOKEN))).toEqual([]);
    expect(await page.content()).not.toContain(TOKEN);
  });
});

describe('a studio member without service credentials', () => {
  // Its own core: no service credentials ever, and demo mode as the app chooses it (not forced).
  let m: PopoverHarness;
  beforeAll(async () => {
    m = await startPopoverHarness(ROOT, { chosenDemo: true });
  });
  afterAll(async () => {
    await m?.close();
  });

  it('follows the studio from Settings, leaves demo mode and lists the mirrored recording', async () => {
    expect((await m.core.handlers['credentials:status']()).source).toBe('sandbox');
    expect((await m.core.handlers['app:info']()).demo).toBe(true);
    const popover = await openPopover(m, { tab: 'settings' });
    pages.push(popover);
    const { page } = popover;
    const studio = page.getByRole('region', { name: 'Studio' });
    await studio.getByText('Studio mode is off.').waitFor();

    // The team server asks for its token (team credentials, not the service's): stored as the receiver's was.
    await m.core.handlers['studio:setCredentials'](nats.url, { token: TOKEN });
    await studio.getByRole('radio', { name: /^Follows a studio/ }).check();
    await studio.getByLabel('Team servers', { exact: true }).fill(nats.url);
    await studio.getByLabel('Name of this computer in the studio').fill('e2e-member');
    await studio.getByRole('button', { name: 'Save studio settings' }).click();
    await studio.getByText(/^Connected to the team server/).waitFor();
    expect((await m.core.handlers['app:info']()).demo).toBe(false);
    // Its demo sandbox is closed: nothing answers there any more.
    expect(await sandboxAnswers(m.sandbox)).toBe(false);

    // The receiver alone registers the webhook URL (the service keeps one): the setting is off here, and says why.
    const autoRegister = page.getByRole('checkbox', { name: 'Register automatically when the URL changes' });
    await expect.poll(() => autoRegister.isDisabled(), eventually).toBe(true);
    await page.getByText(/^This computer follows a studio: the studio's receiver registers the webhook URL/).waitFor();

    const source = join(m.recordingsDir, '..', 'team-source.bin');
    await writeFile(source, Buffer.alloc(90_000, 7));
    await announceRecording(nats.url, source, 'member-show', TOKEN);
    await page.getByRole('tab', { name: 'Recordings' }).click();
    // A member's mirrored recordings are rows of the one list, with its actions.
    await page.getByRole('button', { name: /^Copy path of member-show/ }).waitFor();
    await page.getByText(/member-show\.mp4/).waitFor();
  });
});

describe('a first run that joins a studio', () => {
  // Its own core (no service credentials ever) and its own team server, so the stream holds nothing yet and
  // the guide's "waiting" is seen before the first recording.
  let f: PopoverHarness;
  let team: NatsServer;
  const token = `first-${randomBytes(12).toString('hex')}`;
  beforeAll(async () => {
    team = await startNatsServer({ args: ['--auth', token] });
    f = await startPopoverHarness(ROOT, { chosenDemo: true });
  });
  afterAll(async () => {
    await f?.close();
    await team?.close();
  });

  it('asks only for the team token, tests it, checks the folder, waits and saves the announced recording', async () => {
    expect((await f.core.handlers['credentials:status']()).source).toBe('sandbox');
    await f.core.handlers['settings:update']({ firstRunDone: false });
    const popover = await openPopover(f);
    pages.push(popover);
    const { page, received } = popover;
    await page.getByRole('button', { name: 'I’m joining a studio' }).click();
    await page.getByRole('heading', { name: 'Join your studio' }).waitFor();
    expect(await page.getByLabel('Service ID').count()).toBe(0);

    // A wrong token: the real server refuses it and the guide stays on this step with the reason.
    await page.getByLabel('Team servers', { exact: true }).fill(team.url);
    await page.getByLabel('Password or token').fill('not-the-token');
    await page.getByRole('button', { name: 'Test and continue' }).click();
    await page.getByRole('alert').filter({ hasText: 'The team server refused the credentials' }).waitFor();
    // The refused token is not kept in the keychain.
    await expect.poll(async () => (await f.core.handlers['studio:get']()).credentials, eventually).toBeNull();
    await page.getByLabel('Password or token').fill(token);
    await page.getByRole('button', { name: 'Test and continue' }).click();
    await page.getByRole('heading', { name: 'Where recordings are saved' }).waitFor();
    expect((await f.core.handlers['studio:get']()).credentials).toMatchObject({ kind: 'token' });

    const folder = join(f.home, 'studio-recordings');
    await page.getByLabel('Folder path').fill(folder);
    await page.getByRole('button', { name: 'Check and use this folder' }).click();
    await page.getByRole('heading', { name: 'Waiting for the studio’s recordings' }).waitFor();
    // Waiting means following: connected to the team server, out of demo mode, registering nothing.
    await page.getByText(/a checked copy arrives in your folder\.$/).waitFor();
    await page.getByText('Connected to the team server').waitFor();
    expect(await f.core.handlers['app:info']()).toMatchObject({ demo: false });
    expect(await horizontalOverflows(page)).toEqual([]);
    await page.setViewportSize({ width: 300, height: 560 });
    expect(await horizontalOverflows(page)).toEqual([]);

    const source = join(f.home, 'team-source.bin');
    const bytes = Buffer.alloc(70_000, 9);
    await writeFile(source, bytes);
    await announceRecording(team.url, source, 'first-show', token);
    await page.getByRole('heading', { name: 'A studio recording is here' }).waitFor();
    await page.getByText('first-show.mp4 is in your recordings folder.').waitFor();
    expect((await readFile(join(folder, 'first-show.mp4'))).equals(bytes)).toBe(true);

    await page.getByRole('button', { name: 'Open Tally' }).click();
    await page.getByRole('tab', { name: 'Recordings' }).click();
    await page.getByRole('button', { name: /^Copy path of first-show/ }).waitFor();
    await page.getByText(/first-show\.mp4/).waitFor();
    expect(openSettingsStore(f.home).get()).toMatchObject({
      firstRunDone: true,
      recordingsFolder: folder,
      studio: { mode: 'follow', servers: [team.url] },
    });
    expect(received.filter((frame) => frame.includes(token))).toEqual([]);
    expect(await page.content()).not.toContain(token);
  });
});

describe('joining a studio from tally serve --sandbox', () => {
  // Demo mode forced, as `tally serve --sandbox` (and so `npm start` without a display) forces it: following a
  // studio must still leave it, and the member's Recordings are one list with the usual rows and actions.
  let s: PopoverHarness;
  let team: NatsServer;
  const token = `sandbox-${randomBytes(12).toString('hex')}`;
  beforeAll(async () => {
    team = await startNatsServer({ args: ['--auth', token] });
    s = await startPopoverHarness(ROOT);
  });
  afterAll(async () => {
    await s?.close();
    await team?.close();
  });

  it('leaves the forced demo, mirrors the announced recording and lists it with its actions', async () => {
    expect((await s.core.handlers['app:info']()).demo).toBe(true);
    await s.core.handlers['settings:update']({ firstRunDone: false });
    const popover = await openPopover(s);
    pages.push(popover);
    const { page } = popover;
    await page.getByRole('button', { name: 'I’m joining a studio' }).click();
    await page.getByLabel('Team servers', { exact: true }).fill(team.url);
    await page.getByLabel('Password or token').fill(token);
    await page.getByRole('button', { name: 'Test and continue' }).click();
    await page.getByRole('heading', { name: 'Where recordings are saved' }).waitFor();
    // The guide offers the folder real recordings go to, never the demo's hidden one.
    const offered = await page.getByLabel('Folder path').inputValue();
    expect(offered).toBe((await s.core.handlers['settings:get']()).ownRecordingsFolder);
    expect(offered).not.toContain('demo-recordings');

    const folder = join(s.home, 'member-recordings');
    await page.getByLabel('Folder path').fill(folder);
    await page.getByRole('button', { name: 'Check and use this folder' }).click();
    await page.getByText('Connected to the team server').waitFor();
    expect(await page.getByText('Studio mode is off.').count()).toBe(0);
    expect(await s.core.handlers['app:info']()).toMatchObject({ demo: false });
    expect(await s.core.handlers['studio:get']()).toMatchObject({ mode: 'follow', status: { state: 'connected' } });

    const source = join(s.home, 'team-source.bin');
    const bytes = Buffer.alloc(60_000, 5);
    await writeFile(source, bytes);
    await announceRecording(team.url, source, 'sandbox-show', token);
    await page.getByRole('heading', { name: 'A studio recording is here' }).waitFor();
    expect((await readFile(join(folder, 'sandbox-show.mp4'))).equals(bytes)).toBe(true);

    await page.getByRole('button', { name: 'Open Tally' }).click();
    await page.getByRole('tab', { name: 'Recordings' }).click();
    // One list: the mirrored recording is a row like any other, with Open, Show in folder and Copy path.
    const open = page.getByRole('button', { name: /^Open sandbox-show/ });
    await open.waitFor();
    await page.getByRole('button', { name: /^Show sandbox-show.* in folder$/ }).waitFor();
    await page.getByRole('button', { name: /^Copy path of sandbox-show/ }).waitFor();
    expect(await page.getByText('No recordings yet').count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Studio recordings' }).count()).toBe(0);
    await open.click();
    await expect
      .poll(async () => (await readFile(s.openedLog, 'utf8').catch(() => '')).split('\n'), eventually)
      .toContain(join(folder, 'sandbox-show.mp4'));
    // A member never registers a webhook URL: no tunnel talk anywhere in its Recordings.
    const text = await page.locator('body').innerText();
    expect(text).not.toMatch(/tunnel|webhook URL/i);

    // The README's picture of a member's Recordings, light and dark.
    for (const colorScheme of ['light', 'dark'] as const) {
      const shown = await openPopover(s, { colorScheme, tab: 'recordings' });
      pages.push(shown);
      await shown.page.getByRole('button', { name: /^Open sandbox-show/ }).waitFor();
      await mkdir(SHOTS, { recursive: true });
      await shoot(shown.page, join(SHOTS, `studio-member-${colorScheme}.png`));
    }
  });
});
