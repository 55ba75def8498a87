/**
 * Uploads in the disk budget (issue 32): a claim never reaches into the journal's floor nor into what running
 * downloads reserved, a refusal is remembered for the health with what the whole upload needed, and it is
 * cleared once the disk has room for that upload again (or an upload is saved).
 */
import { expect, it } from 'vitest';
import { DiskBudget } from './disk-budget.js';

const MiB = 1024 * 1024;

function budget(freeMiB: { value: number }): DiskBudget {
  return new DiskBudget({
    stats: async () => ({ bavail: freeMiB.value, bsize: MiB, blocks: 1024 }),
    floorBytes: 2 * MiB,
  });
}

it('claims beside the downloads and above the floor, and remembers a refusal until the disk has room', async () => {
  const free = { value: 20 };
  const b = budget(free);
  // A download reserved 8 MiB: 20 - 2 (floor) - 8 leaves 10 MiB for uploads.
  expect(await b.reserve('download', '/rec', 8 * MiB)).toBeNull();
  expect(await b.claim('upload:a', '/rec', 6 * MiB)).toBeNull();
  // A chunked upload claiming step by step: the next step no longer fits.
  expect(await b.claim('upload:a', '/rec', 6 * MiB)).toEqual({ needed: 6 * MiB, free: 4 * MiB, floor: 2 * MiB });
  expect(b.status?.uploadsRefused).toEqual({ neededBytes: 12 * MiB, freeBytes: 4 * MiB });
  // Its own claim given back is not room enough for the whole of it.
  b.release('upload:a');
  await b.recheckUploads('/rec');
  expect(b.status?.uploadsRefused).toEqual({ neededBytes: 12 * MiB, freeBytes: 4 * MiB });
  // Space freed by someone else: room for 12 MiB beside the download again.
  free.value = 30;
  await b.recheckUploads('/rec');
  expect(b.status?.uploadsRefused).toBeNull();
});

it('clears the refusal when an upload is saved', async () => {
  const b = budget({ value: 4 });
  expect(await b.claim('upload:big', '/rec', 10 * MiB)).not.toBeNull();
  expect(b.status?.uploadsRefused?.neededBytes).toBe(10 * MiB);
  b.uploadSaved();
  expect(b.status?.uploadsRefused).toBeNull();
});
