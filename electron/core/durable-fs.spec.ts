import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAll, type VectorWriter } from './durable-fs.js';

/** A real file handle that accepts at most `max` bytes per call, as a slow or interrupted write does. */
function stingy(handle: VectorWriter, max: number, calls: Array<number | null>): VectorWriter {
  return {
    writev: (buffers, position) => {
      calls.push(position ?? null);
      const joined = Buffer.concat(buffers).subarray(0, max);
      return position === undefined ? handle.writev([joined]) : handle.writev([joined], position);
    },
  };
}

describe('writeAll', () => {
  it('finishes short writes, appending or at a position', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-writeall-'));
    try {
      const file = join(dir, 'f');
      const handle = await open(file, 'w+');
      const calls: Array<number | null> = [];
      await writeAll(stingy(handle, 3, calls), [Buffer.from('hello '), Buffer.alloc(0), Buffer.from('world')]);
      expect(calls).toEqual([null, null, null, null]);
      calls.length = 0;
      await writeAll(stingy(handle, 4, calls), [Buffer.from('WORLD!')], 6);
      expect(calls).toEqual([6, 10]);
      await handle.close();
      expect(await readFile(file, 'utf8')).toBe('hello WORLD!');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails with EIO instead of spinning when nothing is written', async () => {
    const stuck: VectorWriter = { writev: async () => ({ bytesWritten: 0 }) };
    await expect(writeAll(stuck, [Buffer.from('x')])).rejects.toMatchObject({ code: 'EIO' });
  });
});
