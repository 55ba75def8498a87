/**
 * Runs downloads on the engine's worker thread (download-worker.ts), off the thread that answers webhooks
 * (issue 34): the worker reads the sockets, writes and hashes the part; this side answers its questions (the
 * download-origin policy, the final name), shares the count of the journal's running commits (each of the worker's
 * flushes waits behind them, read from shared memory: no message per flush), applies the stall rule
 * to the progress batches it gets, and gives the caller the same result, progress and errors as `downloadFile`.
 *
 * One worker serves every download of the process. It is started with the first download and does not keep the
 * process alive while no download runs; a worker that dies fails the downloads it held (they are retried).
 * A download with file-system test seams (`fs`) runs on this thread instead: functions cannot cross to a worker.
 */
import type { LookupAddress } from 'node:dns';
import { Worker } from 'node:worker_threads';
import { flushes } from '../flush-priority.js';
import { systemClock } from '../time.js';
import type { DownloadOptions, DownloadResult } from './download-options.js';
import { downloadFile } from './fetch-file.js';
import { abortError } from './http-request.js';
import { watchStall } from './stall-rule.js';
import type { FromWorker, PlainOptions, ToWorker, WireError, WorkerData } from './thread-messages.js';
import { fromWire, toWire } from './thread-messages.js';

interface Running {
  opts: DownloadOptions;
  resolve(result: DownloadResult): void;
  reject(error: Error): void;
  /** What the stall rule reads: the worker's latest byte count, total, and whether every byte has arrived. */
  mirror: { bytes: number; total: number | null; done: boolean };
  /** The caller's progress, throttled here as the engine throttles it. */
  lastReport: number;
}

/** Where the worker's script is: beside this module, as JavaScript once built, as TypeScript under the tests. */
function workerScript(): { url: URL; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  return fromSource
    ? // Vitest runs the sources: the worker gets the same TypeScript loader the project's scripts use (tsx).
      { url: new URL('./download-worker.ts', import.meta.url), execArgv: ['--import', 'tsx'] }
    : { url: new URL('./download-worker.js', import.meta.url), execArgv: [] };
}

/** The process's download worker and the downloads it runs. */
class DownloadThread {
  #worker: Worker | null = null;
  #running = new Map<number, Running>();
  #nextId = 1;

  run(opts: DownloadOptions): Promise<DownloadResult> {
    const id = this.#nextId++;
    const worker = this.#ensureWorker();
    return new Promise<DownloadResult>((resolve, reject) => {
      const running: Running = {
        opts,
        resolve,
        reject,
        mirror: { bytes: 0, total: null, done: false },
        lastReport: -Infinity,
      };
      this.#running.set(id, running);
      worker.ref();
      let stalled: Error | null = null;
      const stop = (): void => this.#post({ type: 'abort', id });
      const unwatch = opts.stallRule
        ? watchStall(opts.stallRule, running.mirror, opts.url, (error) => {
            stalled ??= error;
            stop();
          })
        : () => undefined;
      const onAbort = (): void => stop();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (): void => {
        unwatch();
        opts.signal?.removeEventListener('abort', onAbort);
        this.#running.delete(id);
        if (this.#running.size === 0) this.#worker?.unref();
      };
      running.resolve = (result) => {
        finish();
        resolve(result);
      };
      running.reject = (error) => {
        finish();
        // Stopped by the caller: the caller's reason; by the stall rule: its StallError (as downloadFile does).
        if (opts.signal?.aborted) reject(abortError(opts.signal));
        else reject(stalled ?? error);
      };
      if (opts.signal?.aborted) {
        running.reject(abortError(opts.signal));
        return;
      }
      this.#post({ type: 'start', id, opts: plainOptions(opts) });
    });
  }

  /** Starts the worker now, if it is not running (it stays unreferenced until a download runs). */
  warm(): void {
    this.#ensureWorker();
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const { url, execArgv } = workerScript();
    const workerData: WorkerData = { urgentFlushes: flushes.urgentCount };
    const worker = new Worker(url, { execArgv, env: process.env, stdout: false, stderr: false, workerData });
    worker.on('message', (message: FromWorker) => this.#onMessage(message));
    const lost = (why: string): void => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      const error = new Error(`The download engine's thread stopped (${why}); the download is tried again.`);
      for (const running of [...this.#running.values()]) running.reject(error);
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  #post(message: ToWorker): void {
    this.#worker?.postMessage(message);
  }

  #onMessage(message: FromWorker): void {
    const running = this.#running.get(message.id);
    if (!running) {
      // A question from a download that is over: answered, so none waits.
      if (message.type === 'call') this.#post({ type: 'reply', call: message.call, ok: true, value: null });
      return;
    }
    switch (message.type) {
      case 'progress':
        this.#progress(running, message);
        break;
      case 'serviceDate':
        running.opts.onServiceDate?.(message.date);
        break;
      case 'call':
        this.#answer(running, message.call, message.kind, message.args);
        break;
      case 'done':
        if (message.ok) running.resolve(message.result);
        else running.reject(fromWire(message.error));
        break;
    }
  }

  #progress(running: Running, message: Extract<FromWorker, { type: 'progress' }>): void {
    const { opts, mirror } = running;
    if (message.written > 0) opts.onBytesWritten?.(message.written);
    if (message.received) mirror.done = true;
    const p = message.progress;
    if (!p) return;
    mirror.bytes = p.bytes;
    mirror.total = p.total;
    const now = systemClock.now();
    const every = opts.progressIntervalMs ?? 250;
    // The last report (every byte in) always goes out; the others at the caller's pace.
    if (message.received || now - running.lastReport >= every) {
      running.lastReport = now;
      opts.onProgress?.(p);
    }
  }

  #answer(running: Running, call: number, kind: string, args: unknown[]): void {
    const reply = (value: unknown): void => this.#post({ type: 'reply', call, ok: true, value });
    const fail = (error: unknown): void => this.#post({ type: 'reply', call, ok: false, error: toWire(error) });
    const { policy } = running.opts;
    try {
      switch (kind) {
        case 'check':
        case 'checkRedirect': {
          const asked =
            kind === 'check'
              ? policy.check?.(String(args[0]))
              : policy.checkRedirect(new URL(String(args[0])), String(args[1]));
          void Promise.resolve(asked).then(
            (v) =>
              reply(v === undefined ? { ok: true, url: String(args[0]) } : v.ok ? { ok: true, url: v.url.href } : v),
            fail,
          );
          return;
        }
        case 'lookup': {
          const lookup = policy.lookupFor?.(new URL(String(args[0])));
          if (!lookup) throw new Error('the policy has no DNS lookup');
          const options = { ...(args[2] as object), all: true } as const;
          lookup(String(args[1]), options, (error, addresses) => {
            if (error) fail(error);
            else reply(addresses as unknown as LookupAddress[]);
          });
          return;
        }
        case 'dest': {
          const dest = running.opts.dest;
          void Promise.resolve(typeof dest === 'function' ? dest() : dest).then(reply, fail);
          return;
        }
      }
    } catch (error) {
      fail(error);
    }
  }
}

/** The options without what cannot cross to the worker. */
function plainOptions(opts: DownloadOptions): PlainOptions {
  const {
    dest,
    policy,
    signal: _signal,
    onProgress: _onProgress,
    onBytesWritten: _onBytesWritten,
    onReceived: _onReceived,
    onServiceDate: _onServiceDate,
    stallRule: _stallRule,
    fs: _fs,
    flushTurn: _flushTurn,
    ...plain
  } = opts;
  return {
    ...plain,
    dest: typeof dest === 'string' ? dest : null,
    policyChecks: policy.check !== undefined,
    policyLookups: policy.lookupFor !== undefined,
  };
}

let thread: DownloadThread | null = null;

/**
 * Starts the engine's worker thread ahead of a download, so its start (a new V8 isolate, Node's bootstrap and the
 * engine's modules: 100-250 ms on the shared 2-core machine, 0.05-0.1 s of CPU) runs while the download manager
 * still acks the webhook, reserves space and writes the job, instead of in front of the first byte. Idle, the
 * thread keeps nothing alive; once started it serves every later download, so only the first one paid this.
 */
export function warmDownloadThread(): void {
  thread ??= new DownloadThread();
  thread.warm();
}

/**
 * `downloadFile` on the engine's worker thread: the same options, result, progress and errors. A download with
 * file-system seams (`fs`, tests only) runs on this thread.
 */
export function downloadInThread(opts: DownloadOptions): Promise<DownloadResult> {
  if (opts.fs) return downloadFile(opts);
  thread ??= new DownloadThread();
  return thread.run(opts);
}

export type { WireError };
