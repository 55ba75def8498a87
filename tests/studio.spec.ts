/**
 * Studio mode end to end: a real `nats-server` with JetStream on a free port, the built CLI as child processes
 * (`tally listen --team` as the receiver against the sandbox service over real HTTP, two `tally follow`
 * members), real files. Every wait is on an NDJSON event or a process exit, never on time.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../electron/core/sandbox/index.js';
import { OBJECT_BUCKET, STUDIO_STREAM } from '../electron/core/studio/team.js';
import { ensureBuiltCli } from './support/built-cli.js';
import { startTally, type ListenProcess } from './support/listen-process.js';
import { freePort, startNatsServer, type NatsServer } from './support/nats-server.js';
import { sha256File, listenEnv } from './support/sandbox-files.js';

const media = async (dir: string) => (await readdir(dir)).filter((f) => f.endsWith('.mp4')).sort();

describe('studio mode (nats-server, tally listen --team, tally follow)', () => {
  let sb: Sandbox;
  let nats: NatsServer | null = null;
  let root: string;
  const procs: ListenProcess[] = [];

  const dirs = (name: string) => ({ home: join(root, `${name}-home`), folder: join(root, name) });

  function receiver(team: string, extra: Record<string, string> = {}): ListenProcess {
    const { home, folder } = dirs('receiver');
    const proc = startTally('listen', ['--folder', folder, '--port', '0', '--tunnel', 'none', '--team', team], {
      ...listenEnv(sb, home),
      TALLY_TEAM_RETRY_MS: '100',
      ...extra,
    });
    procs.push(proc);
    return proc;
  }

  async function readyReceiver(team: string): Promise<ListenProcess> {
    const proc = receiver(team);
    const ready = await proc.waitFor((e) => e.type === 'ready', 'ready');
    sb.control.setWebhookUrl(String(ready.localUrl));
    return proc;
  }

  function follower(name: string, team: string, args: string[] = []): ListenProcess {
    const { home, folder } = dirs(name);
    const proc = startTally('follow', ['--team', team, '--folder', folder, '--name', name, ...args], {
      TALLY_HOME: home,
      TALLY_TEAM_RETRY_MS: '100',
    });
    procs.push(proc);
    return proc;
  }

  async function record(id: string, bytes: number) {
    sb.control.startBroadcast({ id, record: true, recordingBytes: bytes });
    const rec = await sb.control.endBroadcast(id);
    if (!rec) throw new Error(`no recording for ${id}`);
    return { size: rec.size, sha256: await rec.sha256() };
  }

  async function kill(proc: ListenProcess, signal: NodeJS.Signals = 'SIGTERM') {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
    proc.child.kill(signal);
    const { code } = await proc.exited;
    if (signal === 'SIGTERM') expect(code, proc.stderr()).toBe(0);
  }

  async function streamMessages(url: string): Promise<number> {
    const nc = await connect({ servers: url.replace('nats://', '') });
    try {
      return (await (await jetstreamManager(nc)).streams.info(STUDIO_STREAM)).state.messages;
    } finally {
      await nc.close();
    }
  }

  beforeAll(async () => {
    await ensureBuiltCli();
    sb = await startSandbox({ searchIndexDelayMs: 0, seed: 13 });
  }, 180_000);

  afterAll(async () => {
    await sb?.close();
  });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tally-studio-'));
    sb.control.setFaults('download', null);
    sb.control.setWebhookShape('json');
  });

  afterEach(async () => {
    for (const p of procs.splice(0)) await kill(p);
    await nats?.close();
    nats = null;
    await rm(root, { recursive: true, force: true });
  });

  it('mirrors every recording to two members byte-identical; a member is ready before anything is published', async () => {
    nats = await startNatsServer();
    const a = follower('member-a', nats.url);
    const b = follower('member-b', nats.url);
    const readyA = await a.waitFor((e) => e.type === 'ready', 'member ready');
    expect(readyA).toMatchObject({ name: 'member-a', team: nats.url });
    await b.waitFor((e) => e.type === 'ready', 'member ready');

    const listen = await readyReceiver(nats.url);
    await listen.waitFor((e) => e.type === 'team' && e.state === 'connected', 'team connected');
    const recs = { one: await record(`one-${Date.now()}`, 400_000), two: await record(`two-${Date.now()}`, 900_000) };
    for (const [label, rec] of Object.entries(recs)) {
      const published = await listen.waitFor(
        (e) => e.type === 'published' && e.bytes === rec.size,
        `published ${label}`,
      );
      for (const member of [a, b]) {
        const saved = await member.waitFor(
          (e) => e.type === 'saved' && e.identity === published.identity,
          `saved ${label}`,
        );
        expect(saved.bytes).toBe(rec.size);
        expect(await sha256File(String(saved.path))).toBe(rec.sha256);
      }
    }
    expect(await media(dirs('member-a').folder)).toHaveLength(2);
    expect(await media(dirs('member-b').folder)).toHaveLength(2);
    expect((await readdir(dirs('member-a').folder)).filter((f) => f.includes('.part'))).toEqual([]);
  });

  it('resumes a member killed with -9 mid-transfer, catches up on what was published meanwhile, no duplicates', async () => {
    nats = await startNatsServer();
    const listen = await readyReceiver(nats.url);
    await listen.waitFor((e) => e.type === 'team' && e.state === 'connected', 'team connected');
    const big = await record(`big-${Date.now()}`, 3_000_000);
    await listen.waitFor((e) => e.type === 'published' && e.bytes === big.size, 'published big');

    // Throttled so the kill lands mid-transfer.
    const first = follower('member-k', nats.url, ['--max-rate', '600k']);
    await first.waitFor((e) => e.type === 'progress' && Number(e.bytes) > 1_300_000, 'progress past 1.3 MB');
    first.child.kill('SIGKILL');
    await first.exited;
    const { folder } = dirs('member-k');
    expect(await media(folder), 'a final name before the transfer finished').toEqual([]);
    expect((await readdir(folder)).some((f) => f.endsWith('.part'))).toBe(true);

    const later = await record(`later-${Date.now()}`, 500_000);
    await listen.waitFor((e) => e.type === 'published' && e.bytes === later.size, 'published later');

    const second = follower('member-k', nats.url);
    const firstProgress = await second.waitFor((e) => e.type === 'progress', 'progress after restart');
    expect(Number(firstProgress.bytes), 'the transfer started over instead of resuming').toBeGreaterThan(700_000);
    const savedBig = await second.waitFor((e) => e.type === 'saved' && e.bytes === big.size, 'big saved');
    expect(await sha256File(String(savedBig.path))).toBe(big.sha256);
    const savedLater = await second.waitFor((e) => e.type === 'saved' && e.bytes === later.size, 'later saved');
    expect(await sha256File(String(savedLater.path))).toBe(later.sha256);
    await kill(second);

    // A third run has nothing to do: the same two files, no second copy, no leftovers.
    const third = follower('member-k', nats.url);
    await third.waitFor((e) => e.type === 'ready', 'ready again');
    const marker = await record(`marker-${Date.now()}`, 200_000);
    await third.waitFor((e) => e.type === 'saved' && e.bytes === marker.size, 'marker saved');
    expect(third.events.filter((e) => e.type === 'saved')).toHaveLength(1);
    expect(await media(folder)).toHaveLength(3);
    expect((await readdir(folder)).filter((f) => f.includes('.part'))).toEqual([]);
  });

  it('finishes a transfer across a nats-server restart, and keeps publishing after it', async () => {
    nats = await startNatsServer();
    const listen = await readyReceiver(nats.url);
    await listen.waitFor((e) => e.type === 'team' && e.state === 'connected', 'team connected');
    const member = follower('member-r', nats.url, ['--max-rate', '600k']);
    await member.waitFor((e) => e.type === 'ready', 'ready');
    const big = await record(`across-${Date.now()}`, 2_500_000);
    await member.waitFor((e) => e.type === 'progress' && Number(e.bytes) > 800_000, 'progress past 800 kB');

    await nats.stop(true);
    await member.waitFor((e) => e.type === 'connection' && e.state === 'disconnected', 'disconnected');
    await nats.start();
    const saved = await member.waitFor((e) => e.type === 'saved' && e.bytes === big.size, 'saved after restart');
    expect(await sha256File(String(saved.path))).toBe(big.sha256);

    const after = await record(`after-${Date.now()}`, 300_000);
    await listen.waitFor((e) => e.type === 'published' && e.bytes === after.size, 'published after restart');
    const saved2 = await member.waitFor((e) => e.type === 'saved' && e.bytes === after.size, 'mirrored after restart');
    expect(await sha256File(String(saved2.path))).toBe(after.sha256);
    expect(await media(dirs('member-r').folder)).toHaveLength(2);
  });

  it('publishes each recording once across receiver restarts (SIGTERM and kill -9), even with its ledger lost', async () => {
    nats = await startNatsServer();
    const member = follower('member-x', nats.url);
    await member.waitFor((e) => e.type === 'ready', 'ready');
    let listen = await readyReceiver(nats.url);
    await listen.waitFor((e) => e.type === 'team' && e.state === 'connected', 'team connected');
    const one = await record(`r1-${Date.now()}`, 300_000);
    await listen.waitFor((e) => e.type === 'published' && e.bytes === one.size, 'published one');
    await kill(listen);

    listen = await readyReceiver(nats.url);
    await listen.waitFor((e) => e.type === 'team' && e.state === 'connected', 'connected again');
    const two = await record(`r2-${Date.now()}`, 350_000);
    await listen.waitFor((e) => e.type === 'published' && e.bytes === two.size, 'published two');
    listen.child.kill('SIGKILL');
    await listen.exited;

    // The receiver's own record of what it published is gone: the KV claims still say "published".
    await rm(join(dirs('receiver').home, 'studio'), { recursive: true, force: true });
    listen = await readyReceiver(nats.url);
    await listen.waitFor((e) => e.type === 'team' && e.state === 'connected', 'connected a third time');
    const three = await record(`r3-${Date.now()}`, 250_000);
    await listen.waitFor((e) => e.type === 'published' && e.bytes === three.size, 'published three');
    expect(listen.events.filter((e) => e.type === 'published')).toHaveLength(1);

    await member.waitFor((e) => e.type === 'saved' && e.bytes === three.size, 'member has three');
    expect(await media(dirs('member-x').folder)).toHaveLength(3);
    expect(await streamMessages(nats.url)).toBe(3);
  });

  it('a receiver killed with -9 during its upload to the team store publishes after restart, once', async () => {
    nats = await startNatsServer();
    const member = follower('member-k', nats.url);
    await member.waitFor((e) => e.type === 'ready', 'ready');
    let listen = await readyReceiver(nats.url);
    await listen.waitFor((e) => e.type === 'team' && e.state === 'connected', 'team connected');
    // The object store's chunks travel on a plain subject: the first one seen means the upload is under way.
    const nc = await connect({ servers: nats.url.replace('nats://', '') });
    try {
      const chunks = nc.subscribe(`$O.${OBJECT_BUCKET}.C.>`, { max: 1 });
      const firstChunk = (async () => {
        for await (const chunk of chunks) return chunk.data.length;
        return 0;
      })();
      const big = await record(`big-${Date.now()}`, 48 * 1024 * 1024);
      expect(await firstChunk).toBeGreaterThan(0);
      listen.child.kill('SIGKILL');
      await listen.exited;
      // Cut mid-upload: no complete object and nothing announced yet.
      const objects = async () => {
        const os = await new Objm(nc).open(OBJECT_BUCKET);
        return (await os.list()).filter((o) => !o.deleted).map((o) => o.name);
      };
      expect(await objects()).toEqual([]);
      expect(await streamMessages(nats.url)).toBe(0);

      // Its journal has the recording saved and its ledger not published; the claim is its own: it goes again.
      listen = await readyReceiver(nats.url);
      await listen.waitFor((e) => e.type === 'published' && e.bytes === big.size, 'published after restart');
      const saved = await member.waitFor((e) => e.type === 'saved' && e.bytes === big.size, 'mirrored');
      expect(await sha256File(String(saved.path))).toBe(big.sha256);
      expect(await objects()).toHaveLength(1);
      expect(await streamMessages(nats.url)).toBe(1);
      expect(await media(dirs('member-k').folder)).toHaveLength(1);
    } finally {
      await nc.close();
    }
  });

  it('says so in one line when the team server is unreachable at start, retries, and carries on once it is up', async () => {
    const port = await freePort();
    const team = `nats://127.0.0.1:${port}`;
    const member = follower('member-u', team);
    const waiting = await member.waitFor((e) => e.type === 'waiting', 'waiting');
    expect(String(waiting.message)).toMatch(/unreachable \(connection refused\)/);
    expect(member.stderr()).toMatch(
      /^tally follow: The team server nats:\/\/127\.0\.0\.1:\d+ is unreachable.*Trying again in \d+ s\.$/m,
    );

    // The receiver keeps receiving and saving meanwhile.
    const listen = receiver(team);
    const ready = await listen.waitFor((e) => e.type === 'ready', 'receiver ready');
    sb.control.setWebhookUrl(String(ready.localUrl));
    await listen.waitFor((e) => e.type === 'waiting', 'receiver waiting');
    const rec = await record(`offline-${Date.now()}`, 300_000);
    await listen.waitFor((e) => e.type === 'saved' && e.bytes === rec.size, 'saved while the team is away');

    nats = await startNatsServer({ port });
    await member.waitFor((e) => e.type === 'ready', 'member ready once up');
    await listen.waitFor((e) => e.type === 'published' && e.bytes === rec.size, 'published once up');
    const saved = await member.waitFor((e) => e.type === 'saved' && e.bytes === rec.size, 'mirrored');
    expect(await sha256File(String(saved.path))).toBe(rec.sha256);
  });

  it('refuses a bad --team URL with a usage error naming the flag', async () => {
    const proc = startTally('follow', ['--team', 'http://127.0.0.1:4222', '--folder', join(root, 'x')], {
      TALLY_HOME: join(root, 'h'),
    });
    const { code } = await proc.exited;
    expect(code).toBe(2);
    expect(proc.stderr()).toMatch(/^tally follow: --team must start with nats:\/\/ or tls:\/\//m);
  });
});
