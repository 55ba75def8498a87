/**
 * Web client uploads: `POST /uploads/<uploads token>` on the webhook receiver takes a finished recording from
 * the web SDK (raw body, name in `X-FILENAME`, the way its recorder sends it) or from any other client as
 * `multipart/form-data` with one file part, and saves it under `<recordings>/<client subfolder>/`.
 *
 * Who may upload: the unguessable token in the path is the authentication. A browser page must also come from
 * an origin the producer allowed (CORS, see cors.ts): a request with a foreign `Origin` is refused before its
 * body is read. A request without `Origin` is not a cross-origin browser request (curl, a server, a native
 * app) and is accepted, because holding the token is what counts; refusing it would protect nothing, since
 * such clients can send any Origin they like.
 *
 * How it is saved: streamed to a hidden `.part` file in the target folder (memory stays flat for any size),
 * hashed on the way, fsync'd, then hard-linked to a free final name (never overwriting: `name (2).webm`...)
 * so a final name only ever appears with complete content. A dropped connection, a size cap hit mid-stream or a
 * full disk removes the part: unlike downloads, an upload cannot be resumed, so a partial file is useless.
 */
import { EventEmitter } from 'node:events';
import { mkdir, open, readdir, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { ensureFreeSpace, isNoSpaceError, type StatfsFunction } from '../download/disk.js';
import { DiskFullError, formatBytes } from '../download/errors.js';
import { resolveInside } from '../recordings/filename.js';
import type { RouteHandler, RouteInfo } from '../webhook/receiver.js';
import { checkOrigin, corsHeaders, preflightHeaders } from './cors.js';
import { extensionFor, parseMediaType, type MediaType } from './media-type.js';
import { MultipartError, multipartBoundary, readMultipartFile } from './multipart.js';
import { newUploadId, type UploadLog, type UploadRecord } from './upload-log.js';
import { syncDir } from '../durable-fs.js';
import { refuseLinkedFolder } from '../folder-check.js';
import { sendJson } from '../http-answer.js';
import { note, noteText, type Note } from '../notes.js';
import { BatchWriter, publish, type PartFile } from './part-file.js';
import { UploadClaim, type SpaceRefused, type UploadSpace } from './upload-space.js';
import { UploadSlot, UploadSlots, type UploadStallRule } from './upload-slots.js';
import { decodeHeaderFileName, defaultBaseName, parseSdkFileName, uploadBaseName } from './upload-names.js';

export { decodeHeaderFileName, parseSdkFileName, uploadBaseName } from './upload-names.js';
export type { PartFile } from './part-file.js';
export type { SpaceRefused, UploadSpace } from './upload-space.js';
export type { UploadStallRule } from './upload-slots.js';

export const UPLOADS_ROUTE = 'uploads';
export const DEFAULT_UPLOAD_SUBFOLDER = 'client';
/**
 * 2 GiB: the web SDK records Opus at 64 kbit/s (about 29 MB an hour), so this is some 70 hours of a client
 * recording. The cap only guards against a runaway sender; the disk itself is guarded by free-space checks.
 */
export const DEFAULT_UPLOAD_MAX_BYTES = 2 * 1024 ** 3;
/** Extension of a file whose media type is not a known recording type: kept anyway, never refused. */
export const UNKNOWN_TYPE_EXTENSION = '.bin';
/** Room for multipart headers and boundaries on top of the file size cap. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/**
 * Uploads in progress at once. The web SDK never resends, so a refusal loses a recording: this is sized far past
 * any studio (two uploads per client stopping at the same moment) and only keeps half of the receiver's 1,024
 * connections for webhooks. At the cap the slowest upload below the minimum rate gives way to a newcomer
 * (upload-slots.ts); only when every upload moves is the newcomer refused (503).
 */
export const DEFAULT_MAX_CONCURRENT_UPLOADS = 512;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** After a refusal mid-body, this much of the rest is read and dropped so the client can read the answer. */
const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
const DRAIN_MAX_MS = 5_000;
/** An upload closed to make room is cut off this long after its answer was sent at the latest. */
const EVICTED_ANSWER_MS = 1_000;
const PART_PREFIX = '.upload-';
const PART_SUFFIX = '.part';

export interface UploadRouteOptions {
  /** The recordings folder; uploads land in `<folder>/<subfolder>`. */
  folder: string;
  /** A single folder name (default `client`). */
  subfolder?: string;
  /** Largest accepted file in bytes (default 2 GiB). */
  maxBytes?: number;
  /** Page origins allowed to upload from a browser; read on every request so settings apply at once. */
  allowedOrigins: () => readonly string[];
  /** Durable record of finished uploads; when given, a file is acknowledged only once it is logged. */
  log?: UploadLog | null;
  /** A connection sending nothing for this long is cut off (default 60 s). */
  idleTimeoutMs?: number;
  /** See DEFAULT_MAX_CONCURRENT_UPLOADS. */
  maxConcurrent?: number;
  /** Uploads from one address at once (see upload-slots.ts DEFAULT_MAX_UPLOADS_PER_ADDRESS). */
  maxPerAddress?: number;
  /** When an upload is too slow to keep its slot (upload-slots.ts DEFAULT_UPLOAD_STALL_RULE). */
  stallRule?: Partial<UploadStallRule>;
  /** Monotonic milliseconds for the stall rule (a test seam: the default is time.ts's `systemClock.now`). */
  clock?: () => number;
  now?: () => Date;
  /**
   * The disk budget shared with the downloads (the pipeline passes it): declared sizes are claimed before the
   * body is read, chunked bodies as they arrive, and nothing is written into the journal's reserve. Without it
   * only a declared size is checked against the free space.
   */
  space?: UploadSpace;
  /** Test seam for free-space checks. */
  statfs?: StatfsFunction;
  /** Test seam: wraps the part file (e.g. to fail with ENOSPC after some bytes). */
  wrapPart?: (file: PartFile) => PartFile;
}

/** A saved upload (the `uploaded` event). */
export interface UploadedEvent extends UploadRecord {
  /** How it came: the raw body (web SDK) or a multipart form. */
  via: 'raw' | 'multipart';
  /** Set when the file is saved but could not be written to the upload log. */
  warning?: string;
}

/** A refused or failed upload, for the activity log. Never carries the token. */
export interface UploadRejection {
  status: number;
  reason: string;
  /** The reason as a note, so the popover and the tray app say it in the producer's language. */
  reasonNote: Note;
  origin: string | null;
  remoteAddress: string;
  /** The `X-FILENAME` as sent (decoded), when there was one. */
  fileName: string | null;
  /** The channel and stream the SDK's file name names (`<serviceId>.<channelId>LL.ogg`), when it does. */
  channelId: string | null;
  track: 'local' | 'remote' | null;
  /**
   * Whether a recording may be lost: a POST that was not saved, or a browser's preflight that was refused
   * (the browser then never sends the recording). A stray GET or a wrong path is not.
   */
  recording: boolean;
}

interface UploadRouteEvents {
  uploaded: [event: UploadedEvent];
  rejected: [rejection: UploadRejection];
}

/** An answer decided before or during the body (status + the note whose English text is `{error}`). */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly note: Note,
    readonly headers: Record<string, string> = {},
  ) {
    super(noteText(note));
  }
}

const NOTE_CLIENT_GONE = note('uploadClientGone');

/** The client went away (or stalled past the idle timeout): nobody to answer. */
class ClientGone extends Error {
  constructor(readonly note: Note = NOTE_CLIENT_GONE) {
    super(noteText(note));
  }
}

interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  origin: string | null;
  cors: Record<string, string>;
  remoteAddress: string;
  /** Content-Length when sent and valid. */
  declared: number | null;
  /** What closing this upload to make room must do beside closing the connection (release its disk claim). */
  onEvict: (() => void)[];
}

/** Handles `/uploads/<token>`; see the file comment. Mount with `mountUploads`. */
export class UploadRoute extends EventEmitter<UploadRouteEvents> {
  /** Absolute folder the files land in. */
  readonly dir: string;
  readonly maxBytes: number;
  readonly #opts: UploadRouteOptions;
  readonly #now: () => Date;
  readonly #idleMs: number;
  readonly #slots: UploadSlots;

  constructor(opts: UploadRouteOptions) {
    super();
    this.#opts = opts;
    this.dir = resolveInside(opts.folder, opts.subfolder ?? DEFAULT_UPLOAD_SUBFOLDER);
    const max = opts.maxBytes ?? DEFAULT_UPLOAD_MAX_BYTES;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxBytes must be a positive whole number.');
    this.maxBytes = max;
    this.#now = opts.now ?? (() => new Date());
    this.#idleMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.#slots = new UploadSlots({
      max: opts.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_UPLOADS,
      ...(opts.maxPerAddress !== undefined ? { perAddress: opts.maxPerAddress } : {}),
      ...(opts.stallRule ? { rule: opts.stallRule } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
  }

  /** The receiver route handler (bound). */
  readonly handle: RouteHandler = (req, res, info) => this.#handle(req, res, info);

  /** Removes part files a crash or a kill left behind (an upload can never resume). Best effort. */
  async removeStaleParts(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    const stale = names.filter((n) => n.startsWith(PART_PREFIX) && n.endsWith(PART_SUFFIX));
    await Promise.all(stale.map((n) => rm(path.join(this.dir, n), { force: true }).catch(() => undefined)));
    return stale.length;
  }

  async #handle(req: IncomingMessage, res: ServerResponse, info: RouteInfo): Promise<void> {
    const verdict = checkOrigin(req.headers.origin, this.#opts.allowedOrigins());
    const ctx: RequestContext = {
      req,
      res,
      origin: verdict.kind === 'none' ? null : verdict.origin,
      cors: verdict.kind === 'allowed' ? corsHeaders(verdict.origin) : {},
      remoteAddress: info.remoteAddress,
      declared: declaredLength(req),
      onEvict: [],
    };
    // A stranger's body is never read; a listed client's is drained a little so it can read why.
    let drainBody = verdict.kind !== 'refused';
    let slot: UploadSlot | null = null;
    try {
      if (info.subpath !== '') throw new Refusal(404, note('uploadUnknownPath'));
      const method = req.method ?? '';
      if (method === 'OPTIONS') {
        if (verdict.kind !== 'allowed') {
          throw new Refusal(403, verdict.kind === 'refused' ? verdict.note : note('uploadPreflightNoOrigin'));
        }
        const privateNetwork = req.headers['access-control-request-private-network'] === 'true';
        res.writeHead(204, { ...preflightHeaders(verdict.origin, privateNetwork), 'Content-Length': '0' });
        res.end();
        return;
      }
      if (method !== 'POST') {
        throw new Refusal(405, note('uploadMethod', { method: method.slice(0, 16) }), { Allow: 'POST, OPTIONS' });
      }
      if (verdict.kind === 'refused') throw new Refusal(403, verdict.note);
      const admitted = this.#slots.admit(clientAddress(req, info.remoteAddress), () => {
        for (const release of ctx.onEvict) release();
        this.#evicted(ctx, slot?.evicted ?? null);
      });
      if (!(admitted instanceof UploadSlot)) {
        // Not drained: reading the body would hold the very connection this refusal is meant to free.
        drainBody = false;
        throw new Refusal(503, admitted, { 'Retry-After': '60' });
      }
      slot = admitted;
      try {
        await this.#upload(ctx, admitted);
      } finally {
        this.#slots.leave(admitted);
      }
    } catch (error) {
      if (error instanceof ClientGone) {
        // Closed to make room, whatever the closing surfaced as: the eviction is the reason (answered 503).
        const evicted = slot?.evicted ?? null;
        this.#rejected(ctx, evicted ? 503 : 499, evicted ?? error.note, true);
        res.destroy();
        return;
      }
      if (!(error instanceof Refusal)) throw error;
      await this.#answer(ctx, error.status, { error: error.message }, error.headers, drainBody);
      const method = req.method ?? '';
      const lost = info.subpath === '' && (method === 'POST' || (method === 'OPTIONS' && verdict.kind === 'refused'));
      this.#rejected(ctx, error.status, error.note, lost);
    }
  }

  async #upload(ctx: RequestContext, slot: UploadSlot): Promise<void> {
    const { req } = ctx;
    const type = parseMediaType(req.headers['content-type']);
    const boundary = multipartBoundary(type);
    if (type?.essence === 'multipart/form-data' && boundary === null) {
      throw new Refusal(400, note('uploadNoBoundary'));
    }
    const bodyLimit = this.maxBytes + (boundary !== null ? MULTIPART_OVERHEAD_BYTES : 0);
    if (ctx.declared !== null && ctx.declared > bodyLimit) throw this.#tooLarge();
    if (ctx.declared === 0) throw new Refusal(400, note('uploadEmpty'));
    await mkdir(this.dir, { recursive: true });
    // A link at the client sub-folder would put every upload outside the recordings folder.
    await refuseLinkedFolder(this.dir, 'The client uploads folder').catch(() => {
      throw new Refusal(507, note('uploadFolderLinked', { folder: this.dir }));
    });
    const uploadId = newUploadId();
    const claim = this.#opts.space ? new UploadClaim(this.#opts.space, uploadId) : null;
    if (claim) ctx.onEvict.push(() => claim.release());
    try {
      await this.#save(ctx, type, boundary, bodyLimit, uploadId, claim, slot);
    } finally {
      claim?.release();
    }
  }

  async #save(
    ctx: RequestContext,
    type: MediaType | null,
    boundary: string | null,
    bodyLimit: number,
    uploadId: string,
    claim: UploadClaim | null,
    slot: UploadSlot,
  ): Promise<void> {
    const { req } = ctx;
    if (ctx.declared !== null && claim) {
      // The whole declared size, before a byte of the body is read: a refusal costs the sender nothing.
      const refused = await this.#claim(claim, ctx.declared);
      if (refused) throw noRoom(this.dir, refused, 0);
    } else if (ctx.declared !== null) {
      try {
        await ensureFreeSpace(this.dir, ctx.declared, this.#opts.statfs);
      } catch (error) {
        if (error instanceof DiskFullError) throw diskFull(this.dir, ctx.declared, error.availableBytes);
        throw error;
      }
    }

    const body = this.#body(req, bodyLimit, slot);
    const partPath = path.join(this.dir, `${PART_PREFIX}${uploadId}${PART_SUFFIX}`);
    const raw = await open(partPath, 'wx');
    const file = this.#opts.wrapPart ? this.#opts.wrapPart(raw) : raw;
    let closed = false;
    let published = false;
    try {
      const writer = new BatchWriter(file, (written) => claim?.wrote(written));
      let clientName: string | null;
      let mediaType: MediaType;
      let bytes = 0;
      const onData = async (chunk: Buffer): Promise<void> => {
        bytes += chunk.length;
        if (bytes > this.maxBytes) throw this.#tooLarge();
        // A body longer than declared, or of unknown size, claims the rest as it arrives.
        const refused = claim ? await this.#claim(claim, bytes) : null;
        if (refused) throw noRoom(this.dir, refused, bytes - chunk.length);
        await writer.add(chunk);
      };
      if (boundary !== null) {
        let fileType: MediaType | null = null;
        clientName = null;
        for await (const event of readMultipartFile(body, boundary)) {
          if (event.type === 'file') {
            fileType = event.part.contentType;
            clientName = event.part.fileName !== null && event.part.fileName.trim() !== '' ? event.part.fileName : null;
          } else await onData(event.chunk);
        }
        clientName ??= decodeHeaderFileName(req.headers['x-filename']);
        mediaType = fileType ?? { essence: 'application/octet-stream', params: new Map() };
      } else {
        for await (const chunk of body) await onData(chunk);
        clientName = decodeHeaderFileName(req.headers['x-filename']);
        mediaType = type ?? { essence: 'application/octet-stream', params: new Map() };
      }
      if (!req.complete) throw new ClientGone();
      await writer.flush();
      if (bytes === 0) throw new Refusal(400, note('uploadEmpty'));
      await file.sync();
      closed = true;
      await file.close();

      const receivedAt = this.#now();
      const ext = extensionFor(mediaType) ?? UNKNOWN_TYPE_EXTENSION;
      const base = uploadBaseName(clientName, defaultBaseName(receivedAt));
      const finalPath = await publish(partPath, this.dir, base, ext, () => {
        return new Refusal(409, note('uploadNameTaken', { name: `${base}${ext}` }));
      });
      published = true;
      await syncDir(this.dir);
      const record: UploadRecord = {
        id: newUploadId(),
        path: finalPath,
        fileName: path.basename(finalPath),
        bytes,
        contentType: mediaType.essence,
        sha256: writer.sha256(),
        origin: ctx.origin,
        receivedAt: receivedAt.toISOString(),
        ...sdkName(clientName),
      };
      let warning: string | undefined;
      try {
        await this.#opts.log?.append(record);
      } catch (error) {
        // The file itself is complete and durable: refusing now would only make the client send it again.
        warning = `Saved, but not added to the upload list (${(error as Error).message}); it will not be listed after a restart.`;
      }
      await this.#answer(ctx, 201, { ok: true, fileName: record.fileName, bytes, sha256: record.sha256 }, {}, false);
      this.emit('uploaded', {
        ...record,
        via: boundary !== null ? 'multipart' : 'raw',
        ...(warning ? { warning } : {}),
      });
    } catch (error) {
      throw this.#classify(error, ctx);
    } finally {
      if (!closed) await file.close().catch(() => undefined);
      if (!published) await rm(partPath, { force: true }).catch(() => undefined);
    }
  }

  /** Maps what went wrong while streaming to an answer (or to ClientGone). */
  #classify(error: unknown, ctx: RequestContext): unknown {
    if (error instanceof Refusal || error instanceof ClientGone) return error;
    if (error instanceof MultipartError) return new Refusal(400, error.note);
    if (isNoSpaceError(error)) return diskFull(this.dir, ctx.declared, null);
    if (ctx.req.destroyed && !ctx.req.complete) return new ClientGone();
    const code = (error as NodeJS.ErrnoException | null)?.code;
    if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
      return new ClientGone();
    }
    return error;
  }

  /**
   * Claims room for `total` bytes of the upload; when there is none, stalled uploads give way (their claims are
   * released as they are closed) before the upload is refused: a trickle that announced gigabytes must not keep
   * a genuine upload out.
   */
  async #claim(claim: UploadClaim, total: number): Promise<SpaceRefused | null> {
    let refused = await claim.cover(total);
    while (refused && this.#slots.evictStalled()) refused = await claim.cover(total);
    return refused;
  }

  #tooLarge(): Refusal {
    return new Refusal(413, note('uploadTooLarge', { limit: formatBytes(this.maxBytes) }));
  }

  /**
   * The request body as chunks, with the body cap and the idle timeout enforced. Iterating it never destroys
   * the request, so an answer can still be sent after a refusal.
   */
  async *#body(req: IncomingMessage, limit: number, slot: UploadSlot): AsyncGenerator<Buffer, void, undefined> {
    let seen = 0;
    let timer: NodeJS.Timeout | undefined;
    let idle = false;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        idle = true;
        req.destroy();
      }, this.#idleMs);
    };
    arm();
    try {
      for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        arm();
        this.#slots.received(slot, chunk.length);
        seen += chunk.length;
        if (seen > limit) throw this.#tooLarge();
        yield chunk;
      }
    } catch (error) {
      if (idle) throw new ClientGone(note('uploadIdle', { seconds: Math.round(this.#idleMs / 1000) }));
      if (slot.evicted) throw new ClientGone(slot.evicted);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async #answer(
    ctx: RequestContext,
    status: number,
    body: unknown,
    headers: Record<string, string>,
    drainFirst: boolean,
  ): Promise<void> {
    const { req, res } = ctx;
    if (res.headersSent || res.destroyed) return;
    let complete = req.complete;
    if (!complete && drainFirst) {
      const remaining = ctx.declared === null ? null : ctx.declared - req.socket.bytesRead;
      if (remaining === null || remaining <= DRAIN_MAX_BYTES) complete = await drain(req);
    }
    if (res.destroyed) return;
    // An unread rest of the body is not worth reading: close the connection after the answer. A client it was
    // worth answering gets a lingering close (a bounded rest is dropped first), so it reads the answer.
    const linger = !complete && drainFirst && !req.destroyed ? { linger: req } : {};
    sendJson(res, status, body, { headers: { ...headers, ...ctx.cors }, close: !complete, ...linger });
  }

  /**
   * Closes an upload that gave way to a newcomer. Its sender is told why first (503, the eviction's reason), and
   * the connection is cut once the answer is out, or after EVICTED_ANSWER_MS at the latest.
   */
  #evicted(ctx: RequestContext, why: Note | null): void {
    const { req, res } = ctx;
    if (why === null || res.headersSent || res.destroyed) {
      req.destroy();
      return;
    }
    const cut = setTimeout(() => req.destroy(), EVICTED_ANSWER_MS);
    cut.unref();
    res.once('finish', () => {
      clearTimeout(cut);
      req.destroy();
    });
    sendJson(res, 503, { error: noteText(why) }, { headers: { ...ctx.cors, 'Retry-After': '60' }, close: true });
  }

  #rejected(ctx: RequestContext, status: number, reason: Note, recording: boolean): void {
    const fileName = decodeHeaderFileName(ctx.req.headers['x-filename']);
    this.emit('rejected', {
      status,
      reason: noteText(reason),
      reasonNote: reason,
      origin: ctx.origin,
      remoteAddress: ctx.remoteAddress,
      fileName,
      ...sdkName(fileName),
      recording,
    });
  }
}

/**
 * The address an upload counts against: the peer's, or behind a local tunnel client (a loopback peer) the last
 * address its X-Forwarded-For names, the one the tunnel itself saw (anything before it the sender wrote).
 */
function clientAddress(req: IncomingMessage, remote: string): string {
  if (!/^(127\.|::1$|::ffff:127\.)/.test(remote)) return remote;
  const header = req.headers['x-forwarded-for'];
  const list = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
  const last = list
    .map((a) => a.trim())
    .filter((a) => a !== '')
    .at(-1);
  return last === undefined ? remote : last.slice(0, 64);
}

/** Content-Length as a number, or null when absent or not a plain non-negative integer. */
function declaredLength(req: IncomingMessage): number | null {
  const header = req.headers['content-length'];
  if (header === undefined || !/^\d{1,16}$/.test(header)) return null;
  return Number(header);
}

/** The channel and stream a web SDK file name names (nulls for other names). */
function sdkName(fileName: string | null): { channelId: string | null; track: 'local' | 'remote' | null } {
  const parsed = parseSdkFileName(fileName);
  return { channelId: parsed.channelId, track: parsed.track };
}

function diskFull(dir: string, needed: number | null, available: number | null): Refusal {
  return new Refusal(
    507,
    needed !== null && available !== null
      ? note('uploadDiskFullSizes', { folder: dir, needed: formatBytes(needed), free: formatBytes(available) })
      : note('uploadDiskFull', { folder: dir }),
  );
}

/** 507 for an upload the disk budget has no room for, with the numbers (`received`: body bytes so far). */
function noRoom(dir: string, refused: SpaceRefused, received: number): Refusal {
  const numbers = { folder: dir, free: formatBytes(refused.free), floor: formatBytes(refused.floor) };
  return new Refusal(
    507,
    received === 0
      ? note('uploadNoRoom', { ...numbers, needed: formatBytes(refused.needed) })
      : note('uploadNoRoomStreaming', { ...numbers, received: formatBytes(received) }),
  );
}

/**
 * Reads and drops the rest of a request (bounded in bytes and time) so the client finishes sending and can
 * read the answer. Resolves true when the request ended.
 */
function drain(req: IncomingMessage): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  if (req.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (ended: boolean): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onError);
      if (!ended) req.pause();
      resolve(ended);
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > DRAIN_MAX_BYTES) finish(false);
    };
    const onEnd = (): void => finish(true);
    const onClose = (): void => finish(req.complete);
    const onError = (): void => finish(false);
    const timer = setTimeout(() => finish(false), DRAIN_MAX_MS);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', onError);
    req.resume();
  });
}

/**
 * Creates the upload route and mounts it on `receiver` as `/uploads/<uploads token>`; stale part files of an
 * earlier run are removed. The route's events: `uploaded` (a file is saved, logged and acknowledged) and
 * `rejected` (refused or failed, with the status and reason for the activity log).
 */
export async function mountUploads(
  receiver: { addRoute(prefix: string, tokenName: string, handler: RouteHandler): Promise<void> },
  opts: UploadRouteOptions,
): Promise<UploadRoute> {
  const route = new UploadRoute(opts);
  await route.removeStaleParts();
  await receiver.addRoute(UPLOADS_ROUTE, UPLOADS_ROUTE, route.handle);
  return route;
}
