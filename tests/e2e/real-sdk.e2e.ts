/**
 * The service's real web SDK (`@remotemonster/sdk`, its published bundle from node_modules, not a copy) against
 * Tally in Chromium.
 *
 * What runs of the SDK: the page loads `remon.min.js` and builds a real `Remon` with `media.record` and
 * `media.recordUrl` set to Tally's upload URL. `remon.media.createLocalStream()` (the SDK's own code) asks
 * Chromium for the microphone (a fake device here) and creates the SDK's recorder for the local stream (`LL`).
 * The remote recorder (`RR`) is normally created inside the SDK's WebRTC peer-connection handler once a remote
 * track arrives, which needs the service's signalling server; the test creates it with the SDK's own recorder
 * class (`localRecorder.constructor`) on a WebAudio stream standing in for the remote one, exactly as that
 * handler does (`new Recorder(context, stream, 'RR')`, then `start()` on both). Stopping the recorders runs the
 * SDK's upload code unchanged: one XMLHttpRequest POST per recording with `X-FILENAME:
 * <serviceId>.<channelId>LL.ogg` / `RR.ogg` and the Blob as the body.
 *
 * Shown: both uploads land byte-identical in `tally listen`; with a small upload cap, the SDK tells the page
 * "uploaded" for the 413 (the documented flaw) while Tally reports each refusal with its channel and stream, in
 * NDJSON `rejected` and, in the app core, as the producer sees it: Refused rows in the popover's Recordings (the
 * built renderer over the real UI server, in the same Chromium) and notifications through the tray app's
 * NotificationService (only Electron's Notification is a fake).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppCore } from '../../electron/core/app/app-core.js';
import { startUiServer, type UiServer } from '../../electron/core/app/ui-server.js';
import { MemorySecretStore } from '../../electron/core/credentials.js';
import { openSettingsStore } from '../../electron/core/settings.js';
import { ensureBuiltCli, ROOT } from '../support/built-cli.js';
import { startListen, type ListenEvent, type ListenProcess } from '../support/listen-process.js';
import { NotificationService } from '../../electron/main/notifications.js';
import { fakeNotificationFactory } from '../fakes/electron.js';
import { launchChromium } from './browser.js';
import { ensureRendererBuilt, openPopover, type PopoverPage } from './support/popover-harness.js';

const SDK_BUNDLE = join(ROOT, 'node_modules', '@remotemonster', 'sdk', 'remon.min.js');
const SERVICE_ID = 'e2e-service';

/** The harness page: loads the SDK bundle and exposes `runSdk(recordUrl, channelId)` (our code, not the SDK's). */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>SDK harness</title>
<script src="/remon.min.js"></script></head><body><script>
function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
}
window.runSdk = async function (recordUrl, channelId) {
  const events = [];
  const sent = {};
  const hashing = [];
  let settle;
  const done = new Promise((resolve) => (settle = resolve));
  const remon = new Remon({
    config: {
      credential: { serviceId: ${JSON.stringify(SERVICE_ID)}, key: 'e2e-key' },
      view: {},
      media: { audio: true, video: false, record: true, recordUrl: recordUrl },
      logServer: { url: location.origin + '/log', logSending: false, qualityLogSending: false },
      sentry: { logSending: false },
      sdk: { logLevel: 'ERROR' },
    },
    listener: {
      onRecordEvent(e) {
        events.push({ event: e.event, id: e.id, size: e.size });
        if (e.event === 'upload' && e.file) {
          hashing.push(e.file.arrayBuffer().then((b) => { sent[e.id] = { sha256: null, bytes: b.byteLength }; return crypto.subtle.digest('SHA-256', b).then((d) => { sent[e.id].sha256 = hex(d); }); }));
        }
        const finished = events.filter((x) => x.event === 'uploaded' || x.event === 'error');
        if (finished.length === 2) settle();
      },
    },
  });
  // What the SDK sets when it joins a channel.
  remon.context.channel.id = channelId;
  await remon.media.createLocalStream(remon.context, { audio: true, video: false });
  const local = remon.context.localRecorder;
  if (!local) throw new Error('the SDK made no local recorder');
  // The remote stream: WebAudio instead of a peer connection; the recorder is the SDK's own class.
  const audio = new AudioContext();
  const tone = audio.createOscillator();
  const remoteOut = audio.createMediaStreamDestination();
  tone.connect(remoteOut);
  tone.start();
  const Recorder = local.constructor;
  remon.context.remoteRecorder = new Recorder(remon.context, remoteOut.stream, 'RR');
  const remote = remon.context.remoteRecorder;
  remote.start();
  local.start();
  // Wait until each recorder has real media (ask for it instead of waiting the SDK's 3 s timeslice).
  await Promise.all([local, remote].map((r) => new Promise((resolve) => {
    r.recorder.addEventListener('dataavailable', resolve, { once: true });
    setTimeout(() => r.recorder.requestData(), 300);
  })));
  local.stop();
  remote.stop();
  await done;
  await Promise.all(hashing);
  tone.stop();
  return { events, sent };
};
</script></body></html>`;

interface SdkRun {
  events: { event: string; id: string; size: number }[];
  sent: Record<string, { sha256: string; bytes: number }>;
}

let dir: string;
let browser: Browser;
let harness: Server;
let origin: string;

beforeAll(async () => {
  await ensureBuiltCli();
  dir = await mkdtemp(join(tmpdir(), 'tally-real-sdk-'));
  const bundle = await readFile(SDK_BUNDLE);
  harness = createServer((req, res) => {
    if (req.url === '/remon.min.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(PAGE);
  });
  harness.listen(0, '127.0.0.1');
  await once(harness, 'listening');
  origin = `http://127.0.0.1:${(harness.address() as AddressInfo).port}`;
  browser = await launchChromium(['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream']);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  harness?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs the SDK in a fresh page; nothing but loopback may be reached from it. */
async function runSdk(recordUrl: string, channelId: string): Promise<SdkRun> {
  const page: Page = await browser.newPage();
  const outside: string[] = [];
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.continue();
    outside.push(url.origin);
    return route.abort();
  });
  try {
    await page.goto(`${origin}/`);
    const run = (await page.evaluate(
      ([url, id]) => (globalThis as unknown as { runSdk(u: string, c: string): Promise<unknown> }).runSdk(url, id),
      [recordUrl, channelId] as const,
    )) as SdkRun;
    return { ...run, outside } as SdkRun & { outside: string[] };
  } finally {
    await page.close();
  }
}

async function listenWith(name: string, uploadMaxBytes?: number): Promise<{ proc: ListenProcess; ready: ListenEvent }> {
  const home = join(dir, name);
  if (uploadMaxBytes !== undefined) openSettingsStore(home).update({ uploadMaxBytes });
  const proc = startListen(
    ['--folder', join(home, 'recordings'), '--port', '0', '--tunnel', 'none', '--upload-origin', origin],
    { TALLY_HOME: home },
  );
  const ready = await proc.waitFor((e) => e.type === 'ready', 'ready');
  return { proc, ready };
}

async function stop(proc: ListenProcess): Promise<void> {
  proc.child.kill('SIGTERM');
  expect((await proc.exited).code, proc.stderr()).toBe(0);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('the real web SDK against tally listen', () => {
  it('uploads both recordings (LL and RR), and both land byte for byte', async () => {
    const { proc, ready } = await listenWith('ok');
    try {
      const uploaded = Promise.all([
        proc.waitFor((e) => e.type === 'uploaded' && e.track === 'local', 'LL uploaded'),
        proc.waitFor((e) => e.type === 'uploaded' && e.track === 'remote', 'RR uploaded'),
      ]);
      const run = await runSdk(String(ready.uploadUrl), '1700000000000_e2eOk');
      expect(
        run.events
          .filter((e) => e.event === 'uploaded')
          .map((e) => e.id)
          .sort(),
      ).toEqual(['1700000000000_e2eOkLL', '1700000000000_e2eOkRR']);
      const events = await uploaded;
      for (const event of events) {
        expect(event).toMatchObject({ channelId: '1700000000000_e2eOk', contentType: 'audio/webm' });
        const track = event.track === 'local' ? 'LL' : 'RR';
        // The SDK names it .ogg; the body is WebM, so Tally saves .webm.
        expect(String(event.path)).toMatch(new RegExp(`${SERVICE_ID}\\.1700000000000_e2eOk${track}\\.webm$`));
        const saved = await readFile(String(event.path));
        const sent = run.sent[`1700000000000_e2eOk${track}`];
        expect(saved.length).toBe(sent?.bytes);
        expect(sha256(saved)).toBe(sent?.sha256);
        // A real recording, not an empty shell: an EBML header and some media.
        expect(saved.subarray(0, 4)).toEqual(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]));
        expect(saved.length).toBeGreaterThan(200);
      }
      expect((run as SdkRun & { outside: string[] }).outside).toEqual([]);
    } finally {
      await stop(proc);
    }
  });

  it('refused by a small cap: the SDK tells the page "uploaded", Tally reports both with channel and stream', async () => {
    const { proc, ready } = await listenWith('capped', 100);
    try {
      const refusals = Promise.all([
        proc.waitFor((e) => e.type === 'rejected' && e.track === 'local', 'LL rejected'),
        proc.waitFor((e) => e.type === 'rejected' && e.track === 'remote', 'RR rejected'),
      ]);
      const run = await runSdk(String(ready.uploadUrl), 'capped-show');
      // The documented flaw: any HTTP status is "uploaded" to the page.
      expect(run.events.filter((e) => e.event === 'uploaded')).toHaveLength(2);
      for (const event of await refusals) {
        expect(event).toMatchObject({ status: 413, channelId: 'capped-show', origin });
        expect(String(event.reason)).toMatch(/upload limit/);
        expect(String(event.fileName)).toMatch(/^e2e-service\.capped-show(LL|RR)\.ogg$/);
      }
      expect(proc.events.filter((e) => e.type === 'uploaded')).toEqual([]);
    } finally {
      await stop(proc);
    }
  });
});

describe('the real web SDK against the app core, as the producer sees it', () => {
  it('shows both refused uploads as Refused in the popover, with channel, stream and reason, and notifies', async () => {
    const home = join(dir, 'app');
    openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: join(home, 'recordings'), firstRunDone: true });
    const core = await createAppCore({
      home,
      secrets: new MemorySecretStore(),
      transport: 'ws',
      demo: true,
      sandboxOptions: { demo: false, seed: 2 },
      demoWebClient: false,
      pipelineOverrides: { uploads: { maxBytes: 100, allowedOrigins: () => [origin] } },
    });
    // The tray app's wiring (electron/main/index.ts): the real NotificationService following the settings, with
    // only Electron's Notification faked, since the Electron runtime cannot run here.
    const fakeNotifications = fakeNotificationFactory();
    const notifications = new NotificationService({
      createNotification: fakeNotifications.create,
      isSupported: () => true,
      reveal: () => {},
      showPopover: () => {},
    });
    core.on('notify', (payload) => notifications.notify(payload));
    core.on('settings:changed', (settings) => notifications.setSettings(settings.notifications));
    // Registered after the service's listener: once both have arrived, the service has handled both.
    const refusedNotes = new Promise<void>((resolve) => {
      let count = 0;
      core.on('notify', (n) => {
        if (n.kind === 'refused' && ++count === 2) resolve();
      });
    });
    let ui: UiServer | null = null;
    let popover: PopoverPage | null = null;
    try {
      notifications.setSettings((await core.handlers['settings:get']()).notifications);
      await core.start();
      ui = await startUiServer({ core, staticDir: ensureRendererBuilt(ROOT), host: '127.0.0.1', port: 0 });
      // Open before the uploads: the rows must arrive by the core's push, as in the tray app.
      popover = await openPopover({ browser, url: ui.oneTimeUrl() }, { tab: 'recordings' });
      const { page } = popover;
      const recordUrl = (await core.handlers['tunnel:status']()).uploadUrl;
      await runSdk(String(recordUrl), 'app-show');

      const rows = page.getByRole('listitem').filter({ hasText: /^app-show · (Local|Remote) stream · / });
      const expectRefusedRows = async () => {
        for (const [stream, track] of [
          ['local', 'LL'],
          ['remote', 'RR'],
        ]) {
          const row = rows.filter({ hasText: `${stream} stream` });
          await row.getByText('Refused', { exact: true }).waitFor();
          expect(await row.textContent()).toMatch(
            new RegExp(
              `Refused ${stream} stream · 413: .*100 bytes upload limit.* · e2e-service\\.app-show${track}\\.ogg`,
            ),
          );
        }
        expect(await rows.count()).toBe(2);
      };
      await expectRefusedRows();
      await page.getByRole('radio', { name: /^Problems 2$/ }).check();
      await expectRefusedRows();

      await refusedNotes;
      const shown = fakeNotifications.made.filter((n) => n.options.title === 'Client recording refused');
      expect(shown.map((n) => n.shown)).toEqual([true, true]);
      expect(shown.map((n) => String(n.options.body)).sort()).toEqual([
        expect.stringMatching(/^app-show \(local stream\): .*upload limit/),
        expect.stringMatching(/^app-show \(remote stream\): .*upload limit/),
      ]);
      expect(core.traySnapshot().attention).not.toBeNull();
      expect(popover.pageErrors).toEqual([]);
    } finally {
      await popover?.close();
      await ui?.close();
      await core.stop();
    }
  });
});
