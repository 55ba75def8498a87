/** What a `tally` sub-command is: its IO, its module shape, usage errors, and listen errors said in one line. */
import { ConfigError } from '../core/errors.js';
import type { SecretStore } from '../core/credentials.js';

/** The shape every `tally` sub-command module exports. Commands are imported lazily to keep start-up fast. */
export interface CommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); long-running commands await it. */
  signal: AbortSignal;
  /**
   * Where secrets are kept: unset, the OS keychain (bin/cli never sets it, so the CLI keeps secrets nowhere
   * else); specs hand in an in-memory store or one that refuses like a computer without a keychain.
   */
  secrets?: SecretStore;
}

export interface Command {
  /** Full `--help` text of the command. */
  help: string;
  /** Runs the command; resolves to the exit code (0 ok, 1 service/network error, 2 usage). */
  run(argv: string[], io: CommandIo): Promise<number>;
}

/** A usage error: exit code 2 with the message and a pointer to `--help`. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * Turns a server's failure to listen into one line naming the port and the flag that sets it (instead of an
 * "unexpected internal error"); other errors pass through unchanged.
 */
export function explainListenError(error: unknown, flagFor: (port: number) => string): unknown {
  const e = error as NodeJS.ErrnoException & { port?: number };
  const port = typeof e?.port === 'number' ? e.port : null;
  if (port === null) return error;
  const flag = flagFor(port);
  if (e.code === 'EADDRINUSE')
    return new ConfigError(`Port ${port} is already in use: choose another with ${flag} (0 picks a free one).`);
  if (e.code === 'EACCES')
    return new ConfigError(`Port ${port} needs administrator rights here: choose one above 1023 with ${flag}.`);
  if (e.code === 'EADDRNOTAVAIL')
    return new ConfigError(
      `This computer has no such address to listen on for port ${port}: check --host and ${flag}.`,
    );
  return error;
}
