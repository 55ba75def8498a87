import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureIo } from '../../tests/support/cli/io.js';
import { closeCommandLog, currentCommandLog, openCommandLog } from './command-log.js';

const homes: string[] = [];
afterEach(async () => {
  await closeCommandLog();
  for (const home of homes.splice(0)) await rm(home, { recursive: true, force: true });
});

describe('openCommandLog', () => {
  it('prints each line as before and keeps it in <data>/logs/<command>.1.log, the secrets in use blanked', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-cmdlog-'));
    homes.push(home);
    const run = captureIo(new AbortController().signal, { TALLY_HOME: home, TALLY_SECRET: 'plain-secret-xyz' });
    const log = await openCommandLog(run.io, 'follow');
    log('the server echoed plain-secret-xyz back');
    expect(run.err()).toBe('tally follow: the server echoed plain-secret-xyz back\n');
    expect(currentCommandLog()?.folder).toBe(join(home, 'logs'));
    await closeCommandLog();
    expect(currentCommandLog()).toBeNull();
    const text = await readFile(join(home, 'logs', 'follow.1.log'), 'utf8');
    expect(text).toContain('"msg":"the server echoed [redacted] back"');
    expect(text).toMatch(/"msg":"tally follow started \(pid \d+/);
    expect(text).not.toContain('plain-secret-xyz');
  });

  it('costs the file, never the command, when the data folder cannot take a log', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-cmdlog-'));
    homes.push(home);
    // A file where the logs folder would go.
    await writeFile(join(home, 'logs'), 'not a folder');
    const run = captureIo(new AbortController().signal, { TALLY_HOME: home });
    const log = await openCommandLog(run.io, 'serve');
    log('still said');
    expect(run.err()).toMatch(/^tally serve: warning: no log file \(.+\); lines go to this terminal only\.\n/);
    expect(run.err()).toContain('tally serve: still said\n');
    expect(currentCommandLog()).toBeNull();
  });
});
