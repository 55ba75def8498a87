import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Channel } from '../model.js';
import { findGaps, readHeartbeat, writeHeartbeat } from './gap-report.js';

const HOUR = 60 * 60 * 1000;
const NOW = new Date('2026-03-01T12:00:00Z');

function channel(id: string, endedMsAgo: number | null): Channel {
  return {
    id,
    serviceId: null,
    state: endedMsAgo === null ? 'live' : 'ended',
    createdAt: new Date(NOW.getTime() - 8 * HOUR),
    endedAt: endedMsAgo === null ? null : new Date(NOW.getTime() - endedMsAgo),
    watchers: null,
    cumulativeSessions: null,
  };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-gaps-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('heartbeat', () => {
  it('round-trips, and reads as "never ran" when missing or unreadable', async () => {
    expect(await readHeartbeat(dir)).toBeNull();
    await writeHeartbeat(join(dir, 'new'), NOW);
    expect(await readHeartbeat(join(dir, 'new'))).toEqual(NOW);
    await writeFile(join(dir, 'last-running.json'), '{"at":"not a date"}');
    expect(await readHeartbeat(dir)).toBeNull();
    await writeFile(join(dir, 'last-running.json'), 'garbage');
    expect(await readHeartbeat(dir)).toBeNull();
  });
  it('keeps one heartbeat per service: the first run for a service has none, whatever ran before', async () => {
    const earlier = new Date(NOW.getTime() - 3_600_000);
    await writeHeartbeat(dir, earlier, 'service-a');
    expect(await readHeartbeat(dir, 'service-a')).toEqual(earlier);
    // Tally ran here before, but never for service-b: its first gap report must not search its whole history.
    expect(await readHeartbeat(dir, 'service-b')).toBeNull();
    await writeHeartbeat(dir, NOW, 'service-b');
    expect(await readHeartbeat(dir, 'service-a')).toEqual(earlier);
    expect(await readHeartbeat(dir, 'service-b')).toEqual(NOW);
    // A name that is an Object.prototype member is a service like any other.
    expect(await readHeartbeat(dir, 'constructor')).toBeNull();
  });

  it('reads a heartbeat file from before services were kept apart as belonging to any service', async () => {
    await writeFile(join(dir, 'last-running.json'), JSON.stringify({ at: NOW.toISOString() }));
    expect(await readHeartbeat(dir, 'service-a')).toEqual(NOW);
  });
});

describe('findGaps', () => {
  it('lists ended channels without a recording, newest first, searching only since the heartbeat', async () => {
    const windows: Array<{ since: Date; until: Date }> = [];
    const report = await findGaps({
      since: new Date(NOW.getTime() - 2 * HOUR),
      now: NOW,
      search: async (q) => {
        windows.push(q);
        return {
          channels: [
            channel('older', 90 * 60_000),
            channel('known', 60 * 60_000),
            channel('newer', 30 * 60_000),
            channel('still-live', null),
            // Ended 20 s ago: its webhook may still be on its way.
            channel('just-ended', 20_000),
            // Ended before the heartbeat: Tally was running then.
            channel('before', 3 * HOUR),
          ],
        };
      },
      knownChannelIds: new Set(['known']),
    });
    expect(windows).toEqual([{ since: new Date(NOW.getTime() - 2 * HOUR), until: NOW }]);
    expect(report).toEqual({
      since: new Date(NOW.getTime() - 2 * HOUR),
      checkedAt: NOW,
      missing: [
        { channelId: 'newer', endedAt: new Date(NOW.getTime() - 30 * 60_000) },
        { channelId: 'older', endedAt: new Date(NOW.getTime() - 90 * 60_000) },
      ],
      error: null,
    });
  });

  it('never looks back past the 6-hour retention, and checks nothing on a first run', async () => {
    const windows: Array<{ since: Date; until: Date }> = [];
    const search = async (q: { since: Date; until: Date }) => {
      windows.push(q);
      return { channels: [] };
    };
    await findGaps({ since: new Date(NOW.getTime() - 48 * HOUR), now: NOW, search, knownChannelIds: new Set() });
    expect(windows[0]?.since).toEqual(new Date(NOW.getTime() - 6 * HOUR));
    const first = await findGaps({ since: null, now: NOW, search, knownChannelIds: new Set() });
    expect(first).toEqual({ since: null, checkedAt: NOW, missing: [], error: null });
    expect(windows).toHaveLength(1);
  });

  it('reports a failed search as the error of the report instead of throwing', async () => {
    const report = await findGaps({
      since: new Date(NOW.getTime() - HOUR),
      now: NOW,
      search: async () => {
        throw new Error('Could not reach the service.');
      },
      knownChannelIds: new Set(),
    });
    expect(report).toMatchObject({ missing: [], error: 'Could not reach the service.' });
  });
});
