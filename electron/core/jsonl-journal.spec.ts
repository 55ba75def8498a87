/**
 * The JSON-lines appender's group commit, on a real file: appends that arrive together share one write and one
 * fdatasync, each still resolves only once its line is durable, and every line is read back in order.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonLinesAppender, openJsonLines } from './jsonl-journal.js';

let dir = '';
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('JsonLinesAppender', () => {
  it('writes appends that arrive together with one fdatasync, in order, each durable when it resolves', async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-jsonl-'));
    let syncs = 0;
    const opened = await openJsonLines(
      dir,
      'ledger.jsonl',
      () => true,
      (raw: FileHandle) => {
        const datasync = raw.datasync.bind(raw);
        return Object.assign(raw, {
          datasync: async () => {
            syncs += 1;
            await datasync();
          },
        });
      },
    );
    const appender = new JsonLinesAppender(opened, 'test ledger');
    const durable: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => appender.append({ i }, () => durable.push(i))));
    expect(durable).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // The first goes out alone; the 19 that queued behind it share the next write.
    expect(syncs).toBeLessThanOrEqual(2);
    await appender.close();
    const lines = (await readFile(join(dir, 'ledger.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual(durable);
  });
});
