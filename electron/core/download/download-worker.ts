/**
 * The download engine's worker thread (issue 34): it owns the sockets, the part files and the hashing, so a
 * recording's reads, writes and MD5 never hold the main thread, where webhooks wait for their journal commit.
 * It runs `downloadFile` for each `start` message and asks the main thread (download-thread.ts) for what lives
 * there: the download-origin policy (URL checks, DNS answers), the final name, and each flush's turn behind the
 * journal's commits. Progress goes back in batches every BATCH_MS, never per write.
 */
import type { LookupAddress, LookupOneOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { parentPort } from 'node:worker_threads';
import { downloadFile } from './fetch-file.js';
import type { DownloadPolicy, PolicyVerdict } from './http-request.js';
import type { DownloadProgress } from './progress.js';
import type { CallKind, FromWorker, PlainOptions, ToWorker, WireError } from './thread-messages.js';
import { fromWire, toWire } from './thread-messages.js';

/** How often progress goes to the main thread. */
export const BATCH_MS = 100;

const port = parentPort;
if (!port) throw new Error('download-worker.ts runs only as a worker thread (see download-thread.ts)');

const aborts = new Map<number, AbortController>();
const calls = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
let nextCall = 1;

function send(message: FromWorker): void {
  port?.postMessage(message);
}

/** Asks the main thread for `kind` on behalf of download `id`. */
function ask(id: number, kind: CallKind, args: unknown[]): Promise<unknown> {
  const call = nextCall++;
  return new Promise((resolve, reject) => {
    calls.set(call, { resolve, reject });
    send({ type: 'call', id, call, kind, args });
  });
}

function verdict(value: unknown): PolicyVerdict {
  const v = value as { ok: boolean; url?: string; reason?: string };
  return v.ok ? { ok: true, url: new URL(v.url as string) } : { ok: false, reason: String(v.reason) };
}

/** The policy of the main thread, asked across: the same answers, a message away. */
function remotePolicy(id: number, opts: PlainOptions): DownloadPolicy {
  const lookupFor = (url: URL): LookupFunction =>
    ((hostname: string, options: LookupOneOptions & { all?: boolean }, callback: LookupCallback) => {
      ask(id, 'lookup', [url.href, hostname, { ...options }]).then(
        (answer) => {
          const list = answer as LookupAddress[];
          if (options.all) callback(null, list);
          else callback(null, list[0]?.address ?? '', list[0]?.family ?? 4);
        },
        (error: Error) => callback(error as NodeJS.ErrnoException, options.all ? [] : '', 4),
      );
    }) as unknown as LookupFunction;
  return {
    ...(opts.policyChecks ? { check: async (url: string) => verdict(await ask(id, 'check', [url])) } : {}),
    checkRedirect: async (from, location) => verdict(await ask(id, 'checkRedirect', [from.href, location])),
    ...(opts.policyLookups ? { lookupFor } : {}),
  };
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

async function start(id: number, opts: PlainOptions): Promise<void> {
  const controller = new AbortController();
  aborts.set(id, controller);
  let latest: DownloadProgress | null = null;
  let written = 0;
  let received = false;
  const flush = (): void => {
    if (latest === null && written === 0) return;
    send({ type: 'progress', id, progress: latest, written, received });
    latest = null;
    written = 0;
  };
  const timer = setInterval(flush, BATCH_MS);
  try {
    const { dest, policyChecks: _checks, policyLookups: _lookups, ...plain } = opts;
    const result = await downloadFile({
      ...plain,
      dest: dest ?? (async () => String(await ask(id, 'dest', []))),
      policy: remotePolicy(id, opts),
      signal: controller.signal,
      // Every write's report is kept; the batch sends the latest (the main thread throttles what it shows).
      progressIntervalMs: 0,
      onProgress: (p) => {
        latest = p;
      },
      onBytesWritten: (bytes) => {
        written += bytes;
        if (opts.bytesWrittenEvery !== undefined && written >= opts.bytesWrittenEvery) flush();
      },
      onServiceDate: (date) => send({ type: 'serviceDate', id, date }),
      onReceived: () => {
        received = true;
        flush();
        // Sent at once even with no new bytes: the stall rule must not judge the verification as a stall.
        if (!latest) send({ type: 'progress', id, progress: null, written: 0, received });
      },
      flushTurn: async (run) => {
        const token = await ask(id, 'flushTurn', []);
        try {
          return await run();
        } finally {
          void ask(id, 'flushDone', [token]).catch(() => undefined);
        }
      },
    });
    clearInterval(timer);
    flush();
    send({ type: 'done', id, ok: true, result });
  } catch (error) {
    clearInterval(timer);
    flush();
    send({ type: 'done', id, ok: false, error: toWire(error) });
  } finally {
    aborts.delete(id);
  }
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'start':
      void start(message.id, message.opts);
      break;
    case 'abort':
      aborts.get(message.id)?.abort();
      break;
    case 'reply': {
      const pending = calls.get(message.call);
      calls.delete(message.call);
      if (message.ok) pending?.resolve(message.value);
      else pending?.reject(fromWire(message.error as WireError));
      break;
    }
  }
});
