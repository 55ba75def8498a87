import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { getSha256Backend } from '@nats-io/obj';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsServer } from '../../../tests/support/nats-server.js';
import { NatsTeamStore, StoreVerifyError, clipPiecesAllocated, digestHex, filePieces, natsDigest } from './store.js';

describe('NatsTeamStore', () => {
  // The Object Store's default SHA-256 is pure JavaScript: 42 % of a team receiver's CPU in a burst (issue 22).
  it("has the Object Store hash with Node's SHA-256", () => {
    new NatsTeamStore({} as NatsConnection, { retentionMs: 60_000 });
    expect(getSha256Backend()).toBe('native');
  });

  it("reads the store's digest back as the hex sha256 it was made from", () => {
    const sha = createHash('sha256').update('tally').digest('hex');
    expect(digestHex(natsDigest(sha))).toBe(sha);
    expect(digestHex('SHA-512=abc')).toBeNull();
  });
});

describe('NatsTeamStore.put on a real server', () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let dir: string;
  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connect({ servers: server.url });
    dir = await mkdtemp(join(tmpdir(), 'tally-store-'));
  });
  afterAll(async () => {
    await nc?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const readBack = async (store: NatsTeamStore, name: string): Promise<Buffer> => {
    const parts: Uint8Array[] = [];
    const ref = { kind: 'nats' as const, bucket: 'tally-studio', name };
    for await (const piece of store.read(ref, 0, null, new AbortController().signal)) parts.push(piece.data);
    return Buffer.concat(parts);
  };

  // The file is read in pieces of two chunks and the store's own digest is the one announced (issue 22: the
  // file was hashed twice on the way): every size around the piece and chunk edges comes back byte for byte,
  // with the sha256 of the file.
  it.each([0, 1, 512 * 1024, 1024 * 1024, 1024 * 1024 + 1, 3 * 1024 * 1024 + 12_345])(
    'puts a %i-byte file whole, with its sha256',
    async (size) => {
      const store = new NatsTeamStore(nc, { retentionMs: 60 * 60_000 });
      const bytes = randomBytes(size);
      const path = join(dir, `f-${size}.mp4`);
      await writeFile(path, bytes);
      const put = await store.put({ identity: `rec-${size}`, path, bytes: size });
      expect(put.bytes).toBe(size);
      expect(put.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect((await readBack(store, `rec-${size}`)).equals(bytes)).toBe(true);
    },
  );

  // A first claim puts without reading what is there (issue 22: a round trip per recording); an object there
  // after all (a claim that expired before its object) is found by the server's refusal, never overwritten
  // blindly.
  it('puts a first-claimed recording over an object already there the careful way', async () => {
    const store = new NatsTeamStore(nc, { retentionMs: 60 * 60_000 });
    const first = randomBytes(700_000);
    const path = join(dir, 'again.mp4');
    await writeFile(path, first);
    const put = await store.put({ identity: 'rec-again', path, bytes: first.length, fresh: true });
    // The same bytes again: kept as they are.
    const again = await store.put({ identity: 'rec-again', path, bytes: first.length, fresh: true });
    expect(again.sha256).toBe(put.sha256);
    // Other bytes under the same key: they replace the object, whole.
    const other = randomBytes(900_000);
    await writeFile(path, other);
    const replaced = await store.put({ identity: 'rec-again', path, bytes: other.length, fresh: true });
    expect(replaced.sha256).toBe(createHash('sha256').update(other).digest('hex'));
    expect((await readBack(store, 'rec-again')).equals(other)).toBe(true);
  });

  // A burst of clips read each into a new 1 MiB piece, left to the collector; a piece now serves the next put
  // once the server acknowledged the one before, and each recording still goes in whole with its own bytes.
  it('reuses a clip piece for the next put, each recording stored with its own bytes', async () => {
    const store = new NatsTeamStore(nc, { retentionMs: 60 * 60_000 });
    const before = clipPiecesAllocated();
    const files = Array.from({ length: 12 }, (_, i) => randomBytes(300_000 + i * 60_000));
    for (const [i, bytes] of files.entries()) {
      const path = join(dir, `clip-${i}.mp4`);
      await writeFile(path, bytes);
      const put = await store.put({ identity: `rec-clip-${i}`, path, bytes: bytes.length, fresh: true });
      expect(put.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
    expect(clipPiecesAllocated() - before).toBeLessThanOrEqual(1);
    for (const [i, bytes] of files.entries()) expect((await readBack(store, `rec-clip-${i}`)).equals(bytes)).toBe(true);
  });

  it('refuses a file that is no longer the size that was saved', async () => {
    const store = new NatsTeamStore(nc, { retentionMs: 60 * 60_000 });
    const path = join(dir, 'grown.mp4');
    await writeFile(path, randomBytes(700_000));
    await expect(store.put({ identity: 'rec-grown', path, bytes: 600_000 })).rejects.toThrow(StoreVerifyError);
  });
});

describe('the file pieces a put sends', () => {
  // The store sends a piece's chunks one after the other, each waiting for the server's answer; the next piece
  // read only when asked added a trip through the thread pool per MiB during which nothing went out (issue 34:
  // a 1 GiB publish at 0.36x a bare put). The next piece is read while one goes out, in order, and the bytes
  // are the file's.
  it('reads the next piece while one goes out, and hands over the whole file in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-pieces-'));
    const bytes = randomBytes(3 * 1024 * 1024 + 777);
    const path = join(dir, 'big.mp4');
    await writeFile(path, bytes);
    const file = await open(path, 'r');
    try {
      const reads: number[] = [];
      const counted = {
        read: (buffer: Buffer, offset: number, length: number, position: number) => {
          reads.push(position);
          return file.read(buffer, offset, length, position);
        },
      } as Pick<typeof file, 'read'>;
      const { stream, read } = filePieces(counted, bytes.length);
      const reader = stream.getReader();
      const parts: Uint8Array[] = [];
      const first = await reader.read();
      parts.push(Buffer.from(first.value!));
      expect(reads).toEqual([0, 1024 * 1024]); // the second piece asked for before the first was taken
      for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(Buffer.from(next.value));
      expect(Buffer.concat(parts).equals(bytes)).toBe(true);
      expect(read()).toBe(bytes.length);
      // In order, each where the last ended, then the one byte past the end that finds it.
      expect(reads).toEqual([0, 1, 2, 3].map((n) => n * 1024 * 1024).concat(bytes.length));
    } finally {
      await file.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
