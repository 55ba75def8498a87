import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { installCrashHandlers } from './crash.js';

function setup() {
  const proc = new EventEmitter();
  const lines: string[] = [];
  const shown: { title: string; message: string }[] = [];
  let restarts = 0;
  installCrashHandlers({
    process: proc,
    log: (line) => lines.push(line),
    show: (title, message) => shown.push({ title, message }),
    restart: () => restarts++,
    logFolder: '/data/Tally/logs',
  });
  return { proc, lines, shown, restarts: () => restarts };
}

describe('installCrashHandlers', () => {
  it('logs an uncaught exception with its stack, redacted, says so once and restarts once', () => {
    const { proc, lines, shown, restarts } = setup();
    const error = new Error('boom: secret=hunter22');
    proc.emit('uncaughtException', error);
    proc.emit('uncaughtException', new Error('again'));
    expect(lines[0]).toMatch(/^uncaught exception: Error: boom: secret=\[redacted\]\n\s+at /);
    expect(lines[0]).not.toContain('hunter22');
    expect(lines[1]).toMatch(/^uncaught exception: Error: again/);
    expect(shown).toEqual([
      {
        title: 'Tally ran into an unexpected error',
        message: expect.stringContaining('restarts to be safe') as unknown as string,
      },
    ]);
    expect(shown[0]?.message).toContain('/data/Tally/logs');
    expect(restarts()).toBe(1);
  });

  it('logs an unhandled rejection and carries on, with no dialog', () => {
    const { proc, lines, shown, restarts } = setup();
    proc.emit('unhandledRejection', new Error('lost promise'));
    proc.emit('unhandledRejection', 'a plain reason');
    expect(lines.map((l) => l.split('\n')[0])).toEqual([
      'unhandled promise rejection: Error: lost promise',
      'unhandled promise rejection: a plain reason',
    ]);
    expect(shown).toEqual([]);
    expect(restarts()).toBe(0);
  });

  it('still logs when the dialog cannot be shown', () => {
    const proc = new EventEmitter();
    const lines: string[] = [];
    let restarts = 0;
    installCrashHandlers({
      process: proc,
      log: (line) => lines.push(line),
      show: () => {
        throw new Error('no display');
      },
      restart: () => restarts++,
      logFolder: '/x',
    });
    proc.emit('uncaughtException', new Error('boom'));
    expect(lines[1]).toMatch(/^could not show the error: Error: no display/);
    expect(restarts).toBe(1);
  });

  describe('the crash-loop guard', () => {
    function guarded(count: number, answer: number) {
      const proc = new EventEmitter();
      const lines: string[] = [];
      const calls: string[] = [];
      const asked: unknown[] = [];
      let copied!: () => void;
      const copiedNow = new Promise<void>((resolve) => (copied = resolve));
      const quitNow = new Promise<void>((resolve) => {
        installCrashHandlers({
          process: proc,
          log: (line) => lines.push(line),
          show: () => calls.push('show'),
          restart: () => calls.push('restart'),
          logFolder: '/data/Tally/logs',
          recordCrash: () => count,
          askInLoop: (text) => {
            asked.push(text);
            return Promise.resolve(answer);
          },
          copyDiagnostics: () => {
            calls.push('copy');
            copied();
            return Promise.resolve();
          },
          quit: () => {
            calls.push('quit');
            resolve();
          },
        });
      });
      return { proc, lines, calls, asked, copiedNow, quitNow };
    }

    it('restarts after a first and a second crash', () => {
      for (const count of [1, 2]) {
        const { proc, calls } = guarded(count, 0);
        proc.emit('uncaughtException', new Error('boom'));
        expect(calls).toEqual(['show', 'restart']);
      }
    });

    it('the third crash within the window asks instead of restarting; Copy diagnostics copies, then quits', async () => {
      const { proc, calls, asked, lines, quitNow } = guarded(3, 0);
      proc.emit('uncaughtException', new Error('boom'));
      await quitNow;
      expect(calls).toEqual(['copy', 'quit']);
      expect(asked).toEqual([expect.objectContaining({ title: 'Tally keeps stopping', copy: 'Copy diagnostics' })]);
      expect(lines).toContain('crash loop: 3 crashes within a minute; Tally does not restart itself');
    });

    it('Quit in the crash-loop dialog quits without copying', async () => {
      const { proc, calls, quitNow } = guarded(4, 1);
      proc.emit('uncaughtException', new Error('boom'));
      await quitNow;
      expect(calls).toEqual(['quit']);
    });
  });
});
