/**
 * Small terminal prompts of the `tally` commands: whether a stream is a terminal, one line or all of stdin, and
 * a line typed without echo (secrets).
 */
import type { CommandIo } from './command.js';
import { UsageError } from './command.js';

/** Whether a stream is an interactive terminal. */
export function isTty(stream: unknown): boolean {
  return Boolean((stream as { isTTY?: boolean } | null)?.isTTY);
}

function abortError(): Error {
  const error = new Error('Cancelled.');
  error.name = 'AbortError';
  return error;
}

/**
 * Reads stdin chunk by chunk: `take` sees each chunk and may finish with a value (`done`) or an error (`fail`);
 * at the end of input the value is `atEnd()`. An error of stdin or a cancelled command fails it. Whichever comes
 * first, every listener is removed and stdin paused.
 */
function readStdin<T>(
  io: Pick<CommandIo, 'stdin' | 'signal'>,
  take: (chunk: Buffer, done: (value: T) => void, fail: (error: Error) => void) => void,
  atEnd: () => T,
): Promise<T> {
  const { stdin, signal } = io;
  return new Promise((resolve, reject) => {
    const finish = (outcome: { value: T } | { error: Error }) => {
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      stdin.removeListener('error', onError);
      signal.removeEventListener('abort', onAbort);
      stdin.pause();
      if ('error' in outcome) reject(outcome.error);
      else resolve(outcome.value);
    };
    const onData = (chunk: Buffer | string) =>
      take(
        typeof chunk === 'string' ? Buffer.from(chunk) : chunk,
        (value) => finish({ value }),
        (error) => finish({ error }),
      );
    const onEnd = () => finish({ value: atEnd() });
    const onError = (error: Error) => finish({ error });
    const onAbort = () => finish({ error: abortError() });
    if (signal.aborted) return onAbort();
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
    stdin.resume();
  });
}

/** Reads one line (without its line break) from stdin; null at end of input. */
export function readLine(io: Pick<CommandIo, 'stdin' | 'signal'>): Promise<string | null> {
  let buffer = '';
  return readStdin<string | null>(
    io,
    (chunk, done) => {
      buffer += chunk.toString();
      const newline = buffer.search(/\r?\n/);
      if (newline >= 0) done(buffer.slice(0, newline));
    },
    () => (buffer.length > 0 ? buffer : null),
  );
}

/** Reads all of stdin as text (for `--secret-stdin` and pipes). */
export function readAll(io: Pick<CommandIo, 'stdin' | 'signal'>, maxBytes = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  return readStdin(
    io,
    (chunk, _done, fail) => {
      size += chunk.length;
      if (size > maxBytes) return fail(new UsageError('stdin is too large for a secret.'));
      chunks.push(chunk);
    },
    () => Buffer.concat(chunks).toString('utf8'),
  );
}

interface RawModeStream {
  setRawMode?: (mode: boolean) => unknown;
}

/**
 * Reads a line from a terminal without echoing it: raw mode, our own handling of Enter, Backspace,
 * Ctrl+C and Ctrl+D. Nothing typed is ever written anywhere.
 */
export function readHidden(io: Pick<CommandIo, 'stdin' | 'stderr' | 'signal'>, prompt: string): Promise<string> {
  const { stdin, stderr, signal } = io;
  const raw = stdin as unknown as RawModeStream;
  if (typeof raw.setRawMode !== 'function') {
    return Promise.reject(new UsageError('This terminal cannot hide input: pass the secret with --secret-stdin.'));
  }
  const setRawMode = raw.setRawMode.bind(stdin);
  return new Promise((resolve, reject) => {
    const chars: string[] = [];
    let escape = false;
    const finish = (error?: Error) => {
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      if (error) reject(error);
      else resolve(chars.join(''));
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (escape) {
          // Skip the rest of an arrow-key or similar escape sequence.
          if (/[A-Za-z~]/.test(ch)) escape = false;
          continue;
        }
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003') return finish(abortError());
        if (ch === '\u0004') {
          if (chars.length === 0) return finish();
          continue;
        }
        if (ch === '\u007f' || ch === '\b') {
          chars.pop();
          continue;
        }
        if (ch === '\u0015') {
          chars.length = 0;
          continue;
        }
        if (ch === '\u001b') {
          escape = true;
          continue;
        }
        if (ch < ' ') continue;
        chars.push(ch);
      }
    };
    const onEnd = () => finish();
    const onAbort = () => finish(abortError());
    if (signal.aborted) return reject(abortError());
    stderr.write(prompt);
    setRawMode(true);
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
    stdin.resume();
  });
}
