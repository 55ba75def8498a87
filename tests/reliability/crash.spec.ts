/**
 * Crash safety: rounds of start `tally listen` (the built CLI), fire webhooks from the sandbox, `kill -9` at a
 * moment chosen by a seeded RNG from what the process reports (right after ready, after a webhook was
 * received, in the middle of a burst of webhooks, mid-download, at 100 % just before the rename, right after
 * a save), and start it again on the same state folder and recordings folder.
 *
 * After every kill: every `*.mp4` in the folder has exactly the size and sha256 of its recording (a final
 * name is never given to a truncated or empty file) and no channel has two copies. At the end, after one
 * clean run: every webhook the sandbox saw acknowledged with 2xx has its recording saved, byte-identical.
 *
 * CI runs a few rounds; `TALLY_CRASH_ROUNDS=50 npx vitest run tests/reliability/crash.spec.ts` is the long
 * mode. TALLY_CRASH_SEED reproduces a run (the seed is printed).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startSandbox,
  type RecordingInfo,
  type Sandbox,
  type WebhookShape,
} from '../../electron/core/sandbox/index.js';
import { Rng } from '../../electron/core/sandbox/rng.js';
import { ensureBuiltCli } from '../support/built-cli.js';
import { startListen, type ListenEvent, type ListenProcess } from '../support/listen-process.js';
import { listenEnv, sha256File, waitUntil } from './support/helpers.js';

const SEED = Number(process.env.TALLY_CRASH_SEED ?? Date.now() % 1_000_000);
const ROUNDS = Math.max(1, Number(process.env.TALLY_CRASH_ROUNDS ?? 8));
const KILL_POINTS = [
  'after-ready',
  'after-received',
  'mid-burst',
  'mid-progress',
  'full-progress',
  'after-saved',
] as const;
type KillPoint = (typeof KILL_POINTS)[number];
const SHAPES: WebhookShape[] = ['json', 'get', 'spec'];

function fileSize(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

describe(`crash safety (${ROUNDS} kill -9 rounds, seed ${SEED})`, () => {
  let sb: Sandbox;
  let home: string;
  let folder: string;
  let current: ListenProcess | null = null;

  beforeAll(async () => {
    console.log(
      `crash: ${ROUNDS} rounds, seed ${SEED} (rerun with TALLY_CRASH_SEED=${SEED} TALLY_CRASH_ROUNDS=${ROUNDS})`,
    );
    await ensureBuiltCli();
    sb = await startSandbox({ seed: SEED, searchIndexDelayMs: 0 });
    home = await mkdtemp(join(tmpdir(), 'tally-crash-home-'));
    folder = await mkdtemp(join(tmpdir(), 'tally-crash-out-'));
  }, 240_000);

  afterAll(async () => {
    if (current && current.child.exitCode === null && current.child.signalCode === null) {
      current.child.kill('SIGKILL');
      await current.exited;
    }
    await sb?.close();
    if (home) await rm(home, { recursive: true, force: true });
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it(
    'loses no acknowledged webhook and never leaves a truncated file under a final name',
    async () => {
      const rng = new Rng(SEED);
      const recordings = new Map<string, RecordingInfo>();
      const allEvents: ListenEvent[] = [];
      const kills: string[] = [];

      async function start(): Promise<ListenProcess> {
        const proc = startListen(
          ['--folder', folder, '--port', '0', '--tunnel', 'none', '--concurrency', '3'],
          listenEnv(sb, home),
        );
        current = proc;
        const ready = await proc.waitFor((e) => e.type === 'ready', 'ready');
        sb.control.setWebhookUrl(String(ready.localUrl));
        return proc;
      }

      /** Every final-named file is complete: the size and sha256 of its recording, one copy per channel. */
      async function checkFolder(when: string): Promise<void> {
        for (const name of await readdir(folder)) {
          if (!name.endsWith('.mp4')) {
            // Parts, their sidecars (an atomic write may leave its `.tmp` behind at a kill) and name reservations
            // are all that may sit beside the recordings; none of them has a final name.
            expect(name, `${when}: unexpected file`).toMatch(/\.part(\.json(\.tmp)?)?$|\.mp4\.reserved$/);
            continue;
          }
          const id = name.slice(0, -'.mp4'.length);
          const rec = recordings.get(id);
          expect(rec, `${when}: ${name} is not one recording (a second copy?)`).toBeDefined();
          const size = (await stat(join(folder, name))).size;
          expect(size, `${when}: ${name} size`).toBe(rec!.size);
          expect(await sha256File(join(folder, name)), `${when}: ${name} content`).toBe(await rec!.sha256());
        }
      }

      for (let round = 0; round < ROUNDS; round++) {
        const point: KillPoint = KILL_POINTS[rng.int(0, KILL_POINTS.length - 1)] as KillPoint;
        const proc = await start();
        // Slow downloads when the kill must land inside one.
        sb.control.setFaults(
          'download',
          point === 'mid-progress' || point === 'full-progress' ? { rateBytesPerSec: 1_000_000 } : null,
        );
        const ids = Array.from(
          { length: point === 'mid-burst' ? 6 : rng.int(2, 4) },
          (_, i) => `crash-${round}-${i}-${rng.chars(4)}`,
        );
        const mine = (e: ListenEvent) => ids.includes(String(e.channelId));
        const trigger: Record<KillPoint, (e: ListenEvent) => boolean> = {
          'after-ready': (e) => e.type === 'ready',
          'after-received': (e) => e.type === 'received' && mine(e),
          'mid-burst': (e) =>
            e.type === 'received' && mine(e) && proc.events.filter((x) => x.type === 'received' && mine(x)).length >= 2,
          'mid-progress': (e) =>
            e.type === 'progress' && mine(e) && Number(e.bytes) > 0 && Number(e.bytes) < Number(e.total),
          'full-progress': (e) =>
            e.type === 'progress' && mine(e) && e.total !== null && Number(e.bytes) >= Number(e.total),
          'after-saved': (e) => e.type === 'saved' && mine(e),
        };
        const fired: Promise<unknown>[] = [];
        for (const id of ids) {
          sb.control.setWebhookShape(SHAPES[rng.int(0, 2)] as WebhookShape);
          const slow = point === 'mid-progress' || point === 'full-progress';
          sb.control.startBroadcast({
            id,
            record: true,
            recordingBytes: rng.int(slow ? 1_500_000 : 200_000, 4_000_000),
          });
          const ended = sb.control.endBroadcast(id).then((rec) => rec && recordings.set(id, rec));
          // A burst sends every webhook at once; otherwise one after the other.
          if (point === 'mid-burst') fired.push(ended);
          else await ended;
        }
        // The first matching event (it may already have happened). Should the moment never come (every
        // download finished between two progress lines), the kill lands once this round's files are saved.
        const allSaved = (e: ListenEvent) =>
          e.type === 'saved' && ids.every((id) => proc.events.some((x) => x.type === 'saved' && x.channelId === id));
        const hit = await Promise.race([
          proc.waitFor(trigger[point], `${point} in round ${round}`).then(() => point),
          proc.waitFor(allSaved, `round ${round} saved`).then(() => 'all-saved'),
        ]);
        proc.child.kill('SIGKILL');
        const { signal } = await proc.exited;
        expect(signal).toBe('SIGKILL');
        await Promise.all(fired);
        allEvents.push(...proc.events);
        kills.push(`${round}:${hit === point ? point : `${point}→${hit}`}`);
        await checkFolder(`after kill ${round} (${point})`).catch(async (error: Error) => {
          // What each process said about the channels on disk, to make the failure readable.
          const names = (await readdir(folder)).join(', ');
          const history = allEvents
            .filter((e) => e.channelId !== undefined)
            .map(
              (e) =>
                `${e.type} ${String(e.channelId)} ${e.type === 'saved' ? String(e.path) : e.type === 'failed' ? String(e.error) : ''}`,
            );
          throw new Error(`${error.message}\nfolder: ${names}\nevents:\n${history.join('\n')}`);
        });
      }

      // One clean run: everything acknowledged must end saved, byte-identical.
      sb.control.setFaults('download', null);
      const final = await start();
      const acknowledged = [
        ...new Set(
          sb.control
            .webhookDeliveries()
            .filter((d) => d.status === 200)
            .map((d) => d.channelId),
        ),
      ];
      const unanswered = sb.control.webhookDeliveries().filter((d) => d.status !== 200).length;
      console.log(
        `crash: kills ${kills.join(', ')}; ${acknowledged.length} webhooks acknowledged, ${unanswered} not answered`,
      );
      expect(acknowledged.length).toBeGreaterThan(ROUNDS);
      // Saved means: a process said so, or the file is there complete (a kill can land after the journal
      // recorded the save and before the line reached stdout; the next run then has nothing left to say).
      const isSaved = (id: string) =>
        [...allEvents, ...final.events].some((e) => e.type === 'saved' && e.channelId === id) ||
        fileSize(join(folder, `${id}.mp4`)) === recordings.get(id)?.size;
      await waitUntil(
        final,
        () => acknowledged.every(isSaved),
        () => {
          const missing = acknowledged.filter((id) => !isSaved(id));
          const journal = readFileSync(join(home, 'inbox.jsonl'), 'utf8')
            .split('\n')
            .filter((line) => missing.some((id) => line.includes(id)))
            .slice(-4);
          return `not saved: ${missing.join(', ')}\nfolder: ${readdirSync(folder).join(', ')}\njournal: ${journal.join('\n')}`;
        },
        120_000,
      );
      for (const id of acknowledged) {
        const rec = recordings.get(id) as RecordingInfo;
        expect(await sha256File(join(folder, `${id}.mp4`)), id).toBe(await rec.sha256());
      }
      final.child.kill('SIGTERM');
      expect((await final.exited).code, final.stderr()).toBe(0);
      current = null;
      await checkFolder('at the end');
      // Once everything is saved and Tally stopped cleanly, nothing else is left: no part, sidecar or reservation.
      expect((await readdir(folder)).filter((n) => !n.endsWith('.mp4'))).toEqual([]);
    },
    Math.max(180_000, ROUNDS * 30_000),
  );
});
