/**
 * The core's deadline-aware scheduler for many keyed waits (issue 35: one retry primitive): the owner says "`key`
 * is due at T" (`add`) or "call `key` off" (`cancel`), and is called back once when `key` is due. The schedule owns
 * its one timer, armed for the earliest due key and cleared when nothing waits, whatever the number of keys: the
 * download manager's 5,000 recordings retrying against a dead host cost one timer and no CPU between attempts (a
 * timer per job made the event loop juggle thousands of them), and it arms no timer of its own. A binary min-heap
 * orders the due times; cancelled or rescheduled entries are dropped lazily when they reach the top. Due times are
 * on the injected monotonic clock (`systemClock` of time.ts by default): a wall-clock step neither fires every
 * retry at once nor freezes them. What a wait should be (the backoff, the deadline's pace) its owner works out; a
 * single thing retried from a timer uses `RetryLoop` (retry-loop.ts), an awaited one `retrying` (backoff.ts).
 */
import { systemClock, type Clock } from './time.js';

interface Entry {
  key: string;
  at: number;
}

export class RetrySchedule {
  readonly #fire: (key: string) => void;
  readonly #clock: Pick<Clock, 'now'>;
  readonly #heap: Entry[] = [];
  /** key → due time (ms on the monotonic clock); the heap may also hold stale entries for a key. */
  readonly #due = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;
  #armedFor = Number.POSITIVE_INFINITY;

  /** `fire` is called once per key when its time comes; `clock` is the monotonic clock the due times are on. */
  constructor(fire: (key: string) => void, clock: Pick<Clock, 'now'> = systemClock) {
    this.#fire = fire;
    this.#clock = clock;
  }

  /** When the one timer fires (ms on the schedule's clock), or null when none is armed (nothing waits). */
  get armedFor(): number | null {
    return this.#timer === null ? null : this.#armedFor;
  }

  get size(): number {
    return this.#due.size;
  }

  /** When `key` is due (ms), or undefined when it waits for nothing. */
  dueAt(key: string): number | undefined {
    return this.#due.get(key);
  }

  has(key: string): boolean {
    return this.#due.has(key);
  }

  /** Schedules `key` at `at`; a key already waiting keeps its time. */
  add(key: string, at: number): void {
    if (this.#due.has(key)) return;
    this.#due.set(key, at);
    this.#push({ key, at });
    if (this.#heap.length > 64 && this.#heap.length > 2 * this.#due.size) this.#rebuild();
    this.#arm();
  }

  cancel(key: string): void {
    if (this.#due.delete(key)) this.#arm();
  }

  clear(): void {
    this.#due.clear();
    this.#heap.length = 0;
    this.#arm();
  }

  #arm(): void {
    while (this.#heap.length > 0 && this.#due.get(this.#heap[0]!.key) !== this.#heap[0]!.at) this.#pop();
    const next = this.#heap[0]?.at ?? Number.POSITIVE_INFINITY;
    if (next === this.#armedFor) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#armedFor = next;
    if (next === Number.POSITIVE_INFINITY) return;
    this.#timer = setTimeout(() => this.#run(next), Math.max(0, next - this.#clock.now()));
    this.#timer.unref();
  }

  /** Fires every job due by now, or by the time the timer was armed for (a test clock may stand still). */
  #run(armedFor: number): void {
    this.#timer = null;
    this.#armedFor = Number.POSITIVE_INFINITY;
    const until = Math.max(this.#clock.now(), armedFor);
    const due: string[] = [];
    while (this.#heap.length > 0 && this.#heap[0]!.at <= until) {
      const { key, at } = this.#pop();
      if (this.#due.get(key) !== at) continue;
      this.#due.delete(key);
      due.push(key);
    }
    this.#arm();
    for (const key of due) this.#fire(key);
  }

  #push(entry: Entry): void {
    const heap = this.#heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= entry.at) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  #pop(): Entry {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && heap[right]!.at < heap[left]!.at ? right : left;
        if (heap[child]!.at >= last.at) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }

  /** Drops stale entries when they outnumber the live ones. */
  #rebuild(): void {
    const live = [...this.#due].map(([key, at]) => ({ key, at }));
    this.#heap.length = 0;
    for (const entry of live) this.#push(entry);
  }
}
