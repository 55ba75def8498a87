/**
 * The stall rule (issue 20): the idle timeout counts only silence, so a body trickled at a byte a second never
 * tripped it, and three such downloads held every slot while a normal recording waited behind them until the
 * service deleted it. Each window, a download that received less than the minimum rate, or that at its rate
 * cannot finish before the deadline, is stopped with StallError: its part is kept and it is retried later. The
 * deadline and the windows are on the monotonic clock (core/time.ts): a wall-clock step never makes a healthy
 * download "too late" (issue 30).
 */
import type { StallRule } from './download-options.js';
import { StallError } from './errors.js';
import type { ProgressMeter } from './progress.js';
import { systemClock } from '../time.js';

/** The host a stall message names: the download URL's, or a plain phrase for a URL that does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the download server';
  }
}

/**
 * Starts watching `meter` under `rule` for the download of `url`; `stop` is called with the StallError when the
 * rule trips. Returns the function that ends the watch (call it whatever the outcome).
 */
export function watchStall(
  rule: StallRule,
  meter: Pick<ProgressMeter, 'bytes' | 'total' | 'done'>,
  url: string,
  stop: (error: StallError) => void,
): () => void {
  const host = (): string => hostOf(url);
  const now = rule.now ?? systemClock.now;
  let before = meter.bytes;
  const timer = setInterval(() => {
    // Verifying a big file reads it for a while and receives nothing: not a stall.
    if (meter.done) return;
    const got = meter.bytes - before;
    before = meter.bytes;
    const rate = (got * 1000) / rule.windowMs;
    if (rate < rule.bytesPerSec) {
      stop(new StallError(host(), rate, 'slow'));
      return;
    }
    const left = meter.total !== null ? meter.total - meter.bytes : null;
    // Past the deadline nothing is too late: the origin decides whether the file is still there (issue 30).
    if (left !== null && left > 0 && rule.deadlineAt != null && now() < rule.deadlineAt) {
      const needMs = (left * 1000) / rate;
      if (now() + needMs > rule.deadlineAt) stop(new StallError(host(), rate, 'late'));
    }
  }, rule.windowMs);
  timer.unref();
  return () => clearInterval(timer);
}
