/**
 * The S3 side of the team store, in a module of its own: the AWS SDK (about 15 MB of RSS) is loaded only by a
 * receiver started with `--store s3://…` and by a member once an announcement names a bucket.
 */
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ConfigError } from '../errors.js';
import type { StoredRef } from './announcement.js';
import {
  GoneError,
  StaleResumeError,
  StoreVerifyError,
  hashFile,
  hashingFileStream,
  s3Problem,
  type PutInput,
  type PutResult,
  type ReadPiece,
  type S3StoreOptions,
  type TeamStore,
} from './store.js';

/** An S3-compatible bucket; keys are `<prefix>/<identity>`. */
export class S3TeamStore implements TeamStore {
  readonly kind = 's3' as const;
  readonly #client: S3Client;
  readonly #opts: S3StoreOptions;

  constructor(opts: S3StoreOptions) {
    this.#opts = opts;
    this.#client = new S3Client({
      region: opts.region ?? 'us-east-1',
      ...(opts.endpoint ? { endpoint: opts.endpoint, forcePathStyle: true } : {}),
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      // Plain checksums only where S3 requires them: S3-compatible servers differ in the newer ones.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  keyOf(identity: string): string {
    return this.#opts.prefix ? `${this.#opts.prefix}/${identity}` : identity;
  }

  async put(input: PutInput): Promise<PutResult> {
    try {
      return await this.#put(input);
    } catch (error) {
      throw this.#problem(error, this.#opts.bucket);
    }
  }

  #problem(error: unknown, bucket: string): unknown {
    return s3Problem(error, bucket, this.#opts.endpoint, this.#opts.region ?? 'us-east-1', this.#opts.profile ?? null);
  }

  /**
   * Aborts the unfinished multipart uploads under the prefix whose recording `mine` says is this receiver's to put
   * (its claim, or nobody's): a crash of the server or of Tally mid-upload leaves its parts in the bucket, billed and
   * invisible, until someone aborts them (docs/studio.md also suggests a lifecycle rule). Answers how many went.
   */
  async abortUnfinished(mine: (identity: string) => boolean | Promise<boolean>): Promise<number> {
    try {
      return await this.#abortUnfinished(mine);
    } catch (error) {
      throw this.#problem(error, this.#opts.bucket);
    }
  }

  async #abortUnfinished(mine: (identity: string) => boolean | Promise<boolean>): Promise<number> {
    const prefix = this.#opts.prefix ? `${this.#opts.prefix}/` : '';
    let aborted = 0;
    for (const upload of await this.#unfinished(prefix)) {
      const identity = upload.key.slice(prefix.length);
      if (identity.includes('/') || !(await mine(identity))) continue;
      aborted += await this.#abort(upload.key, upload.uploadId);
    }
    return aborted;
  }

  /** The unfinished multipart uploads whose keys start with `prefix`, every page of them. */
  async #unfinished(prefix: string): Promise<{ key: string; uploadId: string }[]> {
    const found: { key: string; uploadId: string }[] = [];
    let markers: { KeyMarker?: string; UploadIdMarker?: string } = {};
    for (;;) {
      const page = await this.#client.send(
        new ListMultipartUploadsCommand({ Bucket: this.#opts.bucket, Prefix: prefix, ...markers }),
      );
      for (const u of page.Uploads ?? []) if (u.Key && u.UploadId) found.push({ key: u.Key, uploadId: u.UploadId });
      if (!page.IsTruncated) return found;
      markers = { KeyMarker: page.NextKeyMarker, UploadIdMarker: page.NextUploadIdMarker };
    }
  }

  /** 1 when the upload was aborted, 0 when it was already gone (finished or aborted by someone else). */
  async #abort(key: string, uploadId: string): Promise<number> {
    try {
      await this.#client.send(
        new AbortMultipartUploadCommand({ Bucket: this.#opts.bucket, Key: key, UploadId: uploadId }),
      );
      return 1;
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchUpload') return 0;
      throw error;
    }
  }

  async #put(input: PutInput): Promise<PutResult> {
    const key = this.keyOf(input.identity);
    const ref: StoredRef = { kind: 's3', bucket: this.#opts.bucket, key };
    // A put tried again (the claim was ours already) first aborts what an earlier attempt left: the server or the
    // connection died mid-upload, and the SDK's own abort could not reach it then.
    if (!input.fresh) {
      for (const upload of await this.#unfinished(key)) {
        if (upload.key === key) await this.#abort(key, upload.uploadId);
      }
    }
    const head = await this.#head(key);
    if (head && head.bytes === input.bytes && head.sha256) {
      const local = await hashFile(input.path);
      if (local.sha256 === head.sha256) return { ref, ...local };
    }
    // The sha256 goes into the object's metadata, so it is known before the upload starts; the bytes are
    // hashed again on their way out, so a file that changed in between is caught.
    const pre = await hashFile(input.path);
    const { stream, result } = hashingFileStream(input.path);
    const upload = new Upload({
      client: this.#client,
      params: {
        Bucket: this.#opts.bucket,
        Key: key,
        Body: stream,
        ContentType: input.contentType ?? 'application/octet-stream',
        Metadata: { sha256: pre.sha256 },
      },
      partSize: 16 * 1024 * 1024,
      queueSize: 2,
    });
    await upload.done();
    const sent = result();
    const stored = await this.#head(key);
    if (sent.sha256 !== pre.sha256 || sent.bytes !== input.bytes || stored?.bytes !== sent.bytes) {
      throw new StoreVerifyError(
        `The bucket holds ${stored?.bytes ?? 'nothing'} bytes for ${key}, ${sent.bytes} were sent from a ${input.bytes}-byte file.`,
      );
    }
    return { ref, ...sent };
  }

  async #head(key: string): Promise<{ bytes: number; sha256: string | null; etag: string } | null> {
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#opts.bucket, Key: key }));
      return { bytes: head.ContentLength ?? -1, sha256: head.Metadata?.sha256 ?? null, etag: head.ETag ?? '' };
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404 || (error as Error).name === 'NotFound') return null;
      throw error;
    }
  }

  async *read(ref: StoredRef, offset: number, resume: string | null, signal: AbortSignal): AsyncIterable<ReadPiece> {
    if (ref.kind !== 's3') throw new ConfigError('This recording is on the team server, not in an S3 bucket.');
    const res = await this.#client
      .send(
        new GetObjectCommand({
          Bucket: ref.bucket,
          Key: ref.key,
          ...(offset > 0 ? { Range: `bytes=${offset}-`, ...(resume ? { IfMatch: resume } : {}) } : {}),
        }),
        { abortSignal: signal },
      )
      .catch((error: unknown) => {
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status === 412) throw new StaleResumeError(`${ref.key} was replaced in the bucket.`);
        if (status === 404) throw new GoneError(`${ref.key} is no longer in the bucket.`);
        throw this.#problem(error, ref.bucket);
      });
    const etag = res.ETag ?? '';
    if (offset > 0 && resume && etag !== resume) throw new StaleResumeError(`${ref.key} was replaced in the bucket.`);
    const body = res.Body as Readable | undefined;
    if (!body) return;
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      yield { data: chunk, resume: etag };
    }
  }
}
