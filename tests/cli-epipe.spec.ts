/**
 * A reader that goes away is not a crash (issue 33): `tally follow --ndjson | head -1` against a real nats-server
 * and `tally serve | head -1`, run by bash as a producer would, then Ctrl+C to the pipeline's process group (head
 * is gone by then, so what the command prints as it stops meets a closed pipe: EPIPE). The command must end
 * quietly with exit code 0: no "unexpected error", no stack, nothing on stderr for follow.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuiltCli, TALLY_BIN } from './support/built-cli.js';
import { startNatsServer, type NatsServer } from './support/nats-server.js';

const homes: string[] = [];
/** What bash says on stderr once head is gone. */
const HEAD_DONE = 'epipe-spec: head exited';
let nats: NatsServer;
beforeAll(async () => {
  await ensureBuiltCli();
  nats = await startNatsServer();
}, 180_000);
afterAll(async () => {
  await nats?.close();
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

/**
 * Runs `tally <args> | head -1` in bash (its own process group); once head has printed its line and gone, sends
 * SIGINT to the group, as Ctrl+C would. Resolves with tally's exit code (bash's PIPESTATUS), head's line and stderr.
 */
async function pipedToHead(
  argsFor: (home: string) => string[],
): Promise<{ code: number | null; line: string; stderr: string; home: string }> {
  const home = await mkdtemp(join(tmpdir(), 'tally-epipe-'));
  homes.push(home);
  const quoted = [process.execPath, TALLY_BIN, ...argsFor(home)].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const bash = spawn('bash', ['-c', `${quoted} | { head -1; echo ${HEAD_DONE} >&2; }; exit "\${PIPESTATUS[0]}"`], {
    env: { PATH: process.env.PATH, HOME: home, TALLY_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let line = '';
  let stderr = '';
  bash.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  bash.stdout.on('data', (c: Buffer) => (line += c.toString()));
  const exited = new Promise<number | null>((resolve) => bash.once('close', resolve));
  // head has printed its one line and exited (bash says so on stderr); then Ctrl+C, unless tally already ended.
  await new Promise<void>((resolve) => {
    const check = () => {
      if (!stderr.includes(HEAD_DONE)) return;
      bash.stderr.off('data', check);
      resolve();
    };
    bash.stderr.on('data', check);
  });
  try {
    process.kill(-(bash.pid as number), 'SIGINT');
  } catch {
    // The whole pipeline has ended already (the command met the closed pipe and stopped by itself).
  }
  const code = await exited;
  return { code, line, stderr: stderr.replace(`${HEAD_DONE}\n`, ''), home };
}

describe('a closed stdout ends a command quietly', () => {
  it('tally follow --ndjson | head -1 exits 0 with nothing on stderr', async () => {
    const run = await pipedToHead((home) => [
      'follow',
      '--team',
      nats.url,
      '--ndjson',
      '--folder',
      join(home, 'mirror'),
    ]);
    expect(JSON.parse(run.line)).toMatchObject({ type: expect.any(String) });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  }, 60_000);

  it('tally serve | head -1 exits 0, and says nothing of EPIPE or an unexpected error', async () => {
    const run = await pipedToHead(() => ['serve', '--sandbox', '--no-open', '--port', '0']);
    expect(run.line).toMatch(/^Tally is running at http:\/\/127\.0\.0\.1:\d+\//);
    expect(run.stderr).not.toMatch(/EPIPE|unexpected error|\n\s+at /);
    expect(run.code).toBe(0);
  }, 60_000);
});
