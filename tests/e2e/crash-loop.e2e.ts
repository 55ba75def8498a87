/**
 * The crash-loop guard of the real main process (electron/main/crash.ts, issue 33), over the `electron` stand-in
 * (support/electron-standin.ts): three lives of the tray app, one after the other on the same data folder, each
 * booted from a fresh module registry as a relaunched process would be, each ended by an uncaught exception in
 * main. The first two relaunch; the third, within the minute, does not: it shows the crash-loop dialog, whose Copy
 * diagnostics puts the report (the three crashes included) on the clipboard, and quits. The crash times live in
 * the data folder, so only the file carries them from one life to the next.
 */
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openSettingsStore } from '../../electron/core/settings.js';

const ROOT = join(import.meta.dirname, '..', '..');
const savedEnv = { ...process.env };
let home: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'tally-crash-loop-'));
  // No service, no demo: the core starts quickly and receives on a free port.
  openSettingsStore(home).update({
    receiverPort: 0,
    recordingsFolder: join(home, 'rec'),
    firstRunDone: true,
    demoMode: false,
  });
  process.env.TALLY_HOME = home;
  for (const name of ['TALLY_SERVICE_ID', 'TALLY_SECRET', 'TALLY_DEMO']) delete process.env[name];
});

afterAll(async () => {
  process.env = savedEnv;
  if (home) await rm(home, { recursive: true, force: true });
});

const EVENTS = ['uncaughtException', 'unhandledRejection', 'SIGINT', 'SIGTERM'] as const;

/** Boots the main process once, as a (re)started app; crashes it with an uncaught exception; waits for the quit. */
async function lifeEndingInACrash(n: number) {
  vi.resetModules();
  const standin = await import('./support/electron-standin.js');
  // No window is opened: the browser is never asked for.
  standin.configureStandin({ browser: undefined as never, appPath: ROOT });
  /** The process's listeners of `event` (one signature for all four: they are only compared and removed). */
  const listeners = (event: (typeof EVENTS)[number]) =>
    (process.listeners as (e: string) => ((...args: never[]) => void)[])(event);
  const before = new Map(EVENTS.map((e) => [e, new Set(listeners(e))]));
  const trayCreated = once(standin.standinEvents, 'tray');
  await import('../../electron/main/index.js');
  const crash = process.listeners('uncaughtException').find((l) => !before.get('uncaughtException')?.has(l as never));
  expect(crash, 'main installs its crash handler').toBeTypeOf('function');
  standin.app.emitReady();
  await trayCreated;
  const quit = once(standin.standinEvents, 'quit');
  crash!(new Error(`crash-loop e2e: crash ${n}`), 'uncaughtException');
  await quit;
  // This "process" is over: its handlers go with it (the next life installs its own).
  for (const event of EVENTS) {
    for (const listener of listeners(event)) {
      if (!before.get(event)?.has(listener)) process.off(event, listener as never);
    }
  }
  return standin.recorded;
}

describe('the crash-loop guard', () => {
  it('relaunches after the first two crashes; the third within a minute shows the dialog and relaunches no more', async () => {
    const first = await lifeEndingInACrash(1);
    expect(first.relaunches).toBe(1);
    expect(first.dialogs).toEqual([{ title: 'Tally ran into an unexpected error', content: expect.any(String) }]);
    // Native crash dumps are written locally, never uploaded.
    expect(first.crashReporter).toEqual([expect.objectContaining({ uploadToServer: false })]);

    const second = await lifeEndingInACrash(2);
    expect(second.relaunches).toBe(1);

    const third = await lifeEndingInACrash(3);
    expect(third.relaunches).toBe(0);
    expect(third.dialogs).toEqual([
      expect.objectContaining({
        type: 'error',
        title: 'Tally keeps stopping',
        message: 'Tally stopped unexpectedly 3 times within a minute, so it does not start again on its own.',
        detail: expect.stringContaining(join(home, 'logs')),
        buttons: ['Copy diagnostics', 'Quit Tally'],
      }),
    ]);
    // The stand-in answers the first button: Copy diagnostics.
    const report = third.clipboard.at(-1) ?? '';
    expect(report).toMatch(/^Tally diagnostics, /);
    expect(report).toMatch(/Crashes of the tray app: 3 recorded, the last at /);
    expect(report).toContain(`Crash dumps (kept on this computer, never uploaded) in ${join(home, 'crashes')}: none`);

    const log = await readFile(join(home, 'logs', 'app.1.log'), 'utf8');
    for (const n of [1, 2, 3]) expect(log).toContain(`uncaught exception: Error: crash-loop e2e: crash ${n}`);
    expect(log).toContain('crash loop: 3 crashes within a minute; Tally does not restart itself');
    expect(log).toContain('crash loop: the diagnostics were copied');
  }, 120_000);
});
