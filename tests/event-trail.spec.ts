/**
 * The event trail a producer can send (issue 33): real `node bin/tally.js` processes, stopped by a real SIGINT,
 * and what their log files hold afterwards.
 *
 * `tally listen --sandbox` with the sandbox's fault switches (docs/sandbox.md): downloads answer 500 while one
 * recording arrives (its attempt fails), then that recording is expired and the switch cleared, and a second
 * recording is saved; Ctrl+C. The log must hold the start, each webhook, each attempt and its result, the health
 * changes and "stopped (SIGINT)", and `tally doctor` must quote them. `serve` and `follow` log the same start and
 * stop lines.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuiltCli, ROOT } from './support/built-cli.js';
import { startNatsServer, type NatsServer } from './support/nats-server.js';

const homes: string[] = [];
afterAll(async () => {
  for (const home of homes) await rm(home, { recursive: true, force: true });
});
beforeAll(() => ensureBuiltCli(), 180_000);

async function tempHome(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'tally-trail-'));
  homes.push(home);
  return home;
}

type Child = ChildProcessByStdio<null, Readable, Readable>;

function tally(args: string[], home: string): { child: Child; exited: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [join(ROOT, 'bin/tally.js'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: home, TALLY_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, exited, stderr: () => stderr };
}

/** The NDJSON lines of a child's stdout, each parsed, waited on by a predicate. */
function ndjson(child: Child) {
  const seen: Record<string, unknown>[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] =
    [];
  createInterface({ input: child.stdout }).on('line', (text) => {
    const line = JSON.parse(text) as Record<string, unknown>;
    seen.push(line);
    for (const w of [...waiters]) {
      if (!w.match(line)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  });
  return (match: (l: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const found = seen.find(match);
      if (found) resolve(found);
      else waiters.push({ match, resolve });
    });
}

/** The log file's lines as JSON (`{ time, level, scope, msg }`). */
async function logLines(home: string, name: string): Promise<{ level: number; scope?: string; msg: string }[]> {
  const text = await readFile(join(home, 'logs', `${name}.1.log`), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { level: number; scope?: string; msg: string });
}

async function control(base: string, path: string, body: unknown, method = 'POST'): Promise<unknown> {
  const res = await fetch(`${base}/_sandbox${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return res.json();
}

describe('the event trail in the log file', () => {
  it('tally listen --sandbox: start, each webhook, each attempt and its result, health changes, stopped (SIGINT); doctor quotes it', async () => {
    const home = await tempHome();
    const run = tally(['listen', '--sandbox', '--ndjson', '--time-factor', '60', '--folder', join(home, 'rec')], home);
    const next = ndjson(run.child);
    const ready = await next((l) => l.type === 'ready');
    const sandbox = String(ready.sandboxUrl);
    expect(sandbox).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // Every download answers 500 while the first recording arrives: its attempt fails and is retried later.
    await control(sandbox, '/faults/download', { status: 500 }, 'PUT');
    await control(sandbox, '/broadcasts', { id: 'trail-fails', record: true, recordingBytes: 30_000 });
    await control(sandbox, '/broadcasts/trail-fails/end', { sendWebhook: true });
    await next((l) => l.type === 'failed' && l.channelId === 'trail-fails');
    await next((l) => l.type === 'health' && l.state !== 'ok');
    // It never comes back (the service deleted it); the next recording downloads.
    await control(sandbox, '/recordings/trail-fails/expire', {});
    await control(sandbox, '/faults/download', null, 'PUT');
    await control(sandbox, '/broadcasts', { id: 'trail-saves', record: true, recordingBytes: 30_000 });
    await control(sandbox, '/broadcasts/trail-saves/end', { sendWebhook: true });
    await next((l) => l.type === 'saved' && l.channelId === 'trail-saves');

    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);

    const lines = await logLines(home, 'listen');
    const msgs = lines.map((l) => `${l.scope ? `[${l.scope}] ` : ''}${l.msg}`);
    const has = (pattern: RegExp) =>
      expect(
        msgs.some((m) => pattern.test(m)),
        `${pattern}\n${msgs.join('\n')}`,
      ).toBe(true);
    has(/^tally listen started \(pid \d+, .*log level info\)$/);
    has(/^sandbox service at http:\/\/127\.0\.0\.1:\d+ \(time 60x faster\)$/);
    has(/^\[receive\] receiver listening on port \d+$/);
    has(/^\[receive\/webhook\] received \w+ webhook for channel "trail-fails": recording /);
    has(/^\[receive\/webhook\] received \w+ webhook for channel "trail-saves": recording /);
    has(/^\[receive\/downloads\] attempt 1 for channel "trail-fails" \(recording .*\) started$/);
    has(/^\[receive\/downloads\] attempt 1 for channel "trail-fails" .* failed: .*500.*; next attempt at \d{4}-/);
    has(/^\[receive\/downloads\] attempt 1 for channel "trail-saves" \(recording .*\) started$/);
    has(/^\[receive\/downloads\] saved channel "trail-saves" .* after 1 attempt: .* verified/);
    has(/^\[receive\/health\] downloads ok → (warning|error): /);
    has(/^\[receive\/health\] \w+ → ok: All is well/);
    has(/^\[sandbox\] sent the \w+ webhook of "trail-saves": 200$/);
    has(/^\[receive\] receiver stopped \(journal flushed, part files kept\)$/);
    expect(msgs.at(-1)).toBe('tally listen stopped (SIGINT)');
    // The trail is written at info and above: no progress detail without --debug.
    expect(lines.filter((l) => l.level < 30)).toEqual([]);
    // The terminal got the printer's lines only: the trail is for the file.
    expect(run.stderr()).not.toMatch(/attempt 1 for channel/);

    const doctor = tally(['doctor'], home);
    let report = '';
    doctor.child.stdout.on('data', (c: Buffer) => (report += c.toString()));
    expect(await doctor.exited).toBe(0);
    expect(report).toContain('Last lines of the listen log:');
    expect(report).toMatch(/ info \[receive\/downloads\] saved channel "trail-saves"/);
    expect(report).toMatch(/ info tally listen stopped \(SIGINT\)\n/);
  }, 90_000);

  it('tally listen --debug writes the detail too (download progress), and --log-level rejects a made-up level', async () => {
    const home = await tempHome();
    const run = tally(['listen', '--sandbox', '--ndjson', '--debug', '--folder', join(home, 'rec')], home);
    const next = ndjson(run.child);
    const ready = await next((l) => l.type === 'ready');
    await control(String(ready.sandboxUrl), '/faults/download', null, 'PUT');
    await control(String(ready.sandboxUrl), '/broadcasts', { id: 'trail-debug', record: true, recordingBytes: 30_000 });
    await control(String(ready.sandboxUrl), '/broadcasts/trail-debug/end', { sendWebhook: true });
    await next((l) => l.type === 'saved' && l.channelId === 'trail-debug');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const lines = await logLines(home, 'listen');
    expect(lines[0]?.msg).toMatch(/log level debug\)$/);
    expect(lines.some((l) => l.level === 20 && /^recording .*: .* of /.test(l.msg))).toBe(true);
    expect(lines.at(-1)?.msg).toBe('tally listen stopped (SIGTERM)');

    const wrong = tally(['listen', '--log-level', 'chatty'], home);
    expect(await wrong.exited).toBe(2);
    expect(wrong.stderr()).toContain('tally listen: --log-level must be debug, info, warn or error.');
  }, 90_000);

  it('tally serve and tally follow log their start and why they stopped', async () => {
    const home = await tempHome();
    const serve = tally(['serve', '--sandbox', '--json', '--no-open', '--port', '0'], home);
    await ndjson(serve.child)((l) => l.type === 'ready');
    serve.child.kill('SIGINT');
    expect(await serve.exited).toBe(0);
    const served = (await logLines(home, 'serve')).map((l) => l.msg);
    expect(served[0]).toMatch(/^tally serve started \(pid \d+/);
    expect(served).toContain('receiver stopped (journal flushed, part files kept)');
    expect(served.at(-1)).toBe('tally serve stopped (SIGINT)');

    let nats: NatsServer | null = null;
    try {
      nats = await startNatsServer();
      const follow = tally(['follow', '--team', nats.url, '--ndjson', '--folder', join(home, 'mirror')], home);
      await ndjson(follow.child)((l) => l.type === 'ready');
      follow.child.kill('SIGTERM');
      expect(await follow.exited).toBe(0);
    } finally {
      await nats?.close();
    }
    const followed = (await logLines(home, 'follow')).map((l) => `${(l as { scope?: string }).scope ?? ''} ${l.msg}`);
    expect(followed[0]).toMatch(/^ tally follow started \(pid \d+/);
    expect(followed.some((m) => /^follow following the team server nats:\/\/127\.0\.0\.1:\d+ as /.test(m))).toBe(true);
    expect(followed.some((m) => /^follow\/health starting → /.test(m))).toBe(true);
    expect(followed.at(-1)).toBe(' tally follow stopped (SIGTERM)');
  }, 90_000);

  it('tally sandbox logs its own events: start, broadcasts, recordings, and why it stopped', async () => {
    const home = await tempHome();
    const run = tally(['sandbox', '--json', '--quiet', '--port', '0', '--download-port', '0'], home);
    const ready = await ndjson(run.child)((l) => typeof l.apiUrl === 'string');
    await control(String(ready.apiUrl), '/broadcasts', { id: 'trail-sandbox', record: true, recordingBytes: 10_000 });
    await control(String(ready.apiUrl), '/broadcasts/trail-sandbox/end', { sendWebhook: false });
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    const msgs = (await logLines(home, 'sandbox')).map((l) => l.msg);
    expect(msgs[0]).toMatch(/^tally sandbox started \(pid \d+/);
    expect(msgs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^sandbox service at http:\/\/127\.0\.0\.1:\d+ \(time 1x faster\)$/),
        'broadcast "trail-sandbox" live (recorded)',
        'broadcast "trail-sandbox" ended',
        expect.stringMatching(/^recording of "trail-sandbox" published \(\d+ bytes\)$/),
      ]),
    );
    expect(msgs.at(-1)).toBe('tally sandbox stopped (SIGINT)');
  }, 60_000);
});
