/**
 * What the download thread (download-thread.ts, on the main thread) and its worker (download-worker.ts) say to
 * each other, and how an engine error crosses between them: a structured clone keeps an error's message but not
 * its class, so each of the engine's errors travels as its constructor's arguments and is built again on the
 * main thread, with the same type, code and message as when the engine ran there.
 */
import { TallyError } from '../errors.js';
import {
  DestinationExistsError,
  DiskFullError,
  DownloadRefusedError,
  HttpStatusError,
  NetworkError,
  StallError,
  TimeoutError,
  VerificationError,
} from './errors.js';
import type { DownloadProgress } from './progress.js';
import type { DownloadOptions, DownloadResult } from './download-options.js';

/** The options that cross as they are (everything but functions, the signal and the test seams). */
export type PlainOptions = Omit<
  DownloadOptions,
  | 'dest'
  | 'policy'
  | 'signal'
  | 'onProgress'
  | 'onBytesWritten'
  | 'onReceived'
  | 'onServiceDate'
  | 'stallRule'
  | 'fs'
  | 'flushTurn'
> & {
  /** The final path, or null when the main thread chooses it (a `dest` function). */
  dest: string | null;
  /** The policy has `check` / `lookupFor` (asked on the main thread). */
  policyChecks: boolean;
  policyLookups: boolean;
};

export type ToWorker =
  | { type: 'start'; id: number; opts: PlainOptions }
  | { type: 'abort'; id: number }
  | { type: 'reply'; call: number; ok: true; value: unknown }
  | { type: 'reply'; call: number; ok: false; error: WireError };

/** Main-thread services the engine asks for. */
export type CallKind = 'check' | 'checkRedirect' | 'lookup' | 'dest' | 'flushTurn' | 'flushDone';

export type FromWorker =
  | {
      type: 'progress';
      id: number;
      /** The latest report of the engine's meter (bytes on disk, total, smoothed rate). */
      progress: DownloadProgress | null;
      /** Bytes written since the last batch. */
      written: number;
      /** Every byte has arrived (verification and the rename are left). */
      received: boolean;
    }
  /** The `Date` of an answer that serves the file (DownloadOptions.onServiceDate). */
  | { type: 'serviceDate'; id: number; date: number }
  | { type: 'call'; id: number; call: number; kind: CallKind; args: unknown[] }
  | { type: 'done'; id: number; ok: true; result: DownloadResult }
  | { type: 'done'; id: number; ok: false; error: WireError };

/** An error as it crosses the thread boundary. */
export interface WireError {
  name: string;
  message: string;
  /** Own enumerable fields (code, status, errno, syscall...): what rebuilding needs. */
  fields: Record<string, unknown>;
}

/** Makes `error` cloneable: its name, message and primitive own fields. */
export function toWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  if (error instanceof TallyError) fields.code = error.code;
  return { name: error.name, message: error.message, fields };
}

type Fields = Record<string, unknown>;
const text = (f: Fields, key: string): string => String(f[key] ?? '');
const count = (f: Fields, key: string): number | null => (typeof f[key] === 'number' ? f[key] : null);

/** The engine's errors by name, built again from their fields (each constructor writes the same message). */
const REBUILD: Record<string, (f: Fields) => Error> = {
  HttpStatusError: (f) =>
    new HttpStatusError(Number(f.status), text(f, 'host'), text(f, 'detail'), count(f, 'serviceDate')),
  DownloadRefusedError: (f) => new DownloadRefusedError(text(f, 'reason')),
  VerificationError: (f) =>
    new VerificationError(
      f.kind as 'content-length' | 'announced-size' | 'md5',
      f.expected as string | number,
      f.actual as string | number,
      f.cut === true,
      typeof f.sha256 === 'string' ? f.sha256 : null,
    ),
  DiskFullError: (f) => new DiskFullError(text(f, 'folder'), count(f, 'neededBytes'), count(f, 'availableBytes')),
  DestinationExistsError: (f) => new DestinationExistsError(text(f, 'path')),
  NetworkError: (f) => new NetworkError(text(f, 'endpoint'), text(f, 'reason')),
  TimeoutError: (f) => new TimeoutError(text(f, 'endpoint'), Number(f.timeoutMs)),
  StallError: (f) => new StallError(text(f, 'host'), Number(f.bytesPerSec), f.why === 'late' ? 'late' : 'slow'),
};

/** A TallyError the engine met that is none of its own (a policy's refusal of a DNS answer): code and fields kept. */
export class RemoteTallyError extends TallyError {
  readonly code: string;
  constructor(wire: WireError) {
    super(wire.message);
    this.name = wire.name;
    this.code = text(wire.fields, 'code');
    Object.assign(this, wire.fields);
  }
}

/** The error `wire` stood for, of the same class when it is one of the engine's. */
export function fromWire(wire: WireError): Error {
  const rebuild = REBUILD[wire.name];
  if (rebuild) {
    const error = rebuild(wire.fields);
    if (error.message === wire.message) return error;
  }
  if (typeof wire.fields.code === 'string' && /^[a-z_]+$/.test(wire.fields.code) && !('errno' in wire.fields)) {
    return new RemoteTallyError(wire);
  }
  // A file-system error (ELOOP on a planted link, EACCES...) keeps its code, errno, syscall and path.
  const error = new Error(wire.message);
  error.name = wire.name;
  return Object.assign(error, wire.fields);
}
