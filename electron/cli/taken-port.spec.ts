/**
 * `tally serve --port N` with N taken says which port, who holds it and the flag that chooses another: its own
 * webhook receiver (the receiverPort setting holds N: a trial as a new user ran `tally serve --port 8787` and met
 * only "Port 8787 is already in use"), another Tally of this data folder (its run file and control socket), or
 * another program (Linux /proc). `tally serve` runs in process; the holders are real processes on real ports.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { MemorySecretStore } from '../core/credentials.js';
import { openSettingsStore } from '../core/settings.js';
import { captureIo } from '../../tests/support/cli/io.js';
import { ensureBuiltCli } from '../../tests/support/built-cli.js';
import { startListen } from '../../tests/support/listen-process.js';
import { freePort } from '../../tests/support/nats-server.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function home(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-taken-port-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** `tally serve --sandbox --port <port>` in process: it must fail at once; its exit code and stderr. */
async function serveOn(dir: string, port: number): Promise<{ code: number; err: string }> {
  const made = captureIo(new AbortController().signal, { TALLY_HOME: dir }, new MemorySecretStore());
  const code = await main(['serve', '--sandbox', '--no-open', '--port', String(port)], made.io);
  return { code, err: made.err() };
}

describe('tally serve --port on a taken port', () => {
  beforeAll(() => ensureBuiltCli(), 180_000);

  it("names its own webhook receiver when the receiverPort setting holds the page's port", async () => {
    const dir = await home();
    const port = await freePort();
    openSettingsStore(dir).update({ receiverPort: port, recordingsFolder: join(dir, 'rec') });
    const { code, err } = await serveOn(dir, port);
    expect(code).toBe(1);
    expect(err).toContain(
      `Port ${port} for the page is taken by this Tally's own webhook receiver (the receiverPort setting): choose another with --port <port>, or leave --port out for a free one.`,
    );
  }, 60_000);

  it('names another Tally of this data folder by its face and process', async () => {
    const dir = await home();
    const port = await freePort();
    const listen = startListen(['--sandbox', '--folder', join(dir, 'rec'), '--port', String(port)], {
      TALLY_HOME: dir,
    });
    cleanups.push(async () => {
      listen.child.kill('SIGTERM');
      await listen.exited;
    });
    await listen.waitFor((e) => e.type === 'ready', 'ready');
    openSettingsStore(dir).update({ receiverPort: 0, recordingsFolder: join(dir, 'rec2') });
    const { code, err } = await serveOn(dir, port);
    expect(code).toBe(1);
    expect(err).toContain(
      `Port ${port} for the page is taken by the webhook receiver of tally listen (process ${listen.child.pid}): choose another with --port <port>`,
    );
  }, 60_000);

  it.runIf(process.platform === 'linux')(
    'names another program that holds it',
    async () => {
      const dir = await home();
      openSettingsStore(dir).update({ receiverPort: 0, recordingsFolder: join(dir, 'rec') });
      const holder = spawn(
        process.execPath,
        ['-e', "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>console.log(s.address().port))"],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      cleanups.push(async () => {
        holder.kill('SIGTERM');
        if (holder.exitCode === null) await new Promise((resolve) => holder.once('exit', resolve));
      });
      const port = Number(
        await new Promise<string>((resolve) => createInterface({ input: holder.stdout! }).once('line', resolve)),
      );
      const { code, err } = await serveOn(dir, port);
      expect(code).toBe(1);
      expect(err).toContain(
        `Port ${port} for the page is taken by node (process ${holder.pid}): choose another with --port`,
      );
    },
    60_000,
  );
});
