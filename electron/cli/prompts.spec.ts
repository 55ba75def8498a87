/**
 * The stdin readers of the `tally` prompts: one line, or all of it within a bound; a cancelled command or a failed
 * stdin ends them, and none leaves a listener on stdin behind.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readAll, readLine } from './prompts.js';

const listeners = (stdin: PassThrough) =>
  ['data', 'end', 'error'].reduce((n, event) => n + stdin.listenerCount(event), 0);

describe('readLine', () => {
  it('gives the first line without its break, across chunks, and the rest of a last line at the end', async () => {
    const stdin = new PassThrough();
    const line = readLine({ stdin, signal: new AbortController().signal });
    stdin.write('svc-');
    stdin.write('1\r\nnext line\n');
    expect(await line).toBe('svc-1');
    expect(listeners(stdin)).toBe(0);

    const last = new PassThrough();
    last.end('no break');
    expect(await readLine({ stdin: last, signal: new AbortController().signal })).toBe('no break');
    const empty = new PassThrough();
    empty.end();
    expect(await readLine({ stdin: empty, signal: new AbortController().signal })).toBeNull();
  });

  it('ends with an AbortError when the command is cancelled, and on a stdin error', async () => {
    const stdin = new PassThrough();
    const abort = new AbortController();
    const line = readLine({ stdin, signal: abort.signal });
    abort.abort();
    await expect(line).rejects.toMatchObject({ name: 'AbortError' });
    expect(listeners(stdin)).toBe(0);

    const failing = new PassThrough();
    const failed = readLine({ stdin: failing, signal: new AbortController().signal });
    failing.destroy(new Error('EIO'));
    await expect(failed).rejects.toThrow('EIO');
  });
});

describe('readAll', () => {
  it('reads everything as UTF-8 and refuses more than it may hold', async () => {
    const stdin = new PassThrough();
    const all = readAll({ stdin, signal: new AbortController().signal });
    stdin.write(Buffer.from('sécr'));
    stdin.end('et\n');
    expect(await all).toBe('sécret\n');
    expect(listeners(stdin)).toBe(0);

    const big = new PassThrough();
    const refused = readAll({ stdin: big, signal: new AbortController().signal }, 8);
    big.write('123456789');
    await expect(refused).rejects.toThrow('stdin is too large for a secret.');
    expect(listeners(big)).toBe(0);
  });
});
