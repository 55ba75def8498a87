/**
 * Two receivers of one studio racing for the same recordings (issue 31): `tally listen --team` twice (real child
 * processes from dist/) against a real nats-server, every webhook delivered to both, the recordings served by a
 * real nginx whose access log counts the bytes it sent. A receiver that finds another's claim waits for its
 * publish and saves the copy from the team store, so the origin sends each recording about once; and a claimant
 * killed with -9 mid-download leaves the recording to the other receiver, which downloads it itself.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuiltCli } from './support/built-cli.js';
import { startTally, type ListenEvent, type ListenProcess } from './support/listen-process.js';
import { startNatsServer } from './support/nats-server.js';
import { startNginxOrigin, type NginxOrigin } from './support/nginx-origin.js';
import { sha256File } from './support/sandbox-files.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(async () => {
  await ensureBuiltCli();
}, 180_000);

interface Receiver {
  proc: ListenProcess;
  folder: string;
  hooks: string;
}

async function setUp(opts: { count: number; bytes: number; limitRate?: string }) {
  const root = await mkdtemp(join(tmpdir(), 'tally-download-race-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const nats = await startNatsServer();
  cleanups.push(() => nats.close());
  const served = join(root, 'origin');
  await mkdir(served);
  const recordings: { id: string; uri: string; sha256: string }[] = [];
  for (let i = 1; i <= opts.count; i += 1) {
    const id = `cam-${i}`;
    await writeFile(join(served, `${id}.mp4`), randomBytes(opts.bytes));
    recordings.push({ id, uri: `/${id}.mp4`, sha256: await sha256File(join(served, `${id}.mp4`)) });
  }
  const nginx: NginxOrigin = await startNginxOrigin({
    root: served,
    workDir: join(root, 'nginx'),
    ...(opts.limitRate ? { limitRate: opts.limitRate } : {}),
  });
  cleanups.push(() => nginx.stop());

  const receiver = async (name: string): Promise<Receiver> => {
    const folder = join(root, name);
    const proc = startTally('listen', ['--folder', folder, '--port', '0', '--tunnel', 'none', '--team', nats.url], {
      TALLY_HOME: join(root, `${name}-home`),
      TALLY_DOWNLOAD_ORIGINS: nginx.origin,
      TALLY_TEAM_RETRY_MS: '100',
      TALLY_TEAM_STALE_CLAIM_MS: '3000',
    });
    cleanups.push(async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
      await proc.exited;
    });
    const ready = await proc.waitFor((e) => e.type === 'ready', `${name} ready`);
    // Connected to the team server before any webhook: a receiver that cannot ask downloads on its own.
    await proc.waitFor((e) => e.type === 'team' && e.state === 'connected', `${name} connected to the team`);
    return { proc, folder, hooks: String(ready.localUrl) };
  };

  const deliver = async (to: Receiver, r: { id: string; uri: string }) => {
    const res = await fetch(to.hooks, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: r.id, url: `${nginx.origin}${r.uri}`, filesize: opts.bytes }),
    });
    expect(res.status, await res.text()).toBe(200);
  };

  /** Every recording in `folder`, byte-identical to the origin's, and nothing else beside them. */
  const holdsAll = async (folder: string, expected: typeof recordings) => {
    const names = (await readdir(folder)).sort();
    expect(names).toEqual(expected.map((r) => `${r.id}.mp4`).sort());
    for (const r of expected) expect(await sha256File(join(folder, `${r.id}.mp4`)), r.id).toBe(r.sha256);
  };

  return { nginx, recordings, receiver, deliver, holdsAll };
}

const savedOf = (channelId: string) => (e: ListenEvent) => e.type === 'saved' && e.channelId === channelId;

describe('two receivers of one studio racing for the same recordings (real tally listen, nats-server, nginx)', () => {
  it('the origin sends each recording once, and both folders hold every recording verified', async () => {
    const bytes = 3 * 1024 * 1024 + 17;
    const { nginx, recordings, receiver, deliver, holdsAll } = await setUp({ count: 8, bytes });
    const a = await receiver('receiver-a');
    const b = await receiver('receiver-b');

    // Every webhook reaches both receivers at once (the service may well call every URL it was given).
    await Promise.all(recordings.flatMap((r) => [deliver(a, r), deliver(b, r)]));
    for (const r of recordings) {
      await a.proc.waitFor(savedOf(r.id), `${r.id} saved by receiver a`);
      await b.proc.waitFor(savedOf(r.id), `${r.id} saved by receiver b`);
    }
    await holdsAll(a.folder, recordings);
    await holdsAll(b.folder, recordings);

    const sent = await nginx.bytesSent();
    const total = [...sent.values()].reduce((sum, n) => sum + n, 0);
    expect(total, JSON.stringify(Object.fromEntries(sent))).toBeLessThanOrEqual(1.1 * recordings.length * bytes);
  }, 180_000);

  it('a claimant killed with -9 mid-download leaves the recording to the other receiver, which saves it', async () => {
    const bytes = 2 * 1024 * 1024;
    // Paced, so the claimant is still downloading when it is killed.
    const { nginx, recordings, receiver, deliver, holdsAll } = await setUp({ count: 1, bytes, limitRate: '256k' });
    const r = recordings[0]!;
    const a = await receiver('receiver-a');
    const b = await receiver('receiver-b');

    await deliver(a, r);
    await a.proc.waitFor((e) => e.type === 'progress' && e.channelId === r.id && Number(e.bytes) > 0, 'a downloading');
    await deliver(b, r);
    await b.proc.waitFor((e) => e.type === 'received' && e.channelId === r.id, 'b received the webhook');
    // While a downloads on (two more progress reports, a second or more), b waits for it instead of downloading the same bytes.
    const downloaded = (e: ListenEvent) => e.type === 'progress' && e.channelId === r.id;
    const seen = a.proc.events.filter(downloaded).length;
    await a.proc.waitFor((e) => downloaded(e) && a.proc.events.filter(downloaded).length > seen + 1, 'a going on');
    expect(b.proc.events.filter((e) => downloaded(e) && Number(e.bytes) > 0)).toEqual([]);
    a.proc.child.kill('SIGKILL');
    expect(await a.proc.exited).toEqual({ code: null, signal: 'SIGKILL' });

    await b.proc.waitFor(savedOf(r.id), 'b saved the recording after the claimant died');
    await holdsAll(b.folder, recordings);
    // Both took bytes from the origin: a until it died, b the whole recording (nothing is lost, nothing doubled).
    expect((await nginx.bytesSent()).get(r.uri)).toBeGreaterThanOrEqual(bytes);
  }, 180_000);
});
