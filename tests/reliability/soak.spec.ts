/**
 * Soak: a producer's day against `tally listen` (the built CLI as a child process) and the sandbox over real
 * HTTP. Broadcasts start and end with several live at once, recordings of mixed sizes (a few big enough for
 * parallel ranges in the long mode), the three webhook shapes in rotation, repeated webhooks, and download
 * faults injected at random moments: resets mid-body, 503 and HTML 5xx pages, empty and HTML 200 answers,
 * slow and throttled responses, a wrong Content-Length, ignored ranges. About 5 % of the recordings are
 * deleted by the service before Tally can fetch them.
 *
 * At the end: every recording still on the service is in the folder, byte-identical (sha256 against the
 * sandbox), once, with no part file left; every deleted one was received and is reported `failed` with a
 * clear reason and a scheduled retry, never saved and never silent; the child's memory and open file
 * handles have not grown.
 *
 * Why deleted recordings end as `failed`/retrying and not `expired` here: the downloader gives up only at the
 * deadline (webhook + 6 h of real time) because the service may still serve the file until then, and a
 * child process cannot be given a faster clock. The sandbox's time factor compresses the service's own
 * delays (processing before the webhook); the schedule itself is driven by events, not by time. The
 * transition to `expired` at the deadline is covered in process, with an injected clock, by the download
 * manager's own specs.
 *
 * Short mode runs in CI. Long mode: `TALLY_SOAK=long npx vitest run tests/reliability/soak.spec.ts`
 * (see docs/proof.md). TALLY_SOAK_SEED reproduces a run.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startSandbox,
  type FaultSpec,
  type RecordingInfo,
  type Sandbox,
  type WebhookShape,
} from '../../electron/core/sandbox/index.js';
import { Rng } from '../../electron/core/sandbox/rng.js';
import { ensureBuiltCli } from '../support/built-cli.js';
import { startListen, type ListenEvent, type ListenProcess } from '../support/listen-process.js';
import { listenEnv, sampleResources, sha256File, waitUntil, type ResourceSample } from './support/helpers.js';

const LONG = process.env.TALLY_SOAK === 'long';
const SEED = Number(process.env.TALLY_SOAK_SEED ?? Date.now() % 1_000_000);
const PLAN = LONG
  ? { broadcasts: 600, maxLive: 12, big: 8, bigBytes: [34, 64] as const, timeFactor: 1440, deadlineMs: 30 * 60_000 }
  : { broadcasts: 120, maxLive: 6, big: 2, bigBytes: [6, 12] as const, timeFactor: 2880, deadlineMs: 75_000 };
const MB = 1024 * 1024;
const SHAPES: WebhookShape[] = ['json', 'get', 'spec'];

/** Faults a real download path meets; each applies to the next `times` download requests only. */
function randomFault(rng: Rng): FaultSpec {
  const times = rng.int(1, 2);
  const all: FaultSpec[] = [
    { resetAfterBytes: rng.int(1, 400_000), times },
    { status: 503, times },
    { status: 500, html: true, times },
    { status: 502, html: true, times },
    { html: true, times: 1 },
    { emptyBody: true, times: 1 },
    { delayMs: rng.int(200, 2500), times },
    { rateBytesPerSec: rng.int(200_000, 2_000_000), times },
    { wrongContentLength: true, times },
    { noRange: true, times },
  ];
  return all[rng.int(0, all.length - 1)] as FaultSpec;
}

/** Sizes: mostly 10 KB to 3 MB (log-uniform), a few big ones. */
function sizeFor(rng: Rng, index: number, bigIndexes: Set<number>): number {
  if (bigIndexes.has(index)) return rng.int(PLAN.bigBytes[0] * MB, PLAN.bigBytes[1] * MB);
  return Math.round(Math.exp(Math.log(10_000) + rng.next() * (Math.log(3 * MB) - Math.log(10_000))));
}

describe(`soak (${LONG ? 'long' : 'short'} mode, seed ${SEED})`, () => {
  let sb: Sandbox;
  let home: string;
  let folder: string;
  let proc: ListenProcess | null = null;

  beforeAll(async () => {
    console.log(`soak: ${LONG ? 'long' : 'short'} mode, seed ${SEED} (rerun with TALLY_SOAK_SEED=${SEED})`);
    await ensureBuiltCli();
    sb = await startSandbox({
      seed: SEED,
      searchIndexDelayMs: 0,
      timeFactor: PLAN.timeFactor,
      // One simulated minute of processing between the end of a broadcast and its webhook.
      webhookDelayMs: 60_000,
      // Retention long in real time too: the only deletions are the planned ones.
      retentionMs: 6 * 60 * 60 * 1000 * PLAN.timeFactor,
      webhookSpecEncoding: SEED % 2 === 0 ? 'json' : 'form',
    });
    home = await mkdtemp(join(tmpdir(), 'tally-soak-home-'));
    folder = await mkdtemp(join(tmpdir(), 'tally-soak-out-'));
  }, 240_000);

  afterAll(async () => {
    if (proc && proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
    await sb?.close();
    if (home) await rm(home, { recursive: true, force: true });
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it(
    'saves every recording byte-identical once, reports every deleted one, and does not grow',
    async () => {
      const rng = new Rng(SEED);
      const listen = startListen(
        ['--folder', folder, '--port', '0', '--tunnel', 'none', '--concurrency', '3'],
        listenEnv(sb, home),
      );
      proc = listen;
      const ready = await listen.waitFor((e) => e.type === 'ready', 'ready');
      sb.control.setWebhookUrl(String(ready.localUrl));
      const pid = listen.child.pid as number;

      const bigIndexes = new Set<number>();
      while (bigIndexes.size < PLAN.big) bigIndexes.add(rng.int(0, PLAN.broadcasts - 1));
      const kept = new Map<string, RecordingInfo>();
      const deleted = new Set<string>();
      const live: string[] = [];
      const pending: Promise<void>[] = [];
      let faults = 0;
      let resent = 0;
      let started = 0;
      let steady: ResourceSample | null = null;
      const savedCount = () => listen.events.filter((e) => e.type === 'saved').length;

      const end = async (id: string): Promise<void> => {
        if (rng.next() < 0.05 || (deleted.size === 0 && kept.size >= 20)) {
          // Deleted by the service before Tally could fetch it: published, expired, only then announced.
          const rec = await sb.control.endBroadcast(id, { sendWebhook: false });
          if (!rec) throw new Error(`no recording for ${id}`);
          sb.control.expireRecording(id);
          deleted.add(id);
          const delivery = await sb.control.resendWebhook(id);
          expect(delivery.status, `webhook for ${id}`).toBe(200);
          return;
        }
        const rec = await sb.control.endBroadcast(id);
        if (!rec) throw new Error(`no recording for ${id}`);
        kept.set(id, rec);
        if (rng.next() < 0.06) {
          // The same webhook again, in another shape: a duplicate or a twin, never a second file.
          resent++;
          const delivery = await sb.control.resendWebhook(id, SHAPES[rng.int(0, 2)]);
          expect(delivery.status).toBe(200);
        }
      };

      // The day: start broadcasts while fewer than maxLive are live, end a random live one otherwise.
      while (started < PLAN.broadcasts || live.length > 0) {
        if (steady === null && savedCount() >= 10) steady = await sampleResources(pid);
        const startOne =
          started < PLAN.broadcasts && (live.length === 0 || (live.length < PLAN.maxLive && rng.next() < 0.6));
        if (startOne) {
          const id = rng.next() < 0.1 ? `채널-${started}-${rng.chars(4)}` : `${Date.now()}_${rng.chars(5)}-${started}`;
          sb.control.startBroadcast({ id, record: true, recordingBytes: sizeFor(rng, started, bigIndexes) });
          live.push(id);
          started++;
          continue;
        }
        const [id] = live.splice(rng.int(0, live.length - 1), 1) as [string];
        sb.control.setWebhookShape(SHAPES[rng.int(0, 2)] as WebhookShape);
        if (rng.next() < 0.15) {
          sb.control.setFaults('download', randomFault(rng));
          faults++;
        }
        // Sometimes several broadcasts end together (a burst of webhooks); otherwise one at a time.
        const task = end(id);
        if (rng.next() < 0.3) pending.push(task);
        else await task;
      }
      await Promise.all(pending);
      console.log(
        `soak: ${PLAN.broadcasts} broadcasts, ${kept.size} kept, ${deleted.size} deleted by the service, ${faults} fault injections, ${resent} repeated webhooks`,
      );
      expect(deleted.size + kept.size).toBe(PLAN.broadcasts);

      // Wait: every kept recording saved, every deleted one received and reported failed (with a retry).
      const savedIds = () => new Set(listen.events.filter((e) => e.type === 'saved').map((e) => String(e.channelId)));
      const goneReported = () =>
        new Set(
          listen.events
            .filter(
              (e) =>
                e.type === 'failed' &&
                deleted.has(String(e.channelId)) &&
                /answered (403|404) |does not have this recording \((403|404) /.test(String(e.error)),
            )
            .map((e) => String(e.channelId)),
        );
      await waitUntil(
        listen,
        () => {
          const saved = savedIds();
          const failed = goneReported();
          return [...kept.keys()].every((id) => saved.has(id)) && [...deleted].every((id) => failed.has(id));
        },
        () => {
          const saved = savedIds();
          const missing = [...kept.keys()].filter((id) => !saved.has(id));
          const lastFailures = listen.events.filter((e) => e.type === 'failed').slice(-5);
          return `not saved: ${missing.slice(0, 10).join(', ')} (${missing.length}); last failures: ${JSON.stringify(lastFailures)}`;
        },
        PLAN.deadlineMs,
      );
      const endSample = await sampleResources(pid);

      // Byte-identical, once each, at the path Tally reported.
      const savedEvents = new Map<string, ListenEvent>();
      for (const e of listen.events.filter((x) => x.type === 'saved')) {
        expect(savedEvents.has(String(e.channelId)), `saved twice: ${String(e.channelId)}`).toBe(false);
        savedEvents.set(String(e.channelId), e);
      }
      for (const [id, rec] of kept) {
        const e = savedEvents.get(id) as ListenEvent;
        expect(e.bytes, id).toBe(rec.size);
        expect(await sha256File(String(e.path)), id).toBe(await rec.sha256());
      }
      const files = (await readdir(folder)).sort();
      const expected = [...savedEvents.values()].map((e) => String(e.path).slice(folder.length + 1)).sort();
      // Exactly the saved files: no part, no sidecar, no duplicate "(2)" copy, nothing for deleted recordings.
      expect(files).toEqual(expected);

      // Deleted recordings: received, never saved, reported failed with a reason and a scheduled retry.
      for (const id of deleted) {
        expect(
          listen.events.some((e) => e.type === 'received' && e.channelId === id),
          id,
        ).toBe(true);
        expect(savedEvents.has(id), id).toBe(false);
        const failed = listen.events.filter((e) => e.type === 'failed' && e.channelId === id);
        for (const f of failed) {
          expect(f.willRetry, id).toBe(true);
          expect(typeof f.nextAttemptAt).toBe('string');
        }
        // An injected fault may be what an attempt met; the service's "gone" answer must be among them.
        expect(failed.map((f) => String(f.error)).join('\n'), id).toMatch(
          /answered (403|404) \((NoSuchKey|AccessDenied)\)|does not have this recording \((403|404) (NoSuchKey|AccessDenied)\)/,
        );
      }
      // A repeat is a duplicate, or (the current form after the legacy one) a twin job saved by the same file.
      const duplicates = listen.events.filter(
        (e) => e.type === 'duplicate' || (e.type === 'received' && typeof e.sameRecordingAs === 'string'),
      ).length;
      expect(duplicates).toBeGreaterThanOrEqual(resent);
      expect(listen.events.filter((e) => e.type === 'rejected')).toEqual([]);

      // Resources: sampled after the first 10 saves (warm: JIT, buffers, journal open) and at the end.
      // Tolerances: +10 descriptors covers downloads of deleted recordings retrying at that moment (one
      // socket and part handle each); +60 MB covers V8 heap growth with a few hundred jobs in memory and
      // garbage not yet collected. A leak of one socket, timer or buffer per download exceeds both.
      const start = steady ?? endSample;
      console.log(
        `soak: RSS ${start.rssMb.toFixed(0)} → ${endSample.rssMb.toFixed(0)} MB, fds ${start.fds} → ${endSample.fds}`,
      );
      expect(endSample.fds).toBeLessThanOrEqual(start.fds + 10);
      expect(endSample.rssMb).toBeLessThanOrEqual(start.rssMb + 60);

      listen.child.kill('SIGTERM');
      const { code } = await listen.exited;
      expect(code, listen.stderr()).toBe(0);
      expect(listen.events.at(-1)?.type).toBe('stopped');
      proc = null;
    },
    LONG ? 60 * 60_000 : 180_000,
  );
});
