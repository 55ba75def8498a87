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

  it('logs an unhandled rejection and carries on, shown once for all errors of the process', () => {
    const { proc, lines, shown, restarts } = setup();
    proc.emit('unhandledRejection', new Error('lost promise'));
    proc.emit('unhandledRejection', 'a plain reason');
    proc.emit('uncaughtException', new Error('later'));
    expect(lines.map((l) => l.split('\n')[0])).toEqual([
      'unhandled promise rejection: Error: lost promise',
      'unhandled promise rejection: a plain reason',
      'uncaught exception: Error: later',
    ]);
    expect(shown).toHaveLength(1);
    expect(shown[0]?.message).toContain('carries on');
    expect(restarts()).toBe(1);
  });

  it('still logs when the dialog cannot be shown', () => {
    const proc = new EventEmitter();
    const lines: string[] = [];
    installCrashHandlers({
      process: proc,
      log: (line) => lines.push(line),
      show: () => {
        throw new Error('no display');
      },
      restart: () => {},
      logFolder: '/x',
    });
    proc.emit('unhandledRejection', new Error('lost'));
    expect(lines[1]).toMatch(/^could not show the error: Error: no display/);
  });
});
