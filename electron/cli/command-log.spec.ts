import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureIo } from '../../tests/support/cli/io.js';
import { closeCommandLog, currentCommandLog, openCommandLog, takeLogFlags } from './command-log.js';

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

  it('writes the trail to the file only, at the level asked: info by default, the setting, then the flag', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-cmdlog-'));
    homes.push(home);
    const run = captureIo(new AbortController().signal, { TALLY_HOME: home });
    const lines = async () =>
      (await readFile(join(home, 'logs', 'listen.1.log'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { level: number; scope?: string; msg: string });

    takeLogFlags([]);
    let log = await openCommandLog(run.io, 'listen', 'info');
    log.trail.child('receive').info('webhook received');
    log.trail.debug('detail nobody asked for');
    log.followSetting('debug');
    log.trail.debug('detail now asked for');
    await closeCommandLog('SIGINT');
    expect(run.err()).toBe('');
    expect((await lines()).map((l) => [l.level, l.scope ?? null, l.msg])).toEqual([
      [30, null, expect.stringMatching(/^tally listen started \(.*, log level info\)$/)],
      [30, 'receive', 'webhook received'],
      [30, null, 'log level debug (the logLevel setting)'],
      [20, null, 'detail now asked for'],
      [30, null, 'tally listen stopped (SIGINT)'],
    ]);

    // --log-level wins over the setting, now and when it changes.
    expect(takeLogFlags(['--folder', 'x', '--log-level=warn', '--ndjson'])).toEqual(['--folder', 'x', '--ndjson']);
    log = await openCommandLog(run.io, 'listen', 'debug');
    log.followSetting('debug');
    log.trail.info('not at warn');
    log.trail.warn('at warn');
    await closeCommandLog();
    expect((await lines()).slice(5).map((l) => l.msg)).toEqual(['at warn']);
  });
});

describe('takeLogFlags', () => {
  it('takes --debug and --log-level off the arguments, leaves everything after --, refuses a made-up level', () => {
    expect(takeLogFlags(['--debug', '--port', '0'])).toEqual(['--port', '0']);
    expect(takeLogFlags(['--log-level', 'error', '--', '--debug'])).toEqual(['--', '--debug']);
    expect(() => takeLogFlags(['--log-level', 'loud'])).toThrow('--log-level must be debug, info, warn or error.');
    expect(() => takeLogFlags(['--log-level'])).toThrow('--log-level must be');
    takeLogFlags([]);
  });
});
