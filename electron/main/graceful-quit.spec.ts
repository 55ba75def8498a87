import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeEvent } from '../../tests/fakes/electron.js';
import { installGracefulQuit } from './graceful-quit.js';

/** Plays Electron's quit: `quit()` emits before-quit and exits unless a listener prevents it. */
class FakeApp extends EventEmitter {
  exited = false;
  readonly exitedPromise: Promise<void>;
  #resolveExit!: () => void;
  constructor() {
    super();
    this.exitedPromise = new Promise((resolve) => (this.#resolveExit = resolve));
  }
  quit(): void {
    const event = fakeEvent();
    this.emit('before-quit', event);
    if (!event.defaultPrevented) {
      this.exited = true;
      this.#resolveExit();
    }
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('installGracefulQuit', () => {
  it('waits for the core to stop, then quits', async () => {
    const app = new FakeApp();
    let finishStop!: () => void;
    const order: string[] = [];
    installGracefulQuit({
      app,
      stop: () =>
        new Promise<void>((resolve) => {
          finishStop = () => {
            order.push('stopped');
            resolve();
          };
        }),
      onQuitting: () => order.push('quitting'),
      log: () => {},
    });
    app.quit();
    app.quit(); // a second Cmd+Q while stopping does not start a second stop
    expect(app.exited).toBe(false);
    finishStop();
    await app.exitedPromise;
    expect(order).toEqual(['quitting', 'stopped']);
  });

  it('quits anyway after the timeout when the core hangs', async () => {
    vi.useFakeTimers();
    const app = new FakeApp();
    const logs: string[] = [];
    installGracefulQuit({ app, stop: () => new Promise<void>(() => {}), timeoutMs: 5_000, log: (l) => logs.push(l) });
    app.quit();
    await vi.advanceTimersByTimeAsync(4_999);
    expect(app.exited).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await app.exitedPromise;
    expect(logs.join()).toContain('did not stop within 5000 ms');
  });

  it('quits when stopping fails, logging the error redacted', async () => {
    const app = new FakeApp();
    const logs: string[] = [];
    installGracefulQuit({
      app,
      stop: async () => Promise.reject(new Error('flush failed secret=abc123')),
      log: (l) => logs.push(l),
    });
    app.quit();
    await app.exitedPromise;
    expect(logs.join()).toContain('flush failed');
    expect(logs.join()).not.toContain('abc123');
  });
});
