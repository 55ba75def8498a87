/**
 * Issue 20 case 1: a private or loopback DNS answer is a passing state of the network (a captive portal, a
 * split-horizon VPN), not a verdict on the recording. The name is resolved again at the next attempt, and a bad
 * answer for one range of a segmented download retries that range. A real HTTP server on 127.0.0.1 stands behind
 * `rec.localhost` (the policy allows loopback answers for a `.localhost` origin, nothing else internal); the
 * injected resolver plays the network that first answers a private address.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import type { LookupAddress } from 'node:dns';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TestServer } from '../../../tests/support/download/file-server.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import type { FailedEvent, SavedEvent } from './download-manager.js';
import { DownloadManager } from './download-manager.js';
import { MemoryJobStore } from '../../../tests/support/pipeline/memory-job-store.js';

const MiB = 1024 * 1024;
let server: TestServer;
let port: string;
let dir: string;
const managers: DownloadManager[] = [];

beforeAll(async () => {
  server = await TestServer.start();
  port = new URL(server.origin).port;
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  server.setFaults(null);
  for (const m of managers.splice(0)) await m.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A resolver answering from `answers` in turn (the last one for ever after); counts its calls. */
function network(answers: string[]) {
  const calls: string[] = [];
  const resolver = (
    host: string,
    _opts: unknown,
    callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ): void => {
    const address = answers[Math.min(calls.length, answers.length - 1)] as string;
    calls.push(address);
    process.nextTick(callback, null, [{ address, family: 4 }]);
  };
  return { calls, policy: new DownloadOriginPolicy([`http://rec.localhost:${port}`], { resolver }) };
}

async function start(
  policy: DownloadOriginPolicy,
  extra: Partial<ConstructorParameters<typeof DownloadManager>[0]> = {},
) {
  dir = await mkdtemp(join(tmpdir(), 'tally-dns-'));
  const store = new MemoryJobStore();
  const m = new DownloadManager({
    store,
    folder: dir,
    policy,
    retryBaseMs: 5,
    retryMaxMs: 20,
    random: () => 0.5,
    ...extra,
  });
  managers.push(m);
  m.start();
  return { store, m };
}

/** The saved event, or a rejection as soon as the job fails for good (what a private answer did before). */
function outcome(m: DownloadManager): Promise<SavedEvent> {
  return new Promise((resolve, reject) => {
    m.once('saved', resolve);
    m.on('failed', (e) => {
      if (!e.willRetry) reject(new Error(`failed for good: ${e.job.error}`));
    });
  });
}

describe('DNS answers are transient', () => {
  it('retries a recording whose name first resolved to a private address, then saves it', async () => {
    const file = server.addFile('/svc/dns-1/ch.mp4', { size: 200_000 });
    const { calls, policy } = network(['10.9.8.7', '10.9.8.7', '127.0.0.1']);
    const { store, m } = await start(policy);
    const failures: FailedEvent[] = [];
    m.on('failed', (e) => failures.push(e));
    const saved = outcome(m);
    await store.add({
      channelId: 'ch',
      url: `http://rec.localhost:${port}/svc/dns-1/ch.mp4`,
      announcedBytes: 200_000,
      duration: null,
      thumbnail: null,
      shape: 'json',
    });
    const event = await saved;
    expect((await stat(event.path)).size).toBe(file.size);
    expect(failures.length).toBe(2);
    for (const f of failures) {
      expect(f.willRetry).toBe(true);
      expect(f.job.state).toBe('pending');
      expect(f.job.error).toMatch(/rec\.localhost resolved to 10\.9\.8\.7, a private address/);
    }
    expect(calls.length).toBeGreaterThanOrEqual(3);
  });

  it('retries the one range whose connection got a private answer, without failing the download', async () => {
    const file = server.addFile('/svc/dns-2/ch.mp4', { size: 8 * MiB });
    // The probe connection resolves publicly; the second connection (a later range) gets the private answer.
    const { calls, policy } = network(['127.0.0.1', '10.9.8.7', '127.0.0.1']);
    // Throttled per connection, so the engine's ramp opens more connections (each one resolving the name).
    server.setFaults({ rateBytesPerSec: 4 * MiB });
    const { store, m } = await start(policy, {
      segments: 4,
      segmentThresholdBytes: MiB,
      ramp: { rampWindowMs: 100, minSplitBytes: 256 * 1024 },
    });
    const failures: FailedEvent[] = [];
    m.on('failed', (e) => failures.push(e));
    const saved = outcome(m);
    await store.add({
      channelId: 'ch',
      url: `http://rec.localhost:${port}/svc/dns-2/ch.mp4`,
      announcedBytes: 8 * MiB,
      duration: null,
      thumbnail: null,
      shape: 'json',
    });
    const event = await saved;
    expect((await stat(event.path)).size).toBe(file.size);
    expect(failures).toEqual([]);
    expect(calls).toContain('10.9.8.7');
  });
});
