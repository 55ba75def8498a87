/**
 * TEST HELPER, the test twin of the durable inbox: an in-memory JobStore with the same observable behaviour (dedupe by URL,
 * 'added' after a new job, patches applied in call order) and a log of every update for assertions.
 * Not for production: nothing is written to disk.
 */
import { EventEmitter } from 'node:events';
import type { JobStore, NewRecording, RecordingJob } from '../../../electron/core/recordings/types.js';
import { RETENTION_MS } from '../../../electron/core/recordings/types.js';

type Patch = Parameters<JobStore['update']>[1];

export class MemoryJobStore extends EventEmitter implements JobStore {
  readonly #jobs = new Map<string, RecordingJob>();
  /** Every update in order: [key, patch]. */
  readonly updates: Array<[string, Patch]> = [];
  /** Updates matching this are rejected (like a journal on a full disk) until it is cleared. */
  failUpdates: ((patch: Patch) => boolean) | null = null;

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  /** Adds a recording the way the inbox would; an already known URL is a duplicate. */
  async add(
    recording: NewRecording,
    overrides: Partial<RecordingJob> = {},
  ): Promise<{ job: RecordingJob; duplicate: boolean }> {
    const key = overrides.key ?? recording.url;
    const known = this.#jobs.get(key);
    if (known) return { job: known, duplicate: true };
    const receivedAt = overrides.receivedAt ?? new Date(this.now()).toISOString();
    const job: RecordingJob = {
      key,
      ...recording,
      receivedAt,
      deadline: new Date(Date.parse(receivedAt) + RETENTION_MS).toISOString(),
      state: 'pending',
      attempts: 0,
      path: null,
      bytes: null,
      totalBytes: null,
      error: null,
      updatedAt: receivedAt,
      ...overrides,
    };
    this.#jobs.set(key, job);
    await Promise.resolve();
    this.emit('added', job);
    return { job, duplicate: false };
  }

  list(): RecordingJob[] {
    return [...this.#jobs.values()];
  }

  keys(states?: readonly RecordingJob['state'][]): string[] {
    return [...this.#jobs.values()].filter((job) => !states || states.includes(job.state)).map((job) => job.key);
  }

  get(key: string): RecordingJob | undefined {
    return this.#jobs.get(key);
  }

  async update(key: string, patch: Patch): Promise<RecordingJob> {
    const job = this.#jobs.get(key);
    if (!job) throw new Error(`No job ${key}`);
    if (this.failUpdates?.(patch)) {
      await Promise.resolve();
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }
    this.updates.push([key, patch]);
    const next = { ...job, ...patch };
    this.#jobs.set(key, next);
    await Promise.resolve();
    this.emit('updated', next);
    return next;
  }

  /** Resolves with the job once `predicate` holds for it (checked on every update). */
  waitFor(key: string, predicate: (job: RecordingJob) => boolean): Promise<RecordingJob> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        const job = this.#jobs.get(key);
        if (job && predicate(job)) {
          this.off('updated', check);
          resolve(job);
          return true;
        }
        return false;
      };
      if (!check()) this.on('updated', check);
    });
  }
}
