/**
 * The team store holds the bytes of every team recording under a fixed key (the recording's identity): the
 * JetStream Object Store on the team's NATS server by default, or an S3-compatible bucket. Both sides go
 * through `TeamStore`: the receiver `put`s a saved file and gets back a verified reference, a follower `read`s
 * from an offset, so an interrupted mirror resumes instead of starting over.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import type { NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Objm, StorageType, setSha256Backend, type ObjectStore } from '@nats-io/obj';
import { note } from '../notes.js';
import { ConfigError } from '../errors.js';
import { registerSecret } from '../redact.js';
import { holdBuffers } from '../download/reclaim.js';
import type { StoredRef } from './announcement.js';
import { OBJECT_BUCKET, serverNow } from './team.js';
import { systemClock } from '../time.js';

/** What the receiver knows of a saved file. */
export interface PutInput {
  identity: string;
  path: string;
  bytes: number;
  contentType?: string;
  /**
   * No receiver had claimed the recording before (the claim was just created): its object is almost surely
   * not in the store, so it is put without reading what is there first (a round trip per recording); if one
   * is there after all, the put is refused by the server and done the careful way.
   */
  fresh?: boolean;
}

/** A stored, verified copy: where it is, and the sha256 of exactly the bytes that went in. */
export interface PutResult {
  ref: StoredRef;
  bytes: number;
  sha256: string;
}

/** A piece of a recording and how to continue right after it (opaque, kept in the follower's sidecar). */
export interface ReadPiece {
  data: Uint8Array;
  resume: string;
  /** Frees the piece's memory at once; the caller calls it once the bytes are written and hashed (optional). */
  release?: () => void;
}

type Detachable = ArrayBuffer & { transfer(length: number): ArrayBuffer; detached: boolean };

/**
 * A chunk the NATS client assembled from several socket reads sits alone at the start of a buffer the client
 * grew for it (about 1 MB for 512 KiB; nothing else refers to it once the message is handed over). Detaching
 * that buffer once the chunk is in the file frees it at once instead of at the next collection. A chunk read
 * whole from one socket read is a view behind the message's header line in that read (never at offset 0),
 * shared with the messages around it: it is left to the collector.
 */
function releaseChunk(data: Uint8Array): void {
  const whole = data.buffer as Detachable;
  if (data.byteOffset === 0 && whole instanceof ArrayBuffer && !whole.detached) whole.transfer(0);
}

export interface TeamStore {
  readonly kind: 'nats' | 's3';
  put(input: PutInput): Promise<PutResult>;
  /**
   * Bytes from `offset` on. `resume` is the token of the piece that ended at `offset` (null at 0); a token
   * that no longer matches the stored object (it was replaced) makes the read throw `StaleResumeError`.
   */
  read(ref: StoredRef, offset: number, resume: string | null, signal: AbortSignal): AsyncIterable<ReadPiece>;
}

/** The stored object changed since the part file was started: start it over. */
export class StaleResumeError extends Error {
  override name = 'StaleResumeError';
}

/** The recording is no longer in the team store (retention ended, or it was deleted): nothing to resume. */
export class GoneError extends StaleResumeError {
  override name = 'GoneError';
}

/**
 * The team store has the recording's name but not all of its bytes (its chunks were purged or lost): waiting does not
 * bring them back. The member asks the receivers to put it again (or to say it is gone), instead of retrying for ever.
 */
export class UnreadableError extends Error {
  override name = 'UnreadableError';
}

/** Where a member asks the studio's receivers to put an unreadable recording again: `{ "identity": "…" }`. */
export const UNREADABLE_SUBJECT = 'tally.studio.unreadable';

/** A verification failure on the receiver's side: the store does not hold what was sent. */
export class StoreVerifyError extends Error {
  override name = 'StoreVerifyError';
}

/** The file's bytes as a stream that also hashes and counts them. */
export function hashingFileStream(path: string): { stream: Readable; result: () => { sha256: string; bytes: number } } {
  const hash = createHash('sha256');
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const source = createReadStream(path, { highWaterMark: 1 << 20 });
  source.once('error', (error) => counter.destroy(error));
  return { stream: source.pipe(counter), result: () => ({ sha256: hash.digest('hex'), bytes }) };
}

/** The Object Store's digest form of a hex sha256: `SHA-256=` + padded base64url. */
export function natsDigest(sha256Hex: string): string {
  const b64 = Buffer.from(sha256Hex, 'hex').toString('base64');
  return `SHA-256=${b64.replace(/\+/g, '-').replace(/\//g, '_')}`;
}

/** Chunks of 512 KiB: under the server's default 1 MB message limit, and few enough acks per gigabyte. */
const CHUNK_BYTES = 512 * 1024;

/**
 * The file is read in pieces of two chunks: a recording of up to 1 MiB is one read, and the Object Store
 * sends its chunks as views of that piece without copying them (it copies only to join a piece's rest with
 * the next piece).
 */
const PIECE_BYTES = 2 * CHUNK_BYTES;

/**
 * Array-buffer memory a put keeps alive while it runs: the piece being sent, the next one read meanwhile and the
 * NATS client's copy of the chunk being written (declared to the downloads' reclaim, which otherwise forces
 * collections for it).
 */
const PUT_HOLDS_BYTES = 2 * PIECE_BYTES + 2 * CHUNK_BYTES;

/**
 * Pieces of a whole recording of up to PIECE_BYTES (a clip: one read), kept for the next puts instead of a new
 * 1 MiB buffer per recording, which a burst of clips left to the collector (issue 22). A piece goes back only
 * after a put the server acknowledged whole, so nothing of it can still be waiting to be sent; at most as many
 * as the puts that run at once are kept.
 */
const sparePieces: { piece: Buffer; release: () => void }[] = [];
const SPARE_PIECES = 8;

let newPieces = 0;

/** A spare piece, or a new one; a spare is no longer held on purpose once taken (the put declares its own). */
function takePiece(): Buffer {
  const spare = sparePieces.pop();
  if (spare) {
    spare.release();
    return spare.piece;
  }
  newPieces += 1;
  return Buffer.allocUnsafeSlow(PIECE_BYTES);
}

/** Clip pieces allocated so far (tests). */
export function clipPiecesAllocated(): number {
  return newPieces;
}

/**
 * The file's bytes for the Object Store, one piece per read the store asks for, and the next piece read while
 * this one goes out (no Node stream and web-stream adapter in between). The store sends a piece's chunks one
 * after the other, each waiting for the server's answer; reading the next piece only when asked added a trip
 * through the thread pool per piece, during which nothing was sent (issue 34: a 1 GiB publish at 0.36x a bare
 * put of the same file). After the expected bytes, one more byte is asked for: a file that grew since it was
 * saved shows in `read()`, the bytes that went out, and the put is refused. `done(true)` after an acknowledged
 * put gives a clip's piece back for the next one.
 */
export function filePieces(
  file: Pick<FileHandle, 'read'>,
  expected: number,
): { stream: ReadableStream<Uint8Array>; read: () => number; done: (acknowledged: boolean) => void } {
  let position = 0;
  let ended = false;
  const whole = expected <= PIECE_BYTES ? takePiece() : null;
  /** The next piece from `position` (reads are sequential: each starts where the last one ended), or null at the end. */
  const readPiece = async (): Promise<Buffer | null> => {
    if (ended || position > expected) return null;
    // Sized to what is left; the read past the end that finds it needs one byte.
    const size = position < expected ? Math.min(PIECE_BYTES, expected - position) : 1;
    const piece = position === 0 && whole ? whole : Buffer.allocUnsafeSlow(size);
    const { bytesRead } = await file.read(piece, 0, size, position);
    if (bytesRead === 0) {
      ended = true;
      return null;
    }
    position += bytesRead;
    return piece.subarray(0, bytesRead);
  };
  let ahead: Promise<Buffer | null> | null = null;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const piece = await (ahead ?? readPiece());
        if (!piece) return controller.close();
        ahead = readPiece();
        ahead.catch(() => undefined); // its failure is the next pull's
        controller.enqueue(piece);
      },
    },
    { highWaterMark: 0 },
  );
  const done = (acknowledged: boolean) => {
    // Kept alive on purpose: declared, so the downloads' reclaim forces no collection for it.
    if (whole && acknowledged && sparePieces.length < SPARE_PIECES) {
      sparePieces.push({ piece: whole, release: holdBuffers(PIECE_BYTES, true) });
    }
  };
  return { stream, read: () => position, done };
}

/** The hex sha256 of an Object Store digest (`SHA-256=` + padded base64url), or null for another form. */
export function digestHex(digest: string): string | null {
  const match = /^SHA-256=([A-Za-z0-9_-]{43}=)$/.exec(digest);
  return match ? Buffer.from(match[1]!, 'base64url').toString('hex') : null;
}

/**
 * A read asks for one chunk at a time, the next one as soon as the last has arrived (`read`). Each chunk arrives
 * as a view into the NATS client's own buffer for it (about 1 MB for 512 KiB, grown as the socket's 64 KiB reads
 * come in): batches of 8 held 8-16 MB and their buffers outlived young collections, so a member mirroring 1 GiB
 * peaked at 160 MB (issue 22: under 100 MB). One at a time, two chunks are in memory (the one being written, the
 * next arriving), with the server sending while the member writes.
 *
 * What a reader of the team server should know to reclaim the pieces it wrote (mirror-file.ts): a chunk lives
 * from its arrival until it is written, within `liveBytes` written (the one written before it, its own, and one
 * more); the chunks alive at once hold about `inFlightBytes` of buffers.
 */
export const NATS_READ_SPAN = {
  liveBytes: 3 * CHUNK_BYTES,
  inFlightBytes: 3 * 1024 * 1024,
} as const;

/**
 * How long a direct get of a chunk may take before the stream's leader is asked instead, and how long a store then
 * asks the leader alone (on the monotonic clock). A direct get goes to any server holding a replica, and the others
 * kept sending them to a hung one: every direct get of a member timed out for the whole of a node's 60-second hang
 * while the leader answered in milliseconds (tests/studio-hung-server.spec.ts).
 */
const DIRECT_TIMEOUT_MS = 1_500;
const LEADER_ONLY_MS = 30_000;

/** Rejects with the signal's reason once it is aborted; otherwise settles as `p` does. */
function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The JetStream Object Store bucket `tally-studio`. */
export class NatsTeamStore implements TeamStore {
  readonly kind = 'nats' as const;
  readonly #nc: NatsConnection;
  readonly #retentionMs: number;
  #os: Promise<ObjectStore> | null = null;
  readonly #readable = new Map<string, Promise<ObjectStore>>();

  readonly #replicas: number | undefined;

  constructor(nc: NatsConnection, opts: { retentionMs: number; replicas?: number | undefined }) {
    // The Object Store hashes every object it stores (its SHA-256 digest) with pure JavaScript by default, the
    // browser-safe choice: 42 % of a team receiver's CPU in a burst of 1 MiB recordings, and its garbage 12 %
    // more (issue 22: the receiver 4-5x slower than a plain listen). Node's own hash is the library's
    // `native` backend (process-wide, and the same digest).
    setSha256Backend('native');
    this.#nc = nc;
    this.#retentionMs = opts.retentionMs;
    this.#replicas = opts.replicas;
  }

  #bucket(): Promise<ObjectStore> {
    this.#os ??= new Objm(this.#nc)
      .create(OBJECT_BUCKET, {
        storage: StorageType.File,
        ttl: this.#retentionMs * 1_000_000,
        ...(this.#replicas ? { replicas: this.#replicas } : {}),
      })
      .catch((error: unknown) => {
        this.#os = null;
        throw error;
      });
    return this.#os;
  }

  /**
   * A bucket to read from, opened once per store (opening it asks the server twice: a member paid both for
   * every recording it mirrored; issue 22). A failed open is asked again next time.
   */
  #opened(bucket: string): Promise<ObjectStore> {
    let os = this.#readable.get(bucket);
    if (!os) {
      os = new Objm(this.#nc).open(bucket);
      this.#readable.set(bucket, os);
      os.catch(() => this.#readable.delete(bucket));
    }
    return os;
  }

  readonly #managers = new Map<number, Promise<JetStreamManager>>();
  /** Until when (monotonic) chunks are read from the stream's leader alone: a direct get went unanswered. */
  #leaderOnlyUntil = 0;

  /** The JetStream API with its request timeout (0: the client's default), made once per store. */
  #manager(timeout = 0): Promise<JetStreamManager> {
    let jsm = this.#managers.get(timeout);
    if (!jsm) {
      // Made without asking the server first (`checkAPI`): each would be one more request per store.
      jsm = jetstreamManager(this.#nc, { checkAPI: false, ...(timeout > 0 ? { timeout } : {}) });
      this.#managers.set(timeout, jsm);
    }
    return jsm;
  }

  /** Whether the server still holds every chunk the object's name says it has (one request). */
  async #whole(object: { nuid: string; chunks: number }): Promise<boolean> {
    if (object.chunks === 0) return true;
    const subject = `$O.${OBJECT_BUCKET}.C.${object.nuid}`;
    const jsm = await jetstreamManager(this.#nc);
    const info = await jsm.streams.info(`OBJ_${OBJECT_BUCKET}`, { subjects_filter: subject });
    return (info.state.subjects?.[subject] ?? 0) === object.chunks;
  }

  /** Creates the object store now (at its replicas), rather than at the first put. */
  async open(): Promise<void> {
    await this.#bucket();
  }

  async put(input: PutInput): Promise<PutResult> {
    const os = await this.#bucket();
    const ref = { kind: 'nats', bucket: OBJECT_BUCKET, name: input.identity } as const;
    const existing = input.fresh ? null : await os.info(input.identity);
    // A repeat after a crash: the very same bytes are already there under the fixed key. The object's name
    // alone does not say so: a put whose last write (the name) reached the server while its answer was lost
    // (the node the receiver was connected to killed) times out, and the client then purges the chunks it
    // sent, leaving a name over no bytes that no member could ever read. Only a whole object is kept.
    if (existing && !existing.deleted && existing.size === input.bytes && (await this.#whole(existing))) {
      const local = await hashFile(input.path);
      if (existing.digest === natsDigest(local.sha256)) return { ref, ...local };
    }
    const file = await open(input.path, 'r');
    const release = holdBuffers(PUT_HOLDS_BYTES);
    const { stream, read, done } = filePieces(file, input.bytes);
    let acknowledged = false;
    try {
      // The object's name is written last, and only over the revision read above: of two receivers putting the
      // same recording at once (one took over the other's stale claim) one write wins, and the other's put
      // fails and purges the chunks it sent, so no chunk is left without an object.
      const info = await os
        .put({ name: input.identity, options: { max_chunk_size: CHUNK_BYTES } }, stream, {
          timeout: 30_000,
          previousRevision: existing?.revision ?? 0,
        })
        .catch((error: unknown) => {
          const there = error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence;
          if (input.fresh && there) return null; // an object was there after all (its chunks sent were purged)
          throw error;
        });
      acknowledged = true;
      if (info) {
        // The store's digest is the SHA-256 of exactly the chunks it sent (Node's hash, `setSha256Backend`):
        // the file is not hashed a second time on the way.
        const sha256 = digestHex(info.digest);
        const bytes = read();
        if (info.size !== bytes || bytes !== input.bytes || sha256 === null) {
          throw new StoreVerifyError(
            `The team store holds ${info.size} bytes for ${input.identity}, ${bytes} were sent from a ${input.bytes}-byte file.`,
          );
        }
        return { ref, bytes, sha256 };
      }
    } finally {
      done(acknowledged);
      release();
      await file.close();
    }
    return this.put({ ...input, fresh: false });
  }

  /**
   * Removes the chunks of uploads cut short by a crash (kill -9, power loss) mid-put. The client purges what a
   * failed put sent, but a killed process cannot, and no object refers to those chunks: they would hold their
   * space until the retention ends. A chunk subject is removed when no object refers to it and its newest chunk
   * arrived `olderThanMs` or longer ago (an upload in progress sends one every few milliseconds, and gives up
   * after its 30-second timeout). "Ago" is the server's: the chunk's time is the server's stamp, judged against
   * the server's clock now (`serverNow`), never this computer's, which may be minutes off (issue 30). Resolves with the number of chunks removed.
   */
  async sweepAbandonedChunks(olderThanMs: number): Promise<number> {
    const jsm = await jetstreamManager(this.#nc);
    const stream = `OBJ_${OBJECT_BUCKET}`;
    const info = await jsm.streams.info(stream, { subjects_filter: `$O.${OBJECT_BUCKET}.C.>` }).catch(() => null);
    const subjects = Object.keys(info?.state.subjects ?? {});
    if (subjects.length === 0) return 0;
    const os = await this.#bucket();
    const referenced = new Set((await os.list()).map((o) => `$O.${OBJECT_BUCKET}.C.${o.nuid}`));
    const orphans = subjects.filter((subject) => !referenced.has(subject));
    if (orphans.length === 0) return 0;
    // Asked after the list above: a chunk stamped before this moment is judged by it.
    const now = await serverNow(jsm, stream);
    let removed = 0;
    for (const subject of orphans) {
      const newest = await jsm.streams.getMessage(stream, { last_by_subj: subject });
      if (!newest || now - newest.time.getTime() < olderThanMs) continue;
      // Only up to the chunk judged (a put gives up 30 s after its last answer, so none comes after 2 minutes).
      removed += (await jsm.streams.purge(stream, { filter: subject, seq: newest.seq + 1 })).purged;
    }
    return removed;
  }

  async *read(ref: StoredRef, offset: number, resume: string | null, signal: AbortSignal): AsyncIterable<ReadPiece> {
    if (ref.kind !== 'nats') throw new ConfigError('This recording is in an S3 bucket, not on the team server.');
    const os = await this.#opened(ref.bucket);
    const info = await os.info(ref.name);
    if (!info || info.deleted) throw new GoneError(`${ref.name} is no longer in the team store.`);
    if (info.size > 0 && !(await this.#whole(info))) {
      throw new UnreadableError(`The team store has ${ref.name} by name, but not all of its bytes.`);
    }
    let startSeq = 0;
    if (offset > 0) {
      const [nuid, seq] = (resume ?? '').split(':');
      if (nuid !== info.nuid || !seq) throw new StaleResumeError(`${ref.name} was replaced in the team store.`);
      startSeq = Number(seq) + 1;
    }
    if (offset >= info.size) return;
    // Each chunk is asked for by its subject from the sequence after the last one, never through a consumer: the
    // cluster places a consumer on any server of the stream, a hung one included (it stays a peer for minutes),
    // and its creation then waits for an answer that never comes: one in three reads of a member timed out so for
    // the whole of a node's 60-second hang (tests/studio-hung-server.spec.ts). A direct get (raw bytes, answered
    // by a replica) first; the stream's leader when it does not answer in time or has not the chunk yet (a
    // replica a little behind), and the leader alone for a while after a direct get went unanswered.
    const stream = `OBJ_${ref.bucket}`;
    const subject = `$O.${ref.bucket}.C.${info.nuid}`;
    const jsm = await this.#manager();
    const chunkFrom = async (seq: number): Promise<{ data: Uint8Array; seq: number }> => {
      const query = { seq, next_by_subj: subject };
      if (systemClock.now() >= this.#leaderOnlyUntil) {
        const direct = await (
          await this.#manager(DIRECT_TIMEOUT_MS)
        ).direct
          .getMessage(stream, query)
          .catch((error: unknown) => {
            if (jetStreamTimeout(error)) this.#leaderOnlyUntil = systemClock.now() + LEADER_ONLY_MS;
            return null;
          });
        if (direct && direct.seq > 0) return { data: direct.data, seq: direct.seq };
      }
      // The server's message API takes `next_by_subj` too (nats-server 2.9), which the client's type leaves out.
      const stored = await jsm.streams.getMessage(stream, query as unknown as { seq: number });
      if (!stored) throw new UnreadableError(`The team store has ${ref.name} by name, but not all of its bytes.`);
      return { data: stored.data, seq: stored.seq };
    };
    const ask = (seq: number) => {
      const asked = chunkFrom(seq);
      asked.catch(() => undefined); // awaited below; a read ended early must not leave it unhandled
      return asked;
    };
    let at = offset;
    let next: Promise<{ data: Uint8Array; seq: number }> | null = ask(Math.max(1, startSeq));
    while (next && at < info.size && !signal.aborted) {
      const chunk: { data: Uint8Array; seq: number } = await unlessAborted(next, signal);
      at += chunk.data.length;
      // The next one is asked for as soon as this one is here: it arrives while the file takes this one.
      next = at < info.size ? ask(chunk.seq + 1) : null;
      yield { data: chunk.data, resume: `${info.nuid}:${chunk.seq}`, release: () => releaseChunk(chunk.data) };
    }
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
  }
}

/** A request that went unanswered (as opposed to one answered with an error). */
function jetStreamTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || /\btimeout\b/i.test(error.message));
}

/** `s3://bucket/prefix` → bucket and prefix (no leading or trailing slash). */
export function parseS3Url(input: string, flag = '--store'): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(input.trim());
  if (!match) throw new ConfigError(`${flag} must be "nats" or s3://BUCKET/PREFIX (got "${input}").`);
  return { bucket: match[1]!, prefix: (match[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

export interface S3StoreOptions {
  bucket: string;
  prefix: string;
  /** An S3-compatible endpoint (Ceph, MinIO...): TALLY_S3_ENDPOINT or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL. */
  endpoint?: string | null;
  region?: string | null;
  /** Explicit keys; otherwise the SDK's own chain (AWS_ACCESS_KEY_ID, profiles...). */
  credentials?: { accessKeyId: string; secretAccessKey: string } | null;
  /** AWS_PROFILE, when set: named when the SDK's chain finds no keys. */
  profile?: string | null;
}

/** S3 settings from the environment (the bucket comes from --store on the receiver, from announcements on followers). */
export function s3FromEnv(env: NodeJS.ProcessEnv): Omit<S3StoreOptions, 'bucket' | 'prefix'> {
  const endpoint = env.TALLY_S3_ENDPOINT ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL ?? null;
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  // The SDK reads AWS_SESSION_TOKEN itself: registered here all the same, as this is where S3 is set up.
  registerSecret(accessKeyId, secretAccessKey, env.AWS_SESSION_TOKEN);
  return {
    endpoint,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? null,
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : null,
    profile: env.AWS_PROFILE?.trim() || null,
  };
}

/** The bucket refused this computer's keys, or no S3 endpoint is set where one is needed: a setting must change. */
export class S3SetupError extends ConfigError {}

/**
 * What an S3 failure means for the user, as one line naming the setting to change: refused keys (403, or the
 * SDK's names for a wrong key or signature) and an unresolvable AWS host where no TALLY_S3_ENDPOINT is set (an
 * S3-compatible server's bucket looked up at AWS). Other errors pass through as they are.
 */
export function s3Problem(
  error: unknown,
  bucket: string,
  endpoint: string | null | undefined,
  region: string,
  profile: string | null = null,
): unknown {
  if (error instanceof StaleResumeError || error instanceof S3SetupError) return error;
  const e = error as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  // No keys anywhere the SDK looks ("Could not load credentials from any providers"): name what to set, once.
  if (e.name === 'CredentialsProviderError' || /could not load credentials/i.test(e.message ?? '')) {
    return new S3SetupError(profile ? note('s3NoKeysProfile', { bucket, profile }) : note('s3NoKeys', { bucket }));
  }
  const status = e.$metadata?.httpStatusCode;
  const refused = ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'Forbidden', 'InvalidToken'];
  if (status === 403 || refused.includes(e.name ?? '')) {
    // A HEAD's 403 has no body, and the SDK names it "Unknown": the status says more then.
    const reason = refused.includes(e.name ?? '') ? e.name! : `HTTP ${status ?? 403}`;
    return new S3SetupError(note('s3KeysRefused', { bucket, reason }));
  }
  const text = `${e.code ?? ''} ${e.message ?? ''}`;
  if (!endpoint && /ENOTFOUND|EAI_AGAIN|getaddrinfo/i.test(text)) {
    return new S3SetupError(note('s3NoEndpoint', { bucket, host: `${bucket}.s3.${region}.amazonaws.com` }));
  }
  return error;
}

/** sha256 and size of a file, read once. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}
