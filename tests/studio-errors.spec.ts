/**
 * The studio's bad days a team admin or a member can fix, each said in one line that names what to change:
 * a team server started without JetStream (`-js`), refused S3 keys, an S3-compatible bucket looked up at AWS
 * because TALLY_S3_ENDPOINT is not set, and a member folder that is full. Real nats-server, real files; the
 * full folder is a small tmpfs mounted for the test (root only, as on CI and the developers' machines).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordingPipeline } from '../electron/core/pipeline/pipeline.js';
import { StudioFollower } from '../electron/core/studio/follower.js';
import { StudioPublisher } from '../electron/core/studio/publisher.js';
import { S3SetupError, s3Problem } from '../electron/core/studio/store.js';
import { TeamNoJetStreamError } from '../electron/core/studio/team.js';
import type { StudioWarning } from '../electron/core/studio/warnings.js';
import { startNatsServer } from './support/nats-server.js';
import { announceRecording } from './support/studio-announce.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'tally-studio-errors-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  return root;
}

const oneLine = (text: string) => expect(text.split('\n')).toHaveLength(1);

describe('a team server without JetStream', () => {
  it('stops a member with one line naming -js', async () => {
    const root = await tempRoot();
    const nats = await startNatsServer({ jetstream: false });
    cleanups.push(() => nats.close());
    const f = new StudioFollower({
      url: new URL(nats.url),
      credentials: null,
      folder: join(root, 'Studio'),
      name: 'member',
      stateDir: join(root, 'home'),
    });
    cleanups.push(() => f.stop());
    const error = await f.start().then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(TeamNoJetStreamError);
    oneLine(error!.message);
    expect(error!.message).toMatch(/nats:\/\/127\.0\.0\.1:\d+ runs without JetStream: start nats-server with -js/);
  });

  it('tells the receiver once, as a warning its health shows, and keeps trying', async () => {
    const root = await tempRoot();
    const nats = await startNatsServer({ jetstream: false });
    cleanups.push(() => nats.close());
    const pipeline = Object.assign(new EventEmitter(), { inbox: { where: () => [] }, uploadLog: null });
    const p = new StudioPublisher(pipeline as unknown as RecordingPipeline, {
      url: new URL(nats.url),
      credentials: null,
      store: { kind: 'nats' },
      stateDir: root,
    });
    cleanups.push(() => p.stop());
    const warned = new Promise<StudioWarning>((resolve) => p.once('warning', resolve));
    await p.start();
    const w = await warned;
    expect(w.kind).toBe('jetstream');
    oneLine(w.message);
    expect(w.message).toMatch(/runs without JetStream: start nats-server with -js/);
    expect(p.warnings).toEqual([w]);
  });
});

describe('S3 settings a member or receiver must change', () => {
  it('names TALLY_S3_ENDPOINT when a bucket is looked up at AWS and the name does not resolve', () => {
    // What the SDK throws when no endpoint is set and the bucket's AWS host name is unknown (no DNS query here).
    const lookup = Object.assign(new Error('getaddrinfo ENOTFOUND tally-team.s3.us-east-1.amazonaws.com'), {
      code: 'ENOTFOUND',
    });
    const problem = s3Problem(lookup, 'tally-team', null, 'us-east-1') as Error;
    expect(problem).toBeInstanceOf(S3SetupError);
    oneLine(problem.message);
    expect(problem.message).toMatch(/S3 bucket tally-team.*amazonaws\.com cannot be reached.*set TALLY_S3_ENDPOINT/);
    // With an endpoint set, the same failure is the endpoint's, not a missing setting.
    expect(s3Problem(lookup, 'tally-team', 'http://s3.studio.lan:7480', 'us-east-1')).toBe(lookup);
  });

  it('names the keys when the bucket refuses them (HTTP 403 with no body, as a HEAD gets)', () => {
    const refused = Object.assign(new Error('UnknownError'), {
      name: 'UnknownError',
      $metadata: { httpStatusCode: 403 },
    });
    const problem = s3Problem(refused, 'tally-team', 'http://127.0.0.1:1', 'us-east-1') as Error;
    expect(problem).toBeInstanceOf(S3SetupError);
    oneLine(problem.message);
    expect(problem.message).toMatch(/refused the keys \(HTTP 403\).*AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
  });
});

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)('a full member folder (a 2 MiB tmpfs)', () => {
  it('says in one line which folder is full and how much is needed, never a raw ENOSPC; resumes once there is room', async () => {
    const root = await tempRoot();
    const folder = join(root, 'Studio');
    await mkdir(folder);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tally-test', folder]);
    cleanups.push(async () => execFileSync('umount', ['-l', folder]));
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const source = join(root, 'long.mp4');
    await writeFile(source, randomBytes(3 * 1024 * 1024));
    await announceRecording(nats.url, source, 'long-cam');

    const f = new StudioFollower({
      url: new URL(nats.url),
      credentials: null,
      folder,
      name: 'member',
      stateDir: join(root, 'home'),
    });
    cleanups.push(() => f.stop());
    const failures: string[] = [];
    f.on('failed', (e) => failures.push(e.message));
    const warned = new Promise<StudioWarning>((resolve) => f.once('warning', resolve));
    await f.start();
    const w = await warned;
    expect(w.kind).toBe('folderFull');
    oneLine(w.message);
    expect(w.message).toMatch(
      /studio folder .*Studio is full: long-cam needs 3\.0 MiB more and 2\.0 MiB are free.*--folder/,
    );
    expect(failures.join('\n')).not.toMatch(/ENOSPC/);
    expect(f.warnings.map((x) => x.kind)).toEqual(['folderFull']);
    expect((await readdir(folder)).filter((n) => n.endsWith('.mp4'))).toEqual([]);

    // Room again (the folder grows): the next attempt saves it and the warning goes.
    const saved = new Promise<void>((resolve) => f.once('saved', () => resolve()));
    const cleared = new Promise<string>((resolve) => f.once('warningCleared', resolve));
    execFileSync('mount', ['-o', 'remount,size=16m', folder]);
    await saved;
    expect(await cleared).toBe('folderFull');
    expect(f.warnings).toEqual([]);
  });
});
