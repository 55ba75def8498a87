/** English counts as the CLI and the log print them: a zero form, the singular for one, the plural for more. */
import { describe, expect, it } from 'vitest';
import { counted } from './counted.js';

describe('counted', () => {
  it('says none, one and many in proper English', () => {
    expect(counted(0, 'problem', 'problems')).toBe('no problems');
    expect(counted(1, 'problem', 'problems')).toBe('1 problem');
    expect(counted(2, 'problem', 'problems')).toBe('2 problems');
    expect(counted(0, 'attempt', 'attempts', 'no attempt yet')).toBe('no attempt yet');
  });
});
