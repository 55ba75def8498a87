/**
 * `tally serve`'s Open and Show in folder through the OS opener, run for real: a stand-in `xdg-open` on PATH
 * (a shell script that writes its arguments to a file) is what the desktop would run.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { desktopFileHooks, openerCommands } from './desktop-open.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-opener-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A stand-in opener named `name` in `dir` that appends its arguments, one per line, to `<dir>/opened`. */
async function standInOpener(name: string): Promise<void> {
  const script = join(dir, name);
  await writeFile(script, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a" >> "${join(dir, 'opened')}"; done\n`);
  await chmod(script, 0o755);
}

const opened = () => readFile(join(dir, 'opened'), 'utf8').catch(() => '');

describe('desktopFileHooks', () => {
  it('opens a recording and shows its folder with the desktop opener, the path as one argument', async () => {
    await standInOpener('xdg-open');
    const hooks = desktopFileHooks({ env: { DISPLAY: ':0', PATH: dir }, platform: 'linux', loopbackOnly: true });
    const file = join(dir, 'a show; $(rm -rf x) `x`.mp4');
    await hooks.openFile?.(file);
    await expect.poll(opened).toBe(`${file}\n`);
    await hooks.revealFile?.(file);
    await expect.poll(opened).toBe(`${file}\n${dir}\n`);
  });

  it('says in one line when the opener cannot be started', async () => {
    const hooks = desktopFileHooks({ env: { DISPLAY: ':0', PATH: dir }, platform: 'linux', loopbackOnly: true });
    await expect(hooks.openFile?.(join(dir, 'x.mp4'))).rejects.toThrow(
      '"xdg-open" could not be started to show the recording on this computer.',
    );
  });

  it('offers nothing without a desktop, or when the page may be seen on another machine', () => {
    expect(desktopFileHooks({ env: { PATH: dir }, platform: 'linux', loopbackOnly: true })).toEqual({});
    expect(desktopFileHooks({ env: { DISPLAY: ':0' }, platform: 'linux', loopbackOnly: false })).toEqual({});
    expect(Object.keys(desktopFileHooks({ env: {}, platform: 'darwin', loopbackOnly: true }))).toEqual([
      'openFile',
      'revealFile',
    ]);
  });

  it('names the opener of each platform, selecting the file where the platform can', () => {
    expect(openerCommands('/r/a.mp4', 'darwin')).toEqual({
      open: ['open', ['/r/a.mp4']],
      reveal: ['open', ['-R', '/r/a.mp4']],
    });
    expect(openerCommands('C:\\r\\a.mp4', 'win32').reveal).toEqual(['explorer.exe', ['/select,C:\\r\\a.mp4']]);
    expect(openerCommands('/r/a.mp4', 'linux').reveal).toEqual(['xdg-open', ['/r']]);
  });
});
