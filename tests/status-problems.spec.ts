/**
 * `tally status` names the recordings behind its problem count: which channel, which recording, why, and when
 * Tally tries again, the first few and "… and N more", in text and in `--json` (a trial as a new user saw only
 * "3 problem(s)" and "downloads are failing", with no way to tell which without the popover). A demo app core in
 * process, its sandbox answering 503 for every download, and `tally status` over the real control socket.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../electron/cli.js';
import { PROBLEMS_LISTED, type HealthView } from '../electron/contract.js';
import { captureIo } from './support/cli/io.js';
import { cleanups, makeCore, next, runCleanups, sandboxOf, tempHome } from './support/app/core-helpers.js';
import { ensureBuiltCli, ROOT, TALLY_BIN } from './support/built-cli.js';

afterEach(() => runCleanups());

async function status(home: string, args: string[]): Promise<{ code: number; out: string }> {
  const made = captureIo(new AbortController().signal, { TALLY_HOME: home });
  const code = await main(['status', ...args], made.io);
  return { code, out: made.out() };
}

describe('tally status with failing downloads', () => {
  it('names the first failing recordings with reason and next attempt, and counts the rest', async () => {
    const home = await tempHome();
    // Automatic retries a minute apart: every recording waits with its error while the test looks.
    const core = await makeCore(home, { pipelineOverrides: { retryBaseMs: 60_000 } });
    await core.start();
    const sandbox = sandboxOf(core);
    sandbox.control.setFaults('download', { status: 503 });
    const total = PROBLEMS_LISTED + 2;
    const channels = Array.from({ length: total }, (_, i) => `night-owl-${i}`);
    const failing = next(core, 'health:changed', (h) => h.problems === total);
    for (const id of channels) {
      sandbox.control.startBroadcast({ id, record: true, recordingBytes: 40_000 });
      await sandbox.control.endBroadcast(id);
    }
    await failing;

    const text = await status(home, []);
    expect(text.code).toBe(1);
    expect(text.out).toContain(`${total} problems`);
    expect(text.out).not.toContain('(s)');
    const named = text.out.split('\n').filter((l) => /^ {4}night-owl-\d+ \(recording /.test(l));
    expect(named).toHaveLength(PROBLEMS_LISTED);
    for (const line of named) expect(line).toMatch(/ failing: .*503.* Next attempt at \d\d:\d\d:\d\d\.$/);
    expect(text.out).toContain('… and 2 more');

    const json = await status(home, ['--json']);
    const body = JSON.parse(json.out) as { running: { health: HealthView }[] };
    const health = body.running[0]!.health;
    expect(health.moreProblems).toBe(2);
    expect(health.problemRecordings).toHaveLength(PROBLEMS_LISTED);
    for (const p of health.problemRecordings!) {
      expect(channels).toContain(p.channelId);
      expect(p).toMatchObject({ state: 'pending', reason: expect.stringContaining('503') as unknown });
      expect(Date.parse(p.nextAttemptAt!)).toBeGreaterThan(Date.now());
    }
  });
});

/** `tally serve --sandbox` of the built CLI on `home`, once it printed its ready line. */
async function serve(home: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [TALLY_BIN, 'serve', '--sandbox', '--port', '0', '--json', '--no-open'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TALLY_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  });
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve) => lines.on('line', (l) => l.includes('"ready"') && resolve()));
  return child;
}

describe('tally status of a Tally whose receiver never opened', () => {
  beforeAll(() => ensureBuiltCli(), 180_000);

  it('says "not listening" without naming a port 0 it never asked for', async () => {
    const home = await tempHome();
    await serve(home);
    // A second demo on the same data folder: the first holds the demo's state, so this one receives nothing.
    const second = await serve(home);
    const text = await status(home, []);
    expect(text.code).toBe(2);
    expect(text.out).toContain(`tally serve (process ${second.pid}): error, not listening, no problems\n`);
    expect(text.out).not.toContain('port 0');
  }, 60_000);
});
