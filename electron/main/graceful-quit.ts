/**
 * Quitting waits for the core to stop (receiver closed, downloads paused with their part files kept,
 * journal flushed), but never forever: after `timeoutMs` the app quits anyway.
 */
import { describeError } from './log.js';
import type { Log } from './log.js';

export interface QuitApp {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
}

export const QUIT_TIMEOUT_MS = 5_000;

/**
 * Holds the first quit until `stop()` settles or times out, then quits for real. `onQuitting` runs
 * first (e.g. to let the popover close instead of hiding).
 */
export function installGracefulQuit(options: {
  app: QuitApp;
  stop: () => Promise<void>;
  timeoutMs?: number;
  onQuitting?: () => void;
  log?: Log;
}): void {
  const log = options.log ?? ((line: string) => console.error(`[quit] ${line}`));
  let state: 'running' | 'stopping' | 'stopped' = 'running';
  options.app.on('before-quit', (event) => {
    if (state === 'stopped') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    options.onQuitting?.();
    const timeoutMs = options.timeoutMs ?? QUIT_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const stopped = options.stop().then(
      () => 'stopped' as const,
      (error: unknown) => {
        log(`the core did not stop cleanly: ${describeError(error)}`);
        return 'failed' as const;
      },
    );
    void Promise.race([stopped, timeout]).then((outcome) => {
      clearTimeout(timer);
      if (outcome === 'timeout') log(`the core did not stop within ${timeoutMs} ms; quitting anyway`);
      state = 'stopped';
      options.app.quit();
    });
  });
}
