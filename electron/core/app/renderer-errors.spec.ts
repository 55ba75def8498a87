import { describe, expect, it } from 'vitest';
import { sinkLogger } from '../logger.js';
import { RendererErrors } from './renderer-errors.js';

describe('RendererErrors', () => {
  it('logs what the page did not catch, at most 20 a minute, then how many were left out', () => {
    const lines: string[] = [];
    let now = 0;
    const errors = new RendererErrors(
      sinkLogger((level, scope, line) => lines.push(`${level} ${line}`)),
      () => now,
    );
    expect(
      errors.report({ kind: 'error', message: 'Error: boom', stack: 'Error: boom\n  at x', source: 'app.js:1:2' }),
    ).toBe(true);
    expect(lines).toEqual(['error uncaught error in the page at app.js:1:2: Error: boom', 'debug Error: boom\n  at x']);
    for (let i = 0; i < 30; i++)
      errors.report({ kind: 'unhandledrejection', message: `lost ${i}`, stack: null, source: null });
    expect(lines.filter((l) => l.startsWith('error unhandled rejection in the page: lost'))).toHaveLength(19);
    now += 60_000;
    errors.report({ kind: 'error', message: 'later', stack: null, source: null });
    expect(lines.slice(-2)).toEqual([
      'warn 11 more errors of the page were left out',
      'error uncaught error in the page: later',
    ]);
  });
});
