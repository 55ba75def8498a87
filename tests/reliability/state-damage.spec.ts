/**
 * Damaged or vanished state, on real files (issue 20 cases 6-9): the state folder deleted while running is made
 * again from memory before the next webhook is acknowledged (never an acknowledgement into an unlinked journal),
 * with its lock and tokens; a damaged token file comes back from its copy; damaged journal lines are counted in one
 * line and the file kept aside; a journal that is a folder is one clear error; a lock whose PID now belongs to
 * another process is stale.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TestServer } from '../support/download/file-server.js';
import { ConfigError } from '../../electron/core/errors.js';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';
import { RecordingPipeline } from '../../electron/core/pipeline/pipeline.js';
import { Inbox, JOURNAL_FILE } from '../../electron/core/recordings/inbox.js';
import { LOCK_FILE, acquireStateLock } from '../../electron/core/recordings/state-lock.js';
import { TokenStore, tokenCopyName, tokenFileName } from '../../electron/core/webhook/token.js';

const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'tally-state-'));
  dirs.push(d);
  return d;
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

describe('the state folder vanishing while running', () => {
  it('makes it again from memory before acknowledging the next webhook, with its lock and token', async () => {
    const root = await tempDir();
    const server = await TestServer.start();
    cleanups.push(() => server.close());
    const a = server.addFile('/svc/a/ch-a.mp4', { size: 1000 });
    const stateDir = join(root, 'state');
    const opts = {
      stateDir,
      folder: join(root, 'recordings'),
      policy: new DownloadOriginPolicy([server.origin]),
    };
    const pipeline = await RecordingPipeline.open(opts);
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await pipeline.stop();
    });
    await pipeline.setDownloadsPaused(true);
    await pipeline.start();
    const hookPath = pipeline.receiver.hookPath;
    const post = (id: string, url: string) =>
      fetch(pipeline.receiver.localUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id, url }),
      });
    expect((await post('ch-a', server.url('/svc/a/ch-a.mp4'))).status).toBe(200);
    void a;

    const restored = once(pipeline, 'state-restored');
    await rm(stateDir, { recursive: true, force: true });
    expect((await post('ch-b', server.url('/svc/b/ch-b.mp4'))).status).toBe(200);
    const [info] = (await restored) as [{ jobs: number }];
    expect(info.jobs).toBe(1);
    expect(await exists(join(stateDir, JOURNAL_FILE))).toBe(true);
    expect(await exists(join(stateDir, LOCK_FILE))).toBe(true);
    expect(await exists(join(stateDir, tokenFileName('hooks')))).toBe(true);
    // The lock names this process again, so a second receiver (another process) cannot start on the state.
    expect(JSON.parse(await readFile(join(stateDir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });

    await pipeline.stop();
    stopped = true;
    const again = await RecordingPipeline.open(opts);
    cleanups.push(() => again.stop());
    expect(
      again.inbox
        .list()
        .map((j) => j.channelId)
        .sort(),
    ).toEqual(['ch-a', 'ch-b']);
    await again.setDownloadsPaused(true);
    await again.start();
    expect(again.receiver.hookPath).toBe(hookPath);
  });
});

describe('the state folder vanishing while no webhook comes', () => {
  it('is made again at the next heartbeat, lock included, so no second receiver can start on it', async () => {
    const root = await tempDir();
    const stateDir = join(root, 'state');
    const pipeline = await RecordingPipeline.open({
      stateDir,
      folder: join(root, 'recordings'),
      policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
      heartbeatIntervalMs: 50,
    });
    cleanups.push(() => pipeline.stop());
    await pipeline.setDownloadsPaused(true);
    await pipeline.start();
    const restored = once(pipeline, 'state-restored');
    await rm(stateDir, { recursive: true, force: true });
    await restored;
    expect(JSON.parse(await readFile(join(stateDir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    expect(await exists(join(stateDir, JOURNAL_FILE))).toBe(true);
    expect(await exists(join(stateDir, tokenCopyName('hooks')))).toBe(true);
  });
});

describe('a damaged token file', () => {
  it('comes back from the copy kept beside it: the webhook URL does not change', async () => {
    const dir = await tempDir();
    const first = await (await TokenStore.open(dir)).get('hooks');
    await writeFile(join(dir, tokenFileName('hooks')), 'garbage\u0000');
    const store = await TokenStore.open(dir);
    const replaced: string[] = [];
    store.on('replaced', (_name, why) => replaced.push(why));
    expect(await store.get('hooks')).toBe(first);
    expect(replaced).toEqual([]);
    expect((await readFile(join(dir, tokenFileName('hooks')), 'utf8')).trim()).toBe(first);
  });

  it('says so when the file and its copy are both damaged (the registered URL is dead)', async () => {
    const dir = await tempDir();
    const first = await (await TokenStore.open(dir)).get('hooks');
    await writeFile(join(dir, tokenFileName('hooks')), 'x');
    await writeFile(join(dir, tokenCopyName('hooks')), 'y');
    const store = await TokenStore.open(dir);
    const replaced = once(store, 'replaced');
    const token = await store.get('hooks');
    expect(token).not.toBe(first);
    const [name, why] = (await replaced) as [string, string];
    expect(name).toBe('hooks');
    expect(why).toBe('webhook-token was damaged and its copy damaged');
  });
});

describe('a damaged journal', () => {
  it('counts the skipped lines in one line and keeps the damaged file aside', async () => {
    const dir = await tempDir();
    const inbox = await Inbox.open(dir);
    await inbox.add({
      channelId: 'kept',
      url: 'https://s3.amazonaws.com/svc/r/kept.mp4',
      announcedBytes: null,
      duration: null,
      thumbnail: null,
      shape: 'json',
    });
    await inbox.close();
    const path = join(dir, JOURNAL_FILE);
    const good = await readFile(path, 'utf8');
    await writeFile(path, `{"v":1,"job":{"broken\n${good}not json at all\n`);
    const lines: string[] = [];
    const log = { info: () => undefined, warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
    const again = await Inbox.open(dir, { log } as never);
    cleanups.push(() => again.close());
    expect(again.list().map((j) => j.channelId)).toEqual(['kept']);
    expect(again.replay.skippedLines).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^journal: 2 damaged lines of inbox\.jsonl skipped \(1 recording read from 1 good lines\); the file as it was is kept as /,
    );
    const copy = again.replay.damagedCopy as string;
    expect(await readFile(copy, 'utf8')).toBe(`{"v":1,"job":{"broken\n${good}not json at all\n`);
    expect((await readdir(dir)).some((f) => f.startsWith(`${JOURNAL_FILE}.damaged-`))).toBe(true);
  });

  it('an all-garbage journal without line breaks is kept aside before it is cut, and said so', async () => {
    const dir = await tempDir();
    const garbage = Buffer.alloc(200 * 1024, 0xfe);
    await writeFile(join(dir, JOURNAL_FILE), garbage);
    const lines: string[] = [];
    const log = { info: () => undefined, warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
    const again = await Inbox.open(dir, { log } as never);
    cleanups.push(() => again.close());
    expect(again.list()).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^journal: a damaged end of inbox\.jsonl without a line break cut off; the file as it was is kept as /,
    );
    expect(await readFile(again.replay.damagedCopy as string)).toEqual(garbage);
  });

  it('a journal that is a folder is one clear error naming it', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, JOURNAL_FILE));
    const error = await Inbox.open(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/inbox\.jsonl is a folder, not a file\. Move it away/);
  });
});

describe('the state lock', () => {
  it('takes over a lock whose PID now belongs to another process (started at another time)', async () => {
    const dir = await tempDir();
    // The parent of this test process is alive, but it is not the process that wrote this lock.
    await writeFile(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid: process.ppid, start: 'another-boot:12345', label: 'Tally' }),
    );
    const lock = await acquireStateLock(dir);
    cleanups.push(() => lock.release());
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
  });
});
