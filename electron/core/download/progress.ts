/**
 * Progress with a smoothed rate: an exponentially weighted average over ~250 ms samples, so the ETA shown
 * to a producer does not jump with every TCP burst. Reports are throttled to about four per second.
 */
import { systemClock } from '../time.js';

export interface DownloadProgress {
  /** Bytes of the file present on disk. */
  bytes: number;
  /** Expected total, when known. */
  total: number | null;
  /** Smoothed transfer rate in bytes per second. */
  rate: number;
  /** Seconds left at the current rate, or null when unknown. */
  etaSeconds: number | null;
}

const SAMPLE_MS = 250;
const SMOOTHING = 0.3;

export class ProgressMeter {
  bytes = 0;
  total: number | null = null;
  /** Every byte has arrived (what follows is local: verification and the rename). */
  done = false;
  #rate = 0;
  #sampleAt: number;
  #sampleBytes = 0;
  #lastReport = -Infinity;

  constructor(
    private readonly report: ((p: DownloadProgress) => void) | undefined,
    /** Minimum time between two reports (0: every write). */
    private readonly reportIntervalMs = SAMPLE_MS,
    private readonly now: () => number = systemClock.now,
    /** Called on every write with its size, unthrottled (the queue's disk accounting). */
    private readonly onBytes?: (bytes: number) => void,
  ) {
    this.#sampleAt = now();
  }

  /** Restarts the rate sample from the current byte count (after a resume or a restart from zero). */
  reset(bytes: number, total: number | null): void {
    this.bytes = bytes;
    this.total = total;
    this.#sampleBytes = bytes;
    this.#sampleAt = this.now();
  }

  add(bytes: number): void {
    this.bytes += bytes;
    this.onBytes?.(bytes);
    this.#tick(false);
  }

  /** Sends a report now (start and end of a transfer). */
  flush(): void {
    this.#tick(true);
  }

  snapshot(): DownloadProgress {
    const remaining = this.total !== null ? Math.max(0, this.total - this.bytes) : null;
    const etaSeconds = remaining === null ? null : remaining === 0 ? 0 : this.#rate > 0 ? remaining / this.#rate : null;
    return { bytes: this.bytes, total: this.total, rate: Math.round(this.#rate), etaSeconds };
  }

  #tick(force: boolean): void {
    const now = this.now();
    const elapsed = now - this.#sampleAt;
    if (elapsed >= SAMPLE_MS) {
      const instant = ((this.bytes - this.#sampleBytes) * 1000) / elapsed;
      this.#rate = this.#rate === 0 ? instant : SMOOTHING * instant + (1 - SMOOTHING) * this.#rate;
      this.#sampleAt = now;
      this.#sampleBytes = this.bytes;
    }
    if (!this.report) return;
    if (force || now - this.#lastReport >= this.reportIntervalMs) {
      this.#lastReport = now;
      this.report(this.snapshot());
    }
  }
}
