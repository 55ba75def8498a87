import { describe, expect, it } from 'vitest';
import { chipCount } from './chip-row.js';

describe('chipCount', () => {
  it('shows counts up to 999 as they are and more as 999+', () => {
    expect([0, 7, 999, 1000, 1234].map(chipCount)).toEqual(['0', '7', '999', '999+', '999+']);
  });
});
