/**
 * The health judgement on its own (pure): the worst component decides, nothing is green while a webhook cannot
 * arrive or a recording waits on an error, "Registered" is green only while the public path is, and actions name
 * a Settings field for the popover and a flag for the command line.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { TunnelStatus } from '../tunnels/types.js';
import { DISK_ERROR_BYTES, STALLED_MS, URGENT_MS, judgeHealth, judgeMemberHealth, type HealthFacts } from './health.js';
import { findPortHolder } from './port-holder.js';
import { listeningReceiver } from '../../../tests/support/receive/health-facts.js';
import { tunnelStatus } from '../../../tests/support/tunnels/tunnel-status.js';

const NOW = Date.parse('2026-11-26T09:00:00.000Z');

/** A tunnel reaching the receiver at a URL of the producer's, registered. */
function tunnel(patch: Partial<TunnelStatus> = {}): TunnelStatus {
  return tunnelStatus({
    provider: 'url',
    state: 'reachable',
    publicUrl: 'https://hooks.example.com/hooks/t0ken',
    localUrl: 'http://127.0.0.1:8787/hooks/t0ken',
    messageNotes: null,
    registered: true,
    ...patch,
  });
}

function facts(patch: Partial<HealthFacts> = {}): HealthFacts {
  return {
    face: 'app',
    now: NOW,
    demo: false,
    member: false,
    receiver: listeningReceiver(),
    tunnel: tunnel(),
    registration: { enabled: true, registeredUrl: null, failed: null },
    downloads: {
      paused: false,
      jobs: [],
      lastProgressAt: new Map(),
      refusedUploads: 0,
      missing: 0,
      neededBytes: 0,
    },
    disks: [{ path: '/rec', freeBytes: 100 * 1024 ** 3, error: null }],
    diskWait: null,
    keychain: { available: true, reason: [] },
    studio: null,
    ...patch,
  };
}

const part = (f: HealthFacts, id: string) => judgeHealth(f).components.find((c) => c.id === id);

describe('judgeHealth', () => {
  it('warns of a recording saved shorter than announced, naming it (issue 31)', () => {
    const saved = {
      key: 'k1',
      state: 'saved' as const,
      error: null,
      deadline: new Date(NOW + 3_600_000).toISOString(),
      updatedAt: new Date(NOW - 60_000).toISOString(),
      channelId: 'morning-show',
      checks: ['short' as const],
      bytes: 1_572_864,
      announcedBytes: 3_145_728,
    };
    const base = facts();
    const f = facts({ downloads: { ...base.downloads, jobs: [saved, { ...saved, key: 'k2', checks: ['md5'] }] } });
    const health = judgeHealth(f);
    expect(health.state).toBe('warning');
    expect(part(f, 'downloads')).toMatchObject({
      state: 'warning',
      reason:
        '1 recording was saved shorter than the service announced (last 24 h): morning-show, 1572864 of 3145728 bytes.',
    });
    // Not a problem to retry: the server never sent more.
    expect(health.problems).toBe(0);
  });

  it("says a studio member's all-is-well about its mirror, not about webhooks it never receives", () => {
    const disks = [{ path: '/m', freeBytes: 50 * 2 ** 30, error: null }];
    const ok = "All is well: the studio's recordings are mirrored here.";
    const member = judgeMemberHealth({
      now: 0,
      studio: { state: 'connected', reason: [] },
      failing: [],
      lost: 0,
      disks,
    });
    expect([member.state, member.summary]).toEqual(['ok', ok]);
    const app = judgeHealth(facts({ member: true, studio: { state: 'connected', reason: [] } }));
    expect([app.state, app.summary]).toEqual(['ok', ok]);
  });

  it('is ok only when every part is, and says so in one line', () => {
    const view = judgeHealth(facts());
    expect(view.state).toBe('ok');
    expect(view.summary).toBe('All is well: webhooks reach Tally and recordings are saved.');
    expect(view.components.map((c) => c.id)).toEqual([
      'receiver',
      'publicPath',
      'registration',
      'downloads',
      'disk',
      'keychain',
    ]);
  });

  it('names the port and its holder when it cannot listen, with the action per face', () => {
    const taken = facts({
      receiver: { ...facts().receiver, listening: false, port: null, holder: { pid: 981, program: 'nginx' } },
    });
    const view = judgeHealth(taken);
    expect(view.state).toBe('error');
    expect(view.summary).toBe('Port 8787 is in use by nginx (process 981): webhooks cannot reach Tally.');
    expect(part(taken, 'receiver')?.action).toContain('Settings → How the service reaches Tally → Receiver port');
    expect(part({ ...taken, face: 'cli' }, 'receiver')?.action).toContain('--port <port>');
    expect(part(taken, 'publicPath')?.state).toBe('error');
  });

  it('asks to quit another Tally that holds the port, not to "stop that program"', () => {
    const holder = { pid: 4378, program: 'node', tally: 'tally serve' };
    const taken = facts({ receiver: { ...facts().receiver, listening: false, port: null, holder } });
    expect(judgeHealth(taken).summary).toBe(
      'Port 8787 is in use by another Tally (tally serve, process 4378): webhooks reach that one, not this one.',
    );
    for (const face of ['app', 'cli'] as const) {
      const action = part({ ...taken, face }, 'receiver')?.action ?? '';
      expect(action).toMatch(/^Quit that Tally \(Ctrl\+C where it runs, or Quit in its tray menu\)/);
      expect(action).not.toContain('program');
    }
    expect(part({ ...taken, face: 'cli' }, 'receiver')?.action).toContain('--port <port>');
  });

  it('keeps "registered" green only while the public path works', () => {
    const down = facts({ tunnel: tunnel({ state: 'unreachable', message: 'no answer', messageNotes: null }) });
    expect(part(down, 'publicPath')).toMatchObject({
      state: 'error',
      reason: 'The public URL does not reach this receiver: no answer',
    });
    expect(part(down, 'registration')).toMatchObject({ state: 'error' });
    expect(part(facts(), 'registration')).toMatchObject({ state: 'ok' });
    const unregistered = facts({ tunnel: tunnel({ registered: false }) });
    expect(part(unregistered, 'registration')?.state).toBe('warning');
    expect(part({ ...unregistered, face: 'cli' }, 'registration')?.action).toContain('--register');
  });

  it('turns downloads yellow while one waits on an error, red near its deadline or once one is lost', () => {
    const waiting = {
      key: 'k1',
      channelId: 'night-owl',
      state: 'pending' as const,
      error: 'The download server s3 answered 503.',
      deadline: new Date(NOW + 5 * 3600_000).toISOString(),
      updatedAt: new Date(NOW).toISOString(),
    };
    const failing = facts({ downloads: { ...facts().downloads, jobs: [waiting] } });
    expect(part(failing, 'downloads')?.state).toBe('warning');
    expect(judgeHealth(failing).problems).toBe(1);
    const urgent = { ...waiting, deadline: new Date(NOW + URGENT_MS - 1000).toISOString() };
    expect(part(facts({ downloads: { ...facts().downloads, jobs: [urgent] } }), 'downloads')?.state).toBe('error');
    // Past its deadline only the origin knows (a restart after a clock step may hold a deadline that is far off):
    // failing, never "expires within the hour".
    const past = { ...waiting, deadline: new Date(NOW - 3600_000).toISOString() };
    const late = part(facts({ downloads: { ...facts().downloads, jobs: [past] } }), 'downloads');
    expect(late?.state).toBe('warning');
    expect(late?.reason).not.toMatch(/expire/);
    const gone = { ...waiting, state: 'gone' as const };
    expect(part(facts({ downloads: { ...facts().downloads, jobs: [gone] } }), 'downloads')?.state).toBe('error');
    const stalled = { ...waiting, state: 'downloading' as const, error: null };
    const lastByte = new Map([['k1', NOW - STALLED_MS - 1]]);
    const slow = facts({
      now: NOW,
      downloads: {
        ...facts().downloads,
        jobs: [{ ...stalled, updatedAt: new Date(NOW - STALLED_MS * 2).toISOString() }],
        lastProgressAt: lastByte,
      },
    });
    expect(part(slow, 'downloads')?.state).toBe('warning');
  });

  it('says a disk that is nearly full is an error, with the numbers', () => {
    const full = facts({ disks: [{ path: '/rec', freeBytes: DISK_ERROR_BYTES - 1, error: null }] });
    expect(part(full, 'disk')).toMatchObject({ state: 'error' });
    expect(part(full, 'disk')?.reason).toMatch(/^\/rec is nearly full \(\d+(\.\d+)? MiB free\)/);
    const waiting = facts({
      diskWait: { folder: '/rec', waiting: 2, neededBytes: 20 * 1024 ** 2, freeBytes: 1024 ** 2 },
    });
    expect(part(waiting, 'disk')).toMatchObject({
      state: 'error',
      reason: '2 recordings wait for space in /rec: the first needs 20.0 MiB, 1.0 MiB is free.',
    });
  });

  it('leaves out the public path of a studio member and counts its studio link', () => {
    const member = facts({ member: true, tunnel: null, studio: { state: 'unreachable', reason: [] } });
    const view = judgeHealth(member);
    expect(view.components.map((c) => c.id)).not.toContain('publicPath');
    expect(view.components.find((c) => c.id === 'studio')?.state).toBe('warning');
  });

  it("never judges a studio member's receiver port, and says the member's own words (issue 31)", () => {
    const held = facts({
      member: true,
      tunnel: null,
      receiver: { ...facts().receiver, listening: false, port: null, holder: { pid: 981, program: 'nginx' } },
      studio: { state: 'connected', reason: [] },
    });
    const view = judgeHealth(held);
    expect(view.state).toBe('ok');
    expect(view.member).toBe(true);
    expect(view.components.map((c) => c.id)).not.toContain('receiver');
    expect(JSON.stringify(view)).not.toMatch(/in use|webhooks cannot reach/);
    const down = judgeHealth({ ...held, studio: { state: 'unreachable', reason: [] } });
    const studio = down.components.find((c) => c.id === 'studio');
    expect(studio?.action).toBe(
      'Recordings already mirrored stay here; new ones are mirrored once the team server answers.',
    );
    const member = judgeMemberHealth({
      now: 0,
      studio: { state: 'unreachable', reason: [] },
      failing: [],
      lost: 0,
      disks: [],
    });
    expect(member.components.find((c) => c.id === 'studio')?.action).toBe(studio?.action);
    expect(member.member).toBe(true);
  });
});

describe('findPortHolder', () => {
  it.runIf(process.platform === 'linux')('names the process holding a listening port', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const holder = await findPortHolder(port);
      expect(holder?.pid).toBe(process.pid);
      expect(holder?.program.length).toBeGreaterThan(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers null for a port nobody listens on', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise((resolve) => server.close(resolve));
    expect(await findPortHolder(port)).toBeNull();
  });
});
