/**
 * When each waiting job gets its next attempt. One timer, armed for the earliest due job, whatever the number of
 * jobs waiting: 5,000 recordings retrying against a dead host cost one timer and no CPU between attempts (a timer
 * per job made the event loop juggle thousands of them). A binary min-heap orders the due times; cancelled or
 * rescheduled entries are dropped lazily when they reach the top. Due times are on the monotonic clock (core/time.ts):
 * a wall-clock step neither fires every retry at once nor freezes them.
 */
import { systemClock } from '../time.js';

interface Entry {
  key: string;
  at: number;
}

export class RetrySchedule {
  readonly #fire: (key: string) => void;
  readonly #now: () => number;
  readonly #heap: Entry[] = [];
  /** key → due time (ms on the monotonic clock); the heap may also hold stale entries for a key. */
  readonly #due = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;
  #armedFor = Number.POSITIVE_INFINITY;

  /** `fire` is called once per job when its time comes; `now` is the clock the due times are on. */
  constructor(fire: (key: string) => void, now: () => number = systemClock.now) {
    this.#fire = fire;
    this.#now = now;
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
    this.#timer = setTimeout(() => this.#run(next), Math.max(0, next - this.#now()));
    this.#timer.unref();
  }

  /** Fires every job due by now, or by the time the timer was armed for (a test clock may stand still). */
  #run(armedFor: number): void {
    this.#timer = null;
    this.#armedFor = Number.POSITIVE_INFINITY;
    const until = Math.max(this.#now(), armedFor);
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
