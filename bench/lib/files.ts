/**
 * Test files for the download benches: pseudo-random content (nothing compresses, nothing dedupes) with its
 * SHA-256 computed while writing, and a streaming SHA-256 to prove a downloaded copy is byte-identical.
 */
import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';

const CHUNK = 4 << 20;

/** Writes `bytes` pseudo-random bytes to `file`; resolves with their SHA-256 (hex). */
export async function makeRandomFile(file: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const handle = await open(file, 'w');
  try {
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (let written = 0; written < bytes;) {
      const n = Math.min(CHUNK, bytes - written);
      randomFillSync(buffer, 0, n);
      const piece = buffer.subarray(0, n);
      hash.update(piece);
      for (let off = 0; off < n;) off += (await handle.write(piece, off, n - off)).bytesWritten;
      written += n;
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/** SHA-256 (hex) of a file, streamed. */
export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file, { highWaterMark: 1 << 20 })
      .on('data', (chunk) => hash.update(chunk))
      .once('error', reject)
      .once('end', () => resolve(hash.digest('hex')));
  });
}

/** Removes files (and any download part/sidecar left beside them); missing files are fine. */
export async function removeAll(...files: string[]): Promise<void> {
  await Promise.all(
    files.flatMap((f) => [f, `${f}.part`, `${f}.part.json`, `${f}.aria2`].map((p) => rm(p, { force: true }))),
  );
}
