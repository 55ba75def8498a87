import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lastLogLines, logFolder, openLogFile } from './log-file.js';

const homes: string[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) await rm(home, { recursive: true, force: true });
});
const tempHome = async () => {
  const home = await mkdtemp(join(tmpdir(), 'tally-log-'));
  homes.push(home);
  return home;
};

describe('openLogFile', () => {
  it('writes each line to <home>/logs/<name>.1.log at once, as JSON with its level and scope', async () => {
    const home = await tempHome();
    const log = await openLogFile({ home, name: 'app' });
    log.warn('settings: Ignored unknown setting "x".');
    log.scope('tray').error('could not open the folder');
    // Synchronous writes: the line is on disk when the call returns (a crash right after loses nothing).
    const lines = (await readFile(join(logFolder(home), 'app.1.log'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 40, msg: 'settings: Ignored unknown setting "x".' }),
      expect.objectContaining({ level: 50, scope: 'tray', msg: 'could not open the folder' }),
    ]);
    await log.close();
  });

  it('redacts secrets at the logger: secret-looking fields, URLs with credentials, hook tokens, secrets in use', async () => {
    const home = await tempHome();
    const echoed: string[] = [];
    const log = await openLogFile({
      home,
      name: 'listen',
      echo: (l) => echoed.push(l),
      secrets: () => ['hunter2-long'],
    });
    log.warn('request failed: {"serviceId":"svc","secret":"s3cr3t-body"} secret=s3cr3t-query');
    log.warn('team server nats://alice:pa55word@10.0.0.1:4222 refused; hook https://x.example/hooks/AbCdEf0123456789');
    log.warn('the keychain said hunter2-long is wrong');
    log.warn('GET /x?next=%2Fcb%3Fsecret%3Ds3cr3t-encoded%26a%3D1 failed');
    const text = await readFile(join(logFolder(home), 'listen.1.log'), 'utf8');
    for (const secret of [
      's3cr3t-body',
      's3cr3t-query',
      's3cr3t-encoded',
      'pa55word',
      'alice',
      'AbCdEf0123456789',
      'hunter2-long',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('[redacted]');
    // The producer's own terminal gets the line as written (the webhook URL must stay copyable there).
    expect(echoed[1]).toContain('AbCdEf0123456789');
    await log.close();
  });

  it('rotates by size and keeps a bounded number of files', async () => {
    const home = await tempHome();
    const log = await openLogFile({ home, name: 'serve', rotateBytes: 1024 });
    for (let i = 0; i < 200; i++) {
      log.info(`line ${i} ${'x'.repeat(60)}`);
      // Lines come one at a time in a running app; the roll happens between them.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await log.close();
    const files = (await readdir(logFolder(home))).filter((f) => f.startsWith('serve.'));
    expect(files.length).toBeGreaterThan(1);
    expect(files.length).toBeLessThanOrEqual(5);
    // The newest lines are readable, oldest first, across the files.
    const last = await lastLogLines(home, 'serve', 3);
    expect(last).toHaveLength(3);
    expect(last[2]).toMatch(/ info line 199 x+$/);
    expect(last[0]).toMatch(/ info line 197 /);
  });

  it('writes info and above by default; debug once the level says so, for every scope made before or after', async () => {
    const home = await tempHome();
    const echoed: string[] = [];
    const log = await openLogFile({ home, name: 'listen', echo: (l) => echoed.push(l) });
    const downloads = log.child('receive').child('downloads');
    downloads.debug('progress 1');
    downloads.info('saved');
    expect(log.level).toBe('info');
    log.setLevel('debug');
    downloads.debug('progress 2');
    log.child('health').debug('judged');
    await log.close();
    const lines = (await readFile(join(logFolder(home), 'listen.1.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; scope?: string; msg: string });
    expect(lines.map((l) => [l.level, l.scope, l.msg])).toEqual([
      [30, 'receive/downloads', 'saved'],
      [20, 'receive/downloads', 'progress 2'],
      [20, 'health', 'judged'],
    ]);
    // The terminal echo follows the same level.
    expect(echoed).toEqual(['saved', 'progress 2', 'judged']);
  });

  it('reads no lines where no log was written yet', async () => {
    expect(await lastLogLines(await tempHome(), 'follow', 10)).toEqual([]);
  });
});
