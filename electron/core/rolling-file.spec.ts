import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RollingFile, logFileNumber } from './rolling-file.js';

describe('RollingFile', () => {
  let folder: string;
  beforeEach(async () => {
    folder = join(await mkdtemp(join(tmpdir(), 'tally-rolling-')), 'logs');
  });
  afterEach(async () => {
    await rm(join(folder, '..'), { recursive: true, force: true });
  });

  it('rolls to the next number at the size, keeps `keep` older files of its name and leaves other names alone', async () => {
    const line = `${'x'.repeat(99)}\n`;
    const file = new RollingFile({ folder, name: 'listen', maxBytes: 1000, keep: 2 });
    await writeFile(join(folder, 'serve.1.log'), 'other face\n');
    for (let i = 0; i < 45; i++) file.write(line);
    file.close();
    // 10 lines per file: listen.1 .. listen.5, of which the current (5) and two before it remain.
    expect((await readdir(folder)).sort()).toEqual(['listen.3.log', 'listen.4.log', 'listen.5.log', 'serve.1.log']);
    expect(await readFile(join(folder, 'listen.4.log'), 'utf8')).toBe(line.repeat(10));
    expect(await readFile(join(folder, 'listen.5.log'), 'utf8')).toBe(line.repeat(5));
  });

  it('carries on in the highest-numbered file of its name, or the next one when that is full', async () => {
    const first = new RollingFile({ folder, name: 'follow', maxBytes: 10, keep: 4 });
    first.write('12345\n');
    first.close();
    // The app's files have higher numbers: they do not move this face's number.
    await writeFile(join(folder, 'app.9.log'), '');
    const again = new RollingFile({ folder, name: 'follow', maxBytes: 10, keep: 4 });
    expect(again.path).toBe(join(folder, 'follow.1.log'));
    again.write('678\n');
    again.close();
    expect(await readFile(join(folder, 'follow.1.log'), 'utf8')).toBe('12345\n678\n');
    const full = new RollingFile({ folder, name: 'follow', maxBytes: 10, keep: 4 });
    expect(full.path).toBe(join(folder, 'follow.2.log'));
    full.close();
  });

  it('drops a line it cannot write instead of throwing, and writes the next one once it can', async () => {
    const file = new RollingFile({ folder, name: 'serve', maxBytes: 5, keep: 1 });
    file.write('first\n');
    // The folder is gone when the next file is due: its line is lost, the command that logged it is not.
    await rm(folder, { recursive: true });
    expect(file.write('lost\n')).toBe(true);
    expect(() => file.write('lost too\n')).not.toThrow();
    await mkdir(folder);
    file.write('kept\n');
    file.close();
    const files = await readdir(folder);
    expect(files).toHaveLength(1);
    expect(await readFile(join(folder, files[0] as string), 'utf8')).toBe('kept\n');
  });

  it('reads file numbers of its own name only', () => {
    expect(logFileNumber('listen.12.log', 'listen')).toBe(12);
    expect(logFileNumber('listen.12.log', 'list')).toBeNull();
    expect(logFileNumber('listen.x.log', 'listen')).toBeNull();
    expect(logFileNumber('listen.0.log', 'listen')).toBeNull();
  });
});
