/**
 * A real member (`tally follow` from dist/, a child process) against a real nats-server, killed with SIGKILL at
 * the exact instant between placing a verified recording under its final name and removing the part's resume
 * record: a preload (tests/support/kill-at-final-name.ts) kills the process as soon as the link (or, where the
 * file system has no hard links, the rename) of the finished `.part` returns. The member is then started again,
 * with the object still in the team store or deleted from it meanwhile (expired), and once more after that:
 * the final file is never shorter than the recording, never rewritten, and no `.part` / `.part.resume` stays.
 * The first transfer is paced (`--max-rate`) so the part's resume record holds checkpoints short of the end,
 * as a long recording's does: resuming from one of those over the finished file is what used to shrink it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { Objm } from '@nats-io/obj';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { partPathsFor } from '../electron/core/studio/mirror-file.js';
import { OBJECT_BUCKET } from '../electron/core/studio/team.js';
import { ensureBuiltCli } from './support/built-cli.js';
import { startTally, type ListenEvent, type ListenProcess } from './support/listen-process.js';
import { startNatsServer } from './support/nats-server.js';
import { sha256File } from './support/sandbox-files.js';
import { announceRecording } from './support/studio-announce.js';

const PRELOAD = pathToFileURL(join(import.meta.dirname, 'support', 'kill-at-final-name.ts')).href;
const BYTES = 3 * 1024 * 1024 + 123;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(async () => {
  await ensureBuiltCli();
}, 180_000);

describe('a member killed between the final name and the cleanup (real tally follow, real nats-server)', () => {
  it.each([
    ['linked into place', 'still in the team store', false, false],
    ['linked into place', 'deleted from the team store meanwhile', false, true],
    ['renamed into place (no hard links)', 'still in the team store', true, false],
    ['renamed into place (no hard links)', 'deleted from the team store meanwhile', true, true],
  ])(
    '%s, object %s: never shorter, never rewritten, no leftovers',
    async (_how, _store, noHardLinks, deleted) => {
      const root = await mkdtemp(join(tmpdir(), 'tally-finalise-kill-'));
      cleanups.push(() => rm(root, { recursive: true, force: true }));
      const nats = await startNatsServer();
      cleanups.push(() => nats.close());
      const source = join(root, 'source.mp4');
      await writeFile(source, randomBytes(BYTES));
      const sha256 = await sha256File(source);
      const folder = join(root, 'mirror');
      const env: NodeJS.ProcessEnv = {
        TALLY_HOME: join(root, 'home'),
        TALLY_TEAM_RETRY_MS: '100',
        NODE_OPTIONS: `--import=${PRELOAD}`,
        ...(noHardLinks ? { TALLY_TEST_NO_HARD_LINKS: '1' } : {}),
      };
      const follow = (extra: NodeJS.ProcessEnv = {}, args: string[] = []): ListenProcess => {
        const proc = startTally('follow', ['--team', nats.url, '--folder', folder, '--name', 'member', ...args], {
          ...env,
          ...extra,
        });
        cleanups.push(async () => {
          if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
          await proc.exited;
        });
        return proc;
      };
      const isSaved = (identity: string) => (e: ListenEvent) => e.type === 'saved' && e.identity === identity;

      // 1. The member mirrors the recording and dies the instant it has its final name.
      const first = follow({ TALLY_TEST_KILL_AT_FINAL_NAME: '1' }, ['--max-rate', '1M']);
      await first.waitFor((e) => e.type === 'ready', 'ready');
      const a = await announceRecording(nats.url, source, 'cam-final');
      expect(await first.exited, first.stderr()).toEqual({ code: null, signal: 'SIGKILL' });
      expect(first.events.some(isSaved(a.identity))).toBe(false);

      // What the kill left: the whole file under its name, the resume record (and, when linked, the part) beside it.
      const final = join(folder, 'cam-final.mp4');
      const { part, sidecar } = partPathsFor(folder, a);
      const atKill = await stat(final);
      expect(atKill.size).toBe(BYTES);
      expect(await sha256File(final)).toBe(sha256);
      const left = [final, sidecar, ...(noHardLinks ? [] : [part])].map((f) => f.slice(folder.length + 1)).sort();
      expect((await readdir(folder)).sort()).toEqual(left);
      expect(JSON.parse(await readFile(sidecar, 'utf8'))).toMatchObject({ identity: a.identity });

      if (deleted) {
        const nc = await connect({ servers: nats.url.replace('nats://', '') });
        await (await new Objm(nc).open(OBJECT_BUCKET)).delete(a.identity);
        await nc.close();
      }

      // 2. Started again: it settles the recording from the file it has, without writing to it.
      const second = follow();
      const saved = await second.waitFor(isSaved(a.identity), 'the recording saved');
      expect(saved).toMatchObject({ path: final, bytes: BYTES });
      expect(second.events.filter((e) => e.type === 'progress')).toEqual([]);
      const afterRestart = await stat(final);
      expect(afterRestart.size).toBe(BYTES);
      expect([afterRestart.ino, afterRestart.mtimeMs]).toEqual([atKill.ino, atKill.mtimeMs]);
      expect(await sha256File(final)).toBe(sha256);
      expect(await readdir(folder)).toEqual(['cam-final.mp4']);
      second.child.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);

      // 3. And once more: nothing to do, nothing left beside it.
      const third = follow();
      await third.waitFor((e) => e.type === 'ready', 'ready');
      third.child.kill('SIGTERM');
      await third.exited;
      expect(third.events.filter((e) => e.type === 'saved' || e.type === 'progress' || e.type === 'failed')).toEqual(
        [],
      );
      expect(await readdir(folder)).toEqual(['cam-final.mp4']);
      expect((await stat(final)).size).toBe(BYTES);
      expect(await sha256File(final)).toBe(sha256);
    },
    90_000,
  );
});
