/**
 * Sandbox time: the service's own clock. Durations (retention, index delay, broadcast lengths, webhook delay) run
 * on a virtual clock that advances `timeFactor` times faster than real time, while every timestamp the sandbox
 * reports (the `Date` header of every answer, `Last-Modified`, `currentTime`, `createTime`...) is the service's
 * wall clock: this machine's, plus whatever time a test moved the service by (`advance`). Changing the factor
 * mid-run keeps the virtual time continuous and re-arms pending timers, so "expires in 6 h" becomes "expires in
 * 6 s" at factor 3600 even for a recording published earlier. `advance(6 h)` is six hours passing at the
 * service, as a client sees it: the `Date` it answers with is 6 h later and what it deletes after 6 h is deleted,
 * together, so a test never has to move one without the other.
 */
import { performance } from 'node:perf_hooks';

/** Thrown into pending sleeps when the sandbox closes. */
export class SandboxClosedError extends Error {
  override name = 'SandboxClosedError';
  constructor() {
    super('The sandbox was closed.');
  }
}

/** Checks a time factor: a finite number above zero. */
export function assertTimeFactor(f: number): void {
  if (!Number.isFinite(f) || f <= 0) throw new RangeError(`timeFactor must be a finite number above 0, got ${f}`);
}

export class VirtualClock {
  private baseReal: number;
  private baseVirtual = 0;
  /** How far `advance` moved the service's wall clock ahead of this machine's. */
  private wallAhead = 0;
  private current: number;
  private readonly listeners = new Set<() => void>();

  constructor(factor = 1) {
    assertTimeFactor(factor);
    this.current = factor;
    this.baseReal = performance.now();
  }

  get factor(): number {
    return this.current;
  }

  /** Virtual milliseconds since the clock started (monotonic). */
  now(): number {
    return this.baseVirtual + (performance.now() - this.baseReal) * this.current;
  }

  /**
   * The service's wall clock (ms since the epoch): what it dates its answers with. This machine's wall clock plus
   * the time `advance` moved the service by (a clock step of this machine's moves it too, as it would the
   * service's own machine).
   */
  wall(): number {
    return Date.now() + this.wallAhead;
  }

  /** The service's wall clock as a Date. */
  wallDate(): Date {
    return new Date(this.wall());
  }

  /** How far `advance` has moved the service's time ahead of this machine's, in ms. */
  get ahead(): number {
    return this.wallAhead;
  }

  /**
   * Time passes at the service: `ms` of virtual time go by at once (timers due by then fire: a recording whose
   * retention ends is deleted) and its wall clock (`Date` headers, timestamps) moves ahead by the same amount.
   */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`the time to advance must be a number of at least 0 ms`);
    this.baseVirtual += ms;
    this.wallAhead += ms;
    for (const listener of this.listeners) listener();
  }

  setFactor(f: number): void {
    assertTimeFactor(f);
    const nowReal = performance.now();
    this.baseVirtual += (nowReal - this.baseReal) * this.current;
    this.baseReal = nowReal;
    this.current = f;
    for (const listener of this.listeners) listener();
  }

  /** Real milliseconds until the virtual time reaches `t` at the current factor (0 if already past). */
  realDelayUntil(t: number): number {
    return Math.max(0, (t - this.now()) / this.current);
  }

  /**
   * The service's wall-clock moment at which the virtual time `t` is (or was) reached, at the current factor.
   * Computed from the clock's anchors only, so the same `t` maps to the same Date until the factor changes or the
   * time is advanced.
   */
  wallTimeAt(t: number): Date {
    return new Date(performance.timeOrigin + this.baseReal + (t - this.baseVirtual) / this.current + this.wallAhead);
  }

  /** Calls `listener` whenever the factor changes or the time is advanced (pending timers re-arm). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

interface Pending {
  deadline: number;
  fn: () => void;
  timer: NodeJS.Timeout | null;
}

/** Timers on the virtual clock. All are unref'd (the servers keep the process alive) and die with close(). */
export class Scheduler {
  private readonly pending = new Set<Pending>();
  /** Sleeps reject through this hook on close(); a normal fire resolves through `fn`. */
  private readonly rejecters = new Map<Pending, (e: Error) => void>();
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly clock: VirtualClock) {
    this.unsubscribe = clock.onChange(() => {
      for (const p of this.pending) this.arm(p);
    });
  }

  /** Runs `fn` once the virtual time reaches `deadline`. Returns a cancel function. */
  at(deadline: number, fn: () => void): () => void {
    if (this.closed) return () => {};
    const p: Pending = { deadline, fn, timer: null };
    this.pending.add(p);
    this.arm(p);
    return () => this.cancel(p);
  }

  /** Runs `fn` after `virtualMs` of virtual time. */
  after(virtualMs: number, fn: () => void): () => void {
    return this.at(this.clock.now() + virtualMs, fn);
  }

  /** Resolves after `virtualMs` of virtual time; rejects with SandboxClosedError if the sandbox closes first. */
  sleep(virtualMs: number): Promise<void> {
    if (this.closed) return Promise.reject(new SandboxClosedError());
    return new Promise((resolve, reject) => {
      const p: Pending = {
        deadline: this.clock.now() + virtualMs,
        fn: resolve,
        timer: null,
      };
      this.rejecters.set(p, reject);
      this.pending.add(p);
      this.arm(p);
    });
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    for (const p of this.pending) {
      if (p.timer) clearTimeout(p.timer);
      this.rejecters.get(p)?.(new SandboxClosedError());
    }
    this.pending.clear();
    this.rejecters.clear();
  }

  private cancel(p: Pending): void {
    if (p.timer) clearTimeout(p.timer);
    this.pending.delete(p);
    this.rejecters.delete(p);
  }

  private arm(p: Pending): void {
    if (p.timer) clearTimeout(p.timer);
    // setTimeout caps at 2^31-1 ms; a longer wait simply re-arms when it fires early.
    const delay = Math.min(this.clock.realDelayUntil(p.deadline), 0x7fffffff);
    p.timer = setTimeout(() => this.fire(p), Math.ceil(delay));
    p.timer.unref();
  }

  private fire(p: Pending): void {
    if (!this.pending.has(p)) return;
    if (this.clock.now() < p.deadline - 0.5) {
      this.arm(p);
      return;
    }
    this.pending.delete(p);
    this.rejecters.delete(p);
    p.fn();
  }
}
