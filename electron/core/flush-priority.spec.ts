import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { FlushPriority } from './flush-priority.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets every already-queued callback and promise job run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('FlushPriority', () => {
  it('holds a background flush while an urgent one runs, and runs it right after', async () => {
    const order = new FlushPriority(60_000);
    const commit = deferred();
    const urgent = order.urgent(() => commit.promise);
    let ran = false;
    const background = order.background(async () => {
      ran = true;
    });
    await settle();
    await settle();
    expect(order.busy).toBe(true);
    expect(ran).toBe(false);
    commit.resolve();
    await urgent;
    await background;
    expect(ran).toBe(true);
    expect(order.busy).toBe(false);
  });

  it('runs background flushes one at a time, in the order they were asked for', async () => {
    const order = new FlushPriority();
    const first = deferred();
    const events: string[] = [];
    const a = order.background(async () => {
      events.push('a start');
      await first.promise;
      events.push('a end');
    });
    const b = order.background(async () => {
      events.push('b');
    });
    await settle();
    expect(events).toEqual(['a start']);
    first.resolve();
    await Promise.all([a, b]);
    expect(events).toEqual(['a start', 'a end', 'b']);
  });

  it('defers a background flush no longer than its bound while urgent ones keep coming', async () => {
    const order = new FlushPriority(20);
    const commit = deferred();
    const urgent = order.urgent(() => commit.promise);
    await order.background(() => Promise.resolve());
    expect(order.busy).toBe(true);
    commit.resolve();
    await urgent;
  });

  it("holds another thread's background flush while this thread's urgent one runs (shared count, no message)", async () => {
    const order = new FlushPriority(60_000);
    const commit = deferred();
    const urgent = order.urgent(() => commit.promise);
    // A real worker thread (as the download engine's) builds its order on this thread's count, and says when its
    // background flush runs. The count crosses as shared memory: nothing is sent to it after it started.
    const worker = new Worker(new URL('../../tests/support/background-flush-thread.ts', import.meta.url), {
      execArgv: ['--import', 'tsx'],
      workerData: { count: order.urgentCount },
    });
    try {
      const said: string[] = [];
      worker.on('message', (m: string) => said.push(m));
      const [first] = (await once(worker, 'message')) as [string];
      expect(first).toBe('asked');
      // Held, its flush has not run by the time it answers a ping (messages keep their order).
      worker.postMessage('ping');
      await once(worker, 'message');
      expect(said).toEqual(['asked', 'pong']);
      const ran = once(worker, 'message');
      commit.resolve();
      await urgent;
      expect(await ran).toEqual(['ran']);
      expect(order.busy).toBe(false);
    } finally {
      await worker.terminate();
    }
  });

  it('a failed background flush does not stop the ones after it', async () => {
    const order = new FlushPriority();
    const failed = order.background(() => Promise.reject(new Error('EIO')));
    await expect(failed).rejects.toThrow('EIO');
    await expect(order.background(() => Promise.resolve('ok'))).resolves.toBe('ok');
  });
});
