/**
 * One receive service, honest health, through every face: the built `tally listen` and `tally serve` as child
 * processes, the app core in process, and `tally status` reading each over its control socket. Real ports held by
 * a real server, a real loopback proxy playing the public URL, the sandbox as the service.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { HealthView } from '../electron/contract.js';
import { main } from '../electron/cli.js';
import { captureIo } from './support/cli/io.js';
import { cleanups, makeCore, next, runCleanups, tempHome } from './support/app/core-helpers.js';
import { openSettingsStore } from '../electron/core/settings.js';
import { ensureBuiltCli, ROOT, TALLY_BIN } from './support/built-cli.js';
import { startLoopbackProxy } from './support/loopback-proxy.js';
import { startListen, type ListenEvent, type ListenProcess } from './support/listen-process.js';

async function freshHome(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'tally-health-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  return home;
}

/** A port held by another program (this test's own server), as a producer's nginx or a second app would. */
async function holdPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  };
  cleanups.push(release);
  return { port: (blocker.address() as { port: number }).port, release };
}

/** `tally status --json` for `home`, run in process: its exit code and what it printed. */
async function status(home: string): Promise<{ code: number; body: { state: string | null; running: unknown[] } }> {
  const made = captureIo(new AbortController().signal, { TALLY_HOME: home });
  const code = await main(['status', '--json'], made.io);
  return { code, body: JSON.parse(made.out()) as { state: string | null; running: unknown[] } };
}

function track(proc: ListenProcess): ListenProcess {
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  });
  return proc;
}

/** A predicate that only matches events after the ones seen so far (waitFor also looks at past events). */
function afterNow(proc: ListenProcess, test: (e: ListenEvent) => boolean): (e: ListenEvent) => boolean {
  const seen = proc.events.length;
  return (e) => proc.events.indexOf(e) >= seen && test(e);
}

const health = (e: ListenEvent) => e as unknown as HealthView & { type: 'health' };
const part = (view: Pick<HealthView, 'components'>, id: string) => view.components.find((c) => c.id === id);

describe('the port policy, through the one receive service', () => {
  beforeAll(() => ensureBuiltCli(), 180_000);
  afterEach(() => runCleanups());

  it('own URL + a taken port: tally listen stays up in error naming the port, tally status exits 2, ok once it frees', async () => {
    const held = await holdPort();
    const busy = held.port;
    const home = await freshHome();
    const proxy = await startLoopbackProxy(() => busy);
    cleanups.push(() => proxy.close());
    const proc = track(
      startListen(['--folder', join(home, 'rec'), '--port', String(busy), '--tunnel', proxy.url], {
        TALLY_HOME: home,
      }),
    );
    const down = health(await proc.waitFor((e) => e.type === 'health' && health(e).state === 'error', 'health error'));
    expect(part(down, 'receiver')).toMatchObject({ state: 'error' });
    expect(part(down, 'receiver')?.reason).toMatch(
      new RegExp(`^Port ${busy} is in use by .+ \\(process ${process.pid}\\)`),
    );
    expect(part(down, 'receiver')?.action).toContain('--port');
    expect(down.receiver).toMatchObject({ port: null, configuredPort: busy, portFollows: false });

    const seen = await status(home);
    expect(seen.code).toBe(2);
    expect(JSON.stringify(seen.body)).toContain(`Port ${busy} is in use`);

    // The other program goes away: the same port is taken, nothing moved, and the error clears.
    await held.release();
    const up = health(
      await proc.waitFor((e) => e.type === 'health' && part(health(e), 'receiver')?.state === 'ok', 'receiver ok'),
    );
    expect(up.receiver.port).toBe(busy);
  });

  it('own URL + a taken port in the app core: the same error, the same socket for tally status', async () => {
    const busy = (await holdPort()).port;
    const proxy = await startLoopbackProxy(() => busy);
    cleanups.push(() => proxy.close());
    const home = await tempHome({ receiverPort: busy, tunnel: { provider: 'url', publicUrl: proxy.url } });
    const core = await makeCore(home);
    const error = next(core, 'health:changed', (h) => h.state === 'error');
    const started = Date.now();
    await core.start();
    const view = await error;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(part(view, 'receiver')?.reason).toContain(`Port ${busy} is in use`);
    expect(part(view, 'receiver')?.action).toContain('Settings → How the service reaches Tally → Receiver port');
    expect(core.traySnapshot().health.state).toBe('error');
    const seen = await status(home);
    expect(seen.code).toBe(2);
    expect(JSON.stringify(seen.body)).toContain(`Port ${busy} is in use`);
  });

  it('where the address follows the port (the demo sandbox), the taken port moves, is shown, and health stays ok', async () => {
    const busy = (await holdPort()).port;
    const home = await tempHome({ receiverPort: busy });
    const core = await makeCore(home);
    await core.start();
    const view = await core.handlers['health:get']();
    expect(view.state).toBe('ok');
    expect(view.receiver.port).not.toBe(busy);
    expect(view.receiver).toMatchObject({ configuredPort: busy, portFollows: true });
  });
});

describe('tally status', () => {
  beforeAll(() => ensureBuiltCli(), 180_000);
  afterEach(() => runCleanups());

  it('exits 3 when nothing runs on this TALLY_HOME', async () => {
    const seen = await status(await freshHome());
    expect(seen).toEqual({ code: 3, body: { running: [], state: null } });
  });

  it('exits 0 for a healthy sandbox run of tally listen', async () => {
    const home = await freshHome();
    const proc = track(startListen(['--sandbox', '--folder', join(home, 'rec')], { TALLY_HOME: home }));
    await proc.waitFor((e) => e.type === 'ready', 'ready');
    await proc.waitFor((e) => e.type === 'health' && health(e).state === 'ok', 'health ok');
    const seen = await status(home);
    expect(seen.code, JSON.stringify(seen.body)).toBe(0);
    expect(seen.body.running).toMatchObject([{ face: 'listen', pid: proc.child.pid }]);
  });

  it('exits 0 for a healthy sandbox run of tally serve', async () => {
    const home = await freshHome();
    openSettingsStore(home).update({ receiverPort: 0, recordingsFolder: join(home, 'rec') });
    const child = spawn(process.execPath, [TALLY_BIN, 'serve', '--sandbox', '--port', '0', '--json', '--no-open'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TALLY_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    });
    const lines = createInterface({ input: child.stdout });
    await new Promise<void>((resolve) => lines.on('line', (l) => l.includes('"ready"') && resolve()));
    // Ready comes after the core started (serve.ts): its receiver listens and its health is judged fresh.
    const seen = await status(home);
    expect(seen.code, JSON.stringify(seen.body)).toBe(0);
    expect(seen.body.running).toMatchObject([{ face: 'serve', pid: child.pid }]);
  });

  it('exits 0 for a healthy demo app core', async () => {
    const home = await tempHome();
    const core = await makeCore(home);
    await core.start();
    expect((await core.handlers['health:get']()).state).toBe('ok');
    const seen = await status(home);
    expect(seen.code, JSON.stringify(seen.body)).toBe(0);
    expect(seen.body.running).toMatchObject([{ pid: process.pid }]);
  });
});

describe('the public path', () => {
  beforeAll(() => ensureBuiltCli(), 180_000);
  afterEach(() => runCleanups());

  it('turns error within one check period when the public URL stops forwarding, and ok again when it forwards', async () => {
    const home = await freshHome();
    let forwarding = true;
    let port: (value: number) => void = () => undefined;
    const receiverPort = new Promise<number>((resolve) => (port = resolve));
    const proxy = await startLoopbackProxy(async () => (forwarding ? receiverPort : null));
    onTestFinished(() => proxy.close());
    const proc = track(
      startListen(['--folder', join(home, 'rec'), '--port', '0', '--tunnel', proxy.url], {
        TALLY_HOME: home,
        TALLY_CHECK_INTERVAL_MS: '300',
      }),
    );
    const ready = await proc.waitFor((e) => e.type === 'ready', 'ready');
    port(Number(new URL(String(ready.localUrl)).port));
    await proc.waitFor((e) => e.type === 'health' && part(health(e), 'publicPath')?.state === 'ok', 'public ok');

    forwarding = false;
    const stoppedAt = Date.now();
    const broken = health(
      await proc.waitFor(
        afterNow(proc, (e) => e.type === 'health' && part(health(e), 'publicPath')?.state === 'error'),
        'public error',
      ),
    );
    // One check period (300 ms) plus the check's own answer; far below the 10 s a retry would take.
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    expect(broken.state).toBe('error');
    expect(part(broken, 'publicPath')?.reason).toMatch(/^The public URL does not reach this receiver/);

    forwarding = true;
    await proc.waitFor(
      afterNow(proc, (e) => e.type === 'health' && part(health(e), 'publicPath')?.state === 'ok'),
      'public ok again',
    );
  });
});
