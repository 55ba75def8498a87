/**
 * The download manager's waits cost one timer whatever their number (issue 35): 5,000 recordings whose origin
 * answers 503 all wait for their next attempt, and the process holds one timer more than before they came, the one
 * core/retry-schedule.ts arms for the earliest; the manager arms none of its own. Real HTTP on 127.0.0.1.
 */
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import type { FailedEvent } from './download-manager.js';
import { DownloadManager } from './download-manager.js';
import { MemoryJobStore } from '../../../tests/support/pipeline/memory-job-store.js';
import { TestServer } from '../../../tests/support/download/file-server.js';

const JOBS = 5_000;
let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await TestServer.start();
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tally-timers-'));
});
afterAll(async () => {
  await server.close();
  await fsp.rm(dir, { recursive: true, force: true });
});

/** The timers this process holds now (node's own count: vitest's and the server's are among them). */
const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

it(`keeps ${JOBS.toLocaleString('en')} recordings waiting for their retry on one timer`, async () => {
  server.setFaults({ status: 503 });
  const store = new MemoryJobStore();
  const m = new DownloadManager({
    store,
    folder: dir,
    policy: new DownloadOriginPolicy([server.origin]),
    concurrency: 32,
    // Long enough that none is tried again while the test counts.
    retryBaseMs: 600_000,
    retryMaxMs: 600_000,
    random: () => 0.5,
  });
  m.start();
  const before = timers();
  let failed = 0;
  const allWaiting = new Promise<void>((resolve) => {
    m.on('failed', (event: FailedEvent) => {
      if (event.willRetry && ++failed === JOBS) resolve();
    });
  });
  const keys: string[] = [];
  for (let i = 0; i < JOBS; i += 1) {
    const urlPath = `/svc/many/${i}.mp4`;
    server.addFile(urlPath, { size: 1_024 });
    const { job } = await store.add({
      channelId: `many-${i}`,
      url: server.url(urlPath),
      announcedBytes: 1_024,
      duration: null,
      thumbnail: null,
      shape: 'json',
    });
    keys.push(job.key);
  }
  await allWaiting;
  // Every one is scheduled (none lost, none tried again yet).
  expect(keys.filter((key) => m.nextAttemptAt(key) === null)).toEqual([]);
  expect(timers() - before).toBeLessThanOrEqual(1);
  await m.stop();
  server.setFaults(null);
}, 120_000);
