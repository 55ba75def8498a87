/**
 * Clock steps cost no recording (issue 30). The receive service runs in a child process under libfaketime
 * (Debian `faketime`), its wall clock stepped while it works through a timestamp file read on every call
 * (FAKETIME_NO_CACHE), its monotonic clock left real (FAKETIME_DONT_FAKE_MONOTONIC). The origin is the sandbox
 * in this test's own process, on the real clock: it is the service's clock. Before issue 30, each of these
 * expired a recording the origin still served and deleted its part:
 *
 * - +7 h during a 503 retry (NTP correcting a dual-boot PC whose hardware clock kept local time);
 * - +7 h during a slow download (the stall rule called it "too late");
 * - +7 h while Tally was stopped (the stored deadline is all a restart has: on the same boot the offset of the
 *   wall clock from the boot clock, kept in the state folder, shows the step);
 * - -1 day during a retry (a user setting the date back).
 *
 * Every recording is saved; nothing is called expired while the origin serves it; no reason or health names a
 * deletion; and a step seen while running moves the stored deadline by the step, so it names the same moment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../electron/core/sandbox/index.js';
import { ROOT, ensureBuiltCli } from '../support/built-cli.js';
import { sha256File } from '../support/sandbox-files.js';

const KiB = 1024;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** libfaketime's multi-threaded preload (Node runs threads), wherever the distribution put it. */
function libfaketime(): string | null {
  const dirs = ['/usr/lib/faketime', ...readdirSync('/usr/lib').map((d) => join('/usr/lib', d, 'faketime'))];
  return dirs.map((d) => join(d, 'libfaketimeMT.so.1')).find((p) => existsSync(p)) ?? null;
}
const LIBFAKETIME = libfaketime();

interface Event {
  type: string;
  key?: string;
  state?: string;
  deadline?: string;
  error?: string | null;
  bytes?: number;
  path?: string;
  downloads?: { state?: string; reason?: string };
  [field: string]: unknown;
}

interface Receiver {
  child: ChildProcess;
  events: Event[];
  waitFor(predicate: (e: Event) => boolean, what: string): Promise<Event>;
  stop(): Promise<void>;
}

let sb: Sandbox;
let dir: string;
let clockFile: string;
const running: Receiver[] = [];

/** The stepped clock of the receiver: an offset from the real time, as libfaketime reads it ("+7h", "-1d"). */
const stepTo = (offset: string) => writeFile(clockFile, `${offset}\n`);

function startReceiver(): Receiver {
  const config = {
    home: join(dir, 'home'),
    folder: join(dir, 'recordings'),
    origins: [sb.downloadOrigin],
    retryBaseMs: 200,
    retryMaxMs: 500,
    stallRule: { bytesPerSec: 1024, windowMs: 500 },
  };
  const child = spawn(process.execPath, [join(ROOT, 'tests/support/clock-step-receiver.ts'), JSON.stringify(config)], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LD_PRELOAD: LIBFAKETIME ?? '',
      FAKETIME_TIMESTAMP_FILE: clockFile,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
      NODE_NO_WARNINGS: '1',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const events: Event[] = [];
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const waiters: { predicate: (e: Event) => boolean; resolve: (e: Event) => void }[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const event = JSON.parse(line) as Event;
    events.push(event);
    for (const w of [...waiters]) {
      if (!w.predicate(event)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(event);
    }
  });
  const receiver: Receiver = {
    child,
    events,
    waitFor(predicate, what) {
      const seen = events.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ predicate, resolve });
        void exited.then((code) => reject(new Error(`the receiver exited (${code}) before ${what}\n${stderr}`)));
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  running.push(receiver);
  return receiver;
}

/** Starts a receiver (already started ones keep their webhook URL) and points the sandbox's webhook at it. */
async function receiving(): Promise<Receiver> {
  const receiver = startReceiver();
  const ready = await receiver.waitFor((e) => e.type === 'ready', 'ready');
  sb.control.setWebhookUrl(String(ready.url));
  return receiver;
}

/** A recorded broadcast of `bytes` ends: the sandbox sends its webhook. */
async function broadcast(id: string, bytes: number): Promise<void> {
  sb.control.startBroadcast({ id, record: true, recordingBytes: bytes, watchers: 1 });
  await sb.control.endBroadcast(id);
}

/** The wall clock as the receiver reads it (stepped). */
async function wallOf(r: Receiver): Promise<Event> {
  const asked = r.events.length;
  r.child.stdin?.write('wall\n');
  return r.waitFor((e) => e.type === 'wall' && r.events.indexOf(e) >= asked, 'its wall clock');
}

/** What every run must show, whatever the step: nothing expired, no reason or health naming a deletion. */
function nothingCalledDeleted(events: Event[]): void {
  expect(events.filter((e) => e.type === 'expired')).toEqual([]);
  for (const e of events) {
    expect(String(e.error ?? '')).not.toMatch(/deleted/i);
    expect(String(e.downloads?.reason ?? '')).not.toMatch(/deleted|expire/i);
  }
}

/** The recording's end: saved, as it must be (an `expired` fails the test at once, with its reason). */
async function saved(r: Receiver, key: string): Promise<Event> {
  const end = await r.waitFor((e) => (e.type === 'saved' || e.type === 'expired') && e.key === key, `${key} saved`);
  expect(end, String(end.error)).toMatchObject({ type: 'saved' });
  return end;
}

/**
 * The first `failed` event that `moved` accepts, within 20 retries (an `expired` one, or the 20th retry that
 * `moved` refuses, ends the wait and fails the test).
 */
async function retried(r: Receiver, moved: (e: Event) => boolean, what: string): Promise<Event> {
  let left = 20;
  const event = await r.waitFor(
    (e) => (e.type === 'failed' && (moved(e) || --left === 0)) || e.type === 'expired',
    what,
  );
  expect(event, String(event.error)).toMatchObject({ type: 'failed' });
  expect(moved(event), `${what}: 20 retries, and still ${String(event.deadline)}`).toBe(true);
  return event;
}

describe.skipIf(!LIBFAKETIME)('clock steps under libfaketime (the origin keeps the real time)', () => {
  beforeAll(async () => {
    await ensureBuiltCli();
    sb = await startSandbox({ webhookDelayMs: 0 });
  }, 240_000);
  afterAll(async () => {
    await sb?.close();
  });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-clock-'));
    clockFile = join(dir, 'faketime');
    await stepTo('+0');
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.stop()));
    sb.control.setFaults('download', null);
    await rm(dir, { recursive: true, force: true });
  });

  it('+7 h during a 503 retry: the stored deadline moves with the step, and the recording is saved', async () => {
    sb.control.setFaults('download', { status: 503 });
    const r = await receiving();
    await broadcast('step-503', 200 * KiB);
    const first = await r.waitFor((e) => e.type === 'failed', 'a 503');
    const before = Date.parse(first.deadline ?? '');
    await stepTo('+7h');
    // Retried through the step: the deadline it is stored with names the same moment on the stepped clock.
    const after = await retried(
      r,
      (e) => Date.parse(e.deadline ?? '') - before > 6 * HOUR,
      'a retry with the deadline moved by the step',
    );
    expect(Math.abs(Date.parse(after.deadline ?? '') - before - 7 * HOUR)).toBeLessThan(5_000);
    sb.control.setFaults('download', null);
    const done = await saved(r, first.key!);
    expect(await sha256File(String(done.path))).toBe(await sb.control.getRecording('step-503')?.sha256());
    nothingCalledDeleted(r.events);
  }, 60_000);

  it('+7 h during a slow download: never "too late", saved in one go', async () => {
    sb.control.setFaults('download', { rateBytesPerSec: 64 * KiB });
    const r = await receiving();
    await broadcast('step-slow', 192 * KiB);
    const received = await r.waitFor((e) => e.type === 'received', 'the webhook');
    await r.waitFor((e) => e.type === 'progress' && (e.bytes ?? 0) > 0, 'the first bytes');
    await stepTo('+7h');
    const done = await saved(r, received.key!);
    expect(Math.abs(Date.parse(done.deadline ?? '') - Date.parse(received.deadline ?? '') - 7 * HOUR)).toBeLessThan(
      5_000,
    );
    // The stall rule (a 500 ms window here) never stopped it.
    expect(r.events.filter((e) => e.type === 'failed')).toEqual([]);
    nothingCalledDeleted(r.events);
  }, 60_000);

  it('+7 h while stopped: the restart moves the stored deadline by the step, keeps trying and saves it', async () => {
    sb.control.setFaults('download', { status: 503 });
    const first = await receiving();
    await broadcast('step-stopped', 200 * KiB);
    const failed = await first.waitFor((e) => e.type === 'failed', 'a 503');
    await first.stop();
    await stepTo('+7h');
    // The first attempt after the restart meets one more 503, past the deadline the journal holds.
    sb.control.setFaults('download', { status: 503, times: 1 });
    const again = await receiving();
    // On the same boot the restart sees the step (the wall clock's offset from the boot clock, kept in the state
    // folder) and moves the journal's deadline by it before reading it.
    const late = await retried(again, () => true, 'the 503 after the restart');
    expect(late.state).toBe('pending');
    expect(Math.abs(Date.parse(late.deadline ?? '') - Date.parse(failed.deadline ?? '') - 7 * HOUR)).toBeLessThan(
      5_000,
    );
    const done = await saved(again, failed.key!);
    expect(await sha256File(String(done.path))).toBe(await sb.control.getRecording('step-stopped')?.sha256());
    nothingCalledDeleted([...first.events, ...again.events]);
  }, 60_000);

  it("+7 h while stopped, on another boot: the origin's Date says the 6 hours are not over, so a 403 is looked at again, and it is saved", async () => {
    // A download under way when Tally stops (the PC shuts down): the origin's answers, served, carried its Date.
    sb.control.setFaults('download', { rateBytesPerSec: 32 * KiB });
    const first = await receiving();
    await broadcast('step-boot', 256 * KiB);
    const received = await first.waitFor((e) => e.type === 'received', 'the webhook');
    await first.waitFor((e) => e.type === 'progress' && (e.bytes ?? 0) > 0, 'the first bytes');
    await first.stop();
    // It starts again on another boot with its clock stepped +7 h (the hardware clock kept local time). The clock
    // anchor in the state folder is the other boot's, so nothing shows the step: the journal's deadline, read as
    // it is, lies an hour in the past.
    await writeFile(join(dir, 'home', 'state', 'clock.json'), `${JSON.stringify({ bootId: 'another-boot' })}\n`);
    await stepTo('+7h');
    // The origin answers 403 once (S3's AccessDenied, as for a key it cannot show), then serves the file again.
    sb.control.setFaults('download', { status: 403, times: 1 });
    const ranges: (string | null)[] = [];
    const onRequest = (r: { target: string; range?: string | null }) => {
      if (r.target === 'download') ranges.push(r.range ?? null);
    };
    sb.control.events.on('request', onRequest);
    const again = await receiving();
    const look = await again.waitFor((e) => e.type === 'failed' || e.type === 'expired', 'the 403 after the restart');
    // Past the deadline the journal held, yet not expired: the origin's Date is seconds after the webhook. And the
    // deadline is set right by the service's clock: nearly 6 hours ahead of the stepped clock, not one behind it.
    expect(look, String(look.error)).toMatchObject({ type: 'failed', state: 'gone' });
    const ahead = Date.parse(look.deadline ?? '') - Date.parse(String((await wallOf(again)).now));
    expect(ahead).toBeGreaterThan(6 * HOUR - 60_000);
    expect(ahead).toBeLessThanOrEqual(6 * HOUR);
    const done = await saved(again, received.key!);
    sb.control.events.off('request', onRequest);
    expect(await sha256File(String(done.path))).toBe(await sb.control.getRecording('step-boot')?.sha256());
    // Its part was kept: the download went on from where the first run stopped.
    expect(Number(/^bytes=(\d+)-/.exec(ranges.at(-1) ?? '')?.[1] ?? 0)).toBeGreaterThan(0);
    // The 403 is said as it is ("does not have this recording", no deletion time), by the job and by health while it
    // lasts (health counts it among the problems). Nothing else says deleted or expired.
    const events = [...first.events, ...again.events];
    for (const e of events) expect(String(e.error ?? '') + String(e.downloads?.reason ?? '')).not.toMatch(/\(at /);
    const about403 = (e: Event) =>
      /does not have this recording|is gone from the service/.test(String(e.downloads?.reason));
    nothingCalledDeleted(events.filter((e) => e !== look && !about403(e)));
  }, 60_000);

  it('-1 day during a retry: retried on time, the stored deadline moved back by the day, saved', async () => {
    sb.control.setFaults('download', { status: 503 });
    const r = await receiving();
    await broadcast('step-back', 200 * KiB);
    const first = await r.waitFor((e) => e.type === 'failed', 'a 503');
    const before = Date.parse(first.deadline ?? '');
    await stepTo('-1d');
    const after = await retried(
      r,
      (e) => before - Date.parse(e.deadline ?? '') > 12 * HOUR,
      'a retry with the deadline moved back by the step',
    );
    expect(Math.abs(before - Date.parse(after.deadline ?? '') - DAY)).toBeLessThan(5_000);
    sb.control.setFaults('download', null);
    await saved(r, first.key!);
    nothingCalledDeleted(r.events);
  }, 60_000);
});
