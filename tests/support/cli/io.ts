/** Test helpers for driving `main()` in-process: captured stdout/stderr and waiting on printed lines. */
import { PassThrough } from 'node:stream';
import type { CommandIo } from '../../../electron/cli/command.js';
import type { SecretStore } from '../../../electron/core/credentials.js';

/**
 * A CommandIo whose output is captured; `stdout` stays readable for `firstLine`. `secrets` stands in for the OS
 * keychain (unset: the real one); `input`, when given, is all of stdin (a piped secret).
 */
export function captureIo(signal: AbortSignal, env: NodeJS.ProcessEnv = {}, secrets?: SecretStore, input?: string) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const stdin = new PassThrough();
  if (input !== undefined) stdin.end(input);
  const io: CommandIo = { stdout, stderr, stdin, env, signal, ...(secrets ? { secrets } : {}) };
  return { io, stdout, out: () => out, err: () => err };
}

/** Resolves with the first complete line written to `stream`. */
export function firstLine(stream: PassThrough): Promise<string> {
  return new Promise((resolve) => {
    let buffered = '';
    const onData = (c: Buffer) => {
      buffered += c.toString();
      const nl = buffered.indexOf('\n');
      if (nl !== -1) {
        stream.off('data', onData);
        resolve(buffered.slice(0, nl));
      }
    };
    stream.on('data', onData);
  });
}

/** Resolves with the first complete line written to `stream` that passes `test`, skipping the others. */
export function lineMatching(stream: PassThrough, test: (line: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let buffered = '';
    const onData = (c: Buffer) => {
      buffered += c.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (test(line)) {
          stream.off('data', onData);
          resolve(line);
          return;
        }
      }
    };
    stream.on('data', onData);
  });
}
