/**
 * One member service for every face of a studio member (issue 31): a member joined from `tally serve --sandbox`
 * and one run as `tally follow` judge the same health, never a receiver port (the one the settings name is held
 * by another program here, as a producer's nginx would hold 8787), say the member's own words, and `tally status`
 * describes them as members. Real child processes of the built CLI, a real nats-server, a real held port.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HealthView } from '../electron/contract.js';
import { openSettingsStore } from '../electron/core/settings.js';
import { ROOT, TALLY_BIN, ensureBuiltCli } from './support/built-cli.js';
import { startTally, type ListenEvent, type ListenProcess } from './support/listen-process.js';
import { startNatsServer, type NatsServer } from './support/nats-server.js';

const MEMBER_OK = "All is well: the studio's recordings are mirrored here.";
const RECEIVER_ACTION = 'Recordings are still saved here and shared once the team server answers.';
const eventually = { timeout: 30_000, interval: 100 };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

async function freshHome(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'tally-member-service-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  return home;
}

/** A port held by another program (this test's own server), as a producer's nginx holds 8787. */
async function holdPort(): Promise<number> {
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  return (blocker.address() as { port: number }).port;
}

/** `tally status` (text and --json) for `home`, as the built CLI runs it. */
async function status(home: string, json: boolean): Promise<{ code: number; out: string }> {
  const args = [TALLY_BIN, 'status', ...(json ? ['--json'] : [])];
  const env = { PATH: process.env.PATH, TALLY_HOME: home };
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT, env }, (error, stdout) => {
      resolve({ code: error ? Number((error as { code?: number }).code) : 0, out: stdout });
    });
  });
}

/** What `tally status --json` says of the one running face. */
async function runningHealth(home: string): Promise<{ code: number; health: HealthView | null; face: string }> {
  const { code, out } = await status(home, true);
  const body = JSON.parse(out) as { running: { face: string; health?: HealthView }[] };
  return { code, health: body.running[0]?.health ?? null, face: body.running[0]?.face ?? '' };
}

function expectMemberStatus(text: string, face: string): void {
  expect(text).toMatch(new RegExp(`^✔ ${face} \\(process \\d+\\): ok, studio member, no problems\\n`));
  expect(text).toContain(`  ${MEMBER_OK}\n`);
  expect(text).not.toMatch(/not listening|port \d+|in use|webhooks cannot reach/i);
}

describe('a studio member, through the one member service', () => {
  let nats: NatsServer;
  beforeAll(async () => {
    await ensureBuiltCli();
  }, 180_000);
  afterEach(async () => {
    await nats?.close();
  });

  it('joined from tally serve --sandbox while its receiver port is held elsewhere: health ok, tally status exit 0 as a member', async () => {
    nats = await startNatsServer();
    const home = await freshHome();
    const held = await holdPort();
    openSettingsStore(home).update({
      receiverPort: held,
      recordingsFolder: join(home, 'rec'),
      studio: {
        mode: 'follow',
        servers: [nats.url],
        name: 'serve-member',
        store: 'nats',
        retentionDays: 7,
        replicas: null,
      },
    });
    const child = spawn(process.execPath, [TALLY_BIN, 'serve', '--sandbox', '--port', '0', '--json', '--no-open'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TALLY_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const lines = createInterface({ input: child.stdout });
    await new Promise<void>((resolve) => lines.on('line', (l) => l.includes('"ready"') && resolve()));

    // Connecting to the team server takes a moment after ready: the health turns ok once the member is connected.
    await expect.poll(async () => (await runningHealth(home)).code, eventually).toBe(0);
    const seen = await runningHealth(home);
    expect(seen.face).toBe('serve');
    expect(seen.health).toMatchObject({ state: 'ok', member: true, summary: MEMBER_OK });
    expect(seen.health?.components.map((c) => c.id)).not.toContain('receiver');
    expectMemberStatus((await status(home, false)).out, 'tally serve');
    // Nor does its output speak of the port as a receiver's would.
    expect(stderr).not.toMatch(/in use|webhooks cannot reach/i);

    // The team server goes away: a warning in the member's own words, never the receiver's.
    await nats.stop(true);
    await expect.poll(async () => (await runningHealth(home)).code, eventually).toBe(1);
    const down = (await runningHealth(home)).health;
    const studio = down?.components.find((c) => c.id === 'studio');
    expect(studio?.action).toMatch(/mirrored once the team server answers/);
    expect(JSON.stringify(down)).not.toContain(RECEIVER_ACTION);
  });

  it('the same through tally follow: health ok, tally status exit 0 as a member, its own words when the server goes', async () => {
    nats = await startNatsServer();
    const home = await freshHome();
    await holdPort();
    const proc: ListenProcess = startTally('follow', ['--team', nats.url, '--folder', join(home, 'm')], {
      TALLY_HOME: home,
      TALLY_TEAM_RETRY_MS: '100',
    });
    cleanups.push(async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGINT');
      await proc.exited;
    });
    const isHealth = (state: string) => (e: ListenEvent) => e.type === 'health' && e.state === state;
    await proc.waitFor(isHealth('ok'), 'health ok');
    const seen = await runningHealth(home);
    expect(seen).toMatchObject({ code: 0, face: 'follow', health: { state: 'ok', member: true, summary: MEMBER_OK } });
    expect(proc.events.find(isHealth('ok'))).toMatchObject({ member: true, summary: MEMBER_OK });
    expect(proc.events.find(isHealth('ok'))).not.toHaveProperty('receiver');
    expectMemberStatus((await status(home, false)).out, 'tally follow');

    const seenBefore = proc.events.length;
    await nats.stop(true);
    const later = (e: ListenEvent) => proc.events.indexOf(e) >= seenBefore && isHealth('warning')(e);
    const warned = (await proc.waitFor(later, 'health warning')) as unknown as HealthView;
    const studio = warned.components.find((c) => c.id === 'studio');
    expect(studio?.action).toMatch(/mirrored once the team server answers/);
    expect(studio?.reason).not.toMatch(/^Studio: (unreachable|connecting)$/);
    expect(JSON.stringify(proc.events)).not.toContain(RECEIVER_ACTION);
  });
});
