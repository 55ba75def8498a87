/**
 * The health of web client uploads refused for space (issue 32): the disk component is an error that says so,
 * with the numbers, while the disk budget remembers the refusal; it is judged beside downloads waiting for space.
 */
import { describe, expect, it } from 'vitest';
import { judgeHealth, type HealthFacts } from './health.js';
import { listeningReceiver } from '../../../tests/support/receive/health-facts.js';

function facts(diskWait: HealthFacts['diskWait']): HealthFacts {
  return {
    face: 'cli',
    now: Date.parse('2026-11-28T05:00:00.000Z'),
    demo: false,
    member: false,
    receiver: listeningReceiver(),
    tunnel: null,
    registration: { enabled: false, registeredUrl: null, failed: null },
    downloads: { paused: false, jobs: [], lastProgressAt: new Map(), refusedUploads: 0, missing: 0, neededBytes: 0 },
    disks: [{ path: '/rec', freeBytes: 100 * 1024 ** 3, error: null }],
    diskWait,
    keychain: null,
    studio: null,
  };
}

const MiB = 1024 * 1024;
const disk = (f: HealthFacts) => judgeHealth(f).components.find((c) => c.id === 'disk');

describe('uploads refused for space', () => {
  it('turn the disk red with a one-line reason and the action', () => {
    const view = judgeHealth(
      facts({
        folder: '/rec',
        waiting: 0,
        neededBytes: null,
        freeBytes: 3 * MiB,
        uploadsRefused: { neededBytes: 40 * MiB, freeBytes: 3 * MiB },
      }),
    );
    expect(view.state).toBe('error');
    const part = view.components.find((c) => c.id === 'disk');
    expect(part?.state).toBe('error');
    expect(part?.reason).toBe(
      'Web client uploads are refused for space in /rec: the last one needed 40.0 MiB, 3.0 MiB is free above the reserve kept for the journal.',
    );
    expect(part?.action).toMatch(/Free some space/);
  });

  it('say nothing once the budget no longer holds a refusal', () => {
    const part = disk(
      facts({ folder: '/rec', waiting: 0, neededBytes: null, freeBytes: 3 * MiB, uploadsRefused: null }),
    );
    expect(part?.state).toBe('ok');
  });
});
