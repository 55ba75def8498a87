/**
 * Which Tally holds a port, from a process's command line as /proc gives it: the packaged tray app (its executable
 * is named tally), any `tally <command>` run by Node, and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { tallyFace } from './port-holder.js';

describe('tallyFace', () => {
  it('names the packaged tray app and each tally command, whatever the path to them', () => {
    expect(tallyFace('tally', ['/opt/Tally/tally', '--no-sandbox'])).toBe('the tray app');
    expect(tallyFace('node', ['/usr/bin/node', '/usr/local/bin/tally', 'listen', '--ndjson'])).toBe('tally listen');
    expect(tallyFace('node', ['node', '/home/me/tally/bin/tally.js', 'serve'])).toBe('tally serve');
    expect(tallyFace('node', ['node', 'bin/tally.js'])).toBe('tally');
  });

  it('is none for any other program, Node running something else included', () => {
    expect(tallyFace('node', ['node', '/srv/app/server.js', 'listen'])).toBeUndefined();
    expect(tallyFace('nginx', ['nginx: master process'])).toBeUndefined();
    expect(tallyFace('node', [])).toBeUndefined();
  });
});
