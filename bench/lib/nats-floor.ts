/**
 * The floor of studio mode's own engine: bare JetStream Object Store puts and gets with the same NATS client
 * Tally uses (`@nats-io/transport-node`, `@nats-io/obj`), the same server, bucket and chunk size, and nothing of
 * Tally around them (no claims, no ledger, no announcement, no retries). Runs alone in its own Node process
 * (bundled by bench/lib/child.ts), so its CPU and memory are its own. Usage:
 * `node nats-floor.mjs '<json FloorJob>'`; prints one JSON line, a `FloorResult`.
 *
 * - `put`: `count` puts of `file` under `<name>-<i>`, `parallel` at a time, each from a file stream;
 * - `get`: one get of `name` into `out`: the object's chunks written in order to the file, then an fsync of the
 *   file (the member's durability; the client itself checks the object's digest).
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { connect } from '@nats-io/transport-node';
import { Objm, StorageType, setSha256Backend } from '@nats-io/obj';
import { DEFAULT_RETENTION_MS, OBJECT_BUCKET } from '../../electron/core/studio/team.js';

export interface FloorJob {
  op: 'put' | 'get';
  /** nats://host:port */
  server: string;
  name: string;
  /** put: the file to store. */
  file?: string;
  /** put: how many objects (of the same bytes), and how many at once. */
  count?: number;
  parallel?: number;
  /** get: where to write. */
  out?: string;
}

export interface FloorResult {
  ms: number;
  /** User + system CPU of this process over the span, in seconds. */
  cpu: number;
  bytes: number;
  peakRssMb: number;
}

/** The chunk size studio mode's store puts with (store.ts). */
const CHUNK_BYTES = 512 * 1024;

const job = JSON.parse(process.argv[2] ?? '{}') as FloorJob;
// The library's own option for Node's hash, as studio mode sets it (its default is pure JavaScript).
setSha256Backend('native');
const nc = await connect({ servers: job.server.replace('nats://', '') });
const os = await new Objm(nc).create(OBJECT_BUCKET, {
  storage: StorageType.File,
  ttl: DEFAULT_RETENTION_MS * 1_000_000,
});
const cpu = process.cpuUsage();
const started = performance.now();
let bytes = 0;
if (job.op === 'put') {
  const count = job.count ?? 1;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const stream = Readable.toWeb(createReadStream(job.file!, { highWaterMark: 2 * CHUNK_BYTES }));
      const info = await os.put(
        { name: count === 1 ? job.name : `${job.name}-${i}`, options: { max_chunk_size: CHUNK_BYTES } },
        stream as ReadableStream<Uint8Array>,
      );
      bytes += info.size;
    }
  };
  await Promise.all(Array.from({ length: Math.min(count, job.parallel ?? 1) }, worker));
} else {
  const result = await os.get(job.name);
  if (!result) throw new Error(`${job.name} is not in the object store`);
  const file = await open(job.out!, 'w');
  try {
    for await (const chunk of result.data) {
      for (let off = 0; off < chunk.length;) {
        off += (await file.write(chunk, off, chunk.length - off, bytes + off)).bytesWritten;
      }
      bytes += chunk.length;
    }
    const problem = await result.error;
    if (problem) throw problem;
    await file.sync();
  } finally {
    await file.close();
  }
}
const ms = performance.now() - started;
const used = process.cpuUsage(cpu);
await nc.close();
const result: FloorResult = {
  ms,
  cpu: (used.user + used.system) / 1e6,
  bytes,
  peakRssMb: process.resourceUsage().maxRSS / 1024,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
